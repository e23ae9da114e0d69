package core

import (
	"context"
	"net/http"
	"net/url"
	"testing"
)

// BenchmarkTelemetryHooks: what the telemetry adds to one call of one
// attempt with the default (global, no-op) providers: the operation
// span, the call's state, the attempt's start and end.
func BenchmarkTelemetryHooks(b *testing.B) {
	base, _ := url.Parse("https://api.example.com")
	c := New(Config{BaseURL: base})
	r := &Request{Op: "scim.Get", Method: "GET", Route: PathOf("/api/scim/v2/Users/{user_id}", "u-1")}
	req, _ := http.NewRequest("GET", "https://api.example.com/api/scim/v2/Users/u-1", nil)
	resp := &http.Response{StatusCode: 200}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ctx, span := c.tel.startOp(ctx, r)
		st := &call{c: c}
		st.initTel(ctx, r, req.URL, true)
		st.startAttempt(req.WithContext(ctx), 0)
		st.endAttempt(ctx, resp, nil)
		endSpan(span, nil)
	}
}
