package core

import (
	"context"
	"net/http"
	"net/url"
	"testing"
)

// BenchmarkCallOptionsOff: what per-call control adds to a call that
// sets no option: the options' lookup in the context, the request id
// and its header.
func BenchmarkCallOptionsOff(b *testing.B) {
	base, _ := url.Parse("https://api.example.com")
	c := New(Config{BaseURL: base})
	ctx := context.Background()
	h := http.Header{}
	b.ReportAllocs()
	for b.Loop() {
		st := &call{c: c}
		if err := st.readOptions(ctx); err != nil {
			b.Fatal(err)
		}
		st.requestIDValue = newRequestID()
		st.requestID = st.requestIDValue[0]
		h[c.reqIDHeader] = st.requestIDValue
	}
}
