package core

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"testing"
	"time"
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
		ctx, span := c.startOp(ctx, r)
		st := &call{c: c}
		st.initTel(ctx, r, req.URL, true)
		st.startAttempt(req.WithContext(ctx), 0)
		st.endAttempt(ctx, resp, nil)
		EndSpan(span, nil)
	}
}

// BenchmarkLogDebugOff: what a request's debug event costs when the
// client's logger does not log debug: nothing is built (0 allocs).
func BenchmarkLogDebugOff(b *testing.B) {
	base, _ := url.Parse("https://api.example.com")
	c := New(Config{BaseURL: base, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx := context.Background()
	st := &call{c: c, method: "GET", path: "/x"}
	b.ReportAllocs()
	for b.Loop() {
		st.logDebug(ctx, "partner: request done", nil, slog.Int("status", 200), slog.Duration("elapsed", time.Second))
	}
}
