package partner_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
)

// TestTracesNestUnderInstrumentedTransport: with the client's transport
// wrapped in otelhttp and the service behind otelhttp.NewHandler (the
// usual Go setup, W3C propagator), a SCIM.Get is the internal span
// partner.scim.Get over the SDK's client span of the attempt, over
// otelhttp's client span of the HTTP request; the traceparent on the wire
// names otelhttp's span, so the service's server span descends from the
// SDK's attempt. The token fetch nests the same way, and the SDK's
// operations made of others (partner.oauth.Token) are internal too.
func TestTracesNestUnderInstrumentedTransport(t *testing.T) {
	setGlobalPropagator(t, propagation.TraceContext{})
	te := newTelemetry(t)
	serverSpans := tracetest.NewSpanRecorder()
	f := fake.New()
	var mu sync.Mutex
	wire := map[string]string{} // the traceparent each path was sent with
	ts := httptest.NewServer(otelhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		wire[r.URL.Path] = r.Header.Get("traceparent")
		mu.Unlock()
		f.ServeHTTP(w, r)
	}), "service",
		otelhttp.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(serverSpans))),
		otelhttp.WithPropagators(propagation.TraceContext{})))
	defer ts.Close()
	f.SetURL(ts.URL)
	id, err := f.AddUser(fake.User{UserName: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	transport := otelhttp.NewTransport(http.DefaultTransport, otelhttp.WithTracerProvider(te.tp),
		otelhttp.WithPropagators(propagation.TraceContext{}))
	c, err := partner.New(append(te.opts(), partner.WithConnection(f.Connection()),
		partner.WithHTTPClient(&http.Client{Transport: transport}))...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SCIM.Get(context.Background(), id); err != nil {
		t.Fatal(err)
	}

	if tok := te.one(t, "partner.oauth.Token"); tok.SpanKind() != trace.SpanKindInternal {
		t.Errorf("partner.oauth.Token: kind %v, want internal", tok.SpanKind())
	}
	for _, tc := range []struct{ op, path string }{
		{"partner.scim.Get", "/api/scim/v2/Users/" + id},
		{"partner.oauth.Request", "/oauth/token"}, // under partner.oauth.Token
	} {
		op := te.one(t, tc.op)
		if op.SpanKind() != trace.SpanKindInternal {
			t.Errorf("%s: kind %v, want internal", tc.op, op.SpanKind())
		}
		att := te.attempts(op)
		if len(att) != 1 || att[0].SpanKind() != trace.SpanKindClient {
			t.Fatalf("%s: spans under it %q, want the attempt's alone (otelhttp's under the attempt)", tc.op, spanNames(te.children(op)))
		}
		hops := te.children(att[0])
		if len(hops) != 1 || hops[0].SpanKind() != trace.SpanKindClient || !strings.HasPrefix(hops[0].Name(), "HTTP ") {
			t.Fatalf("%s: spans under the attempt %q, want otelhttp's client span", tc.op, spanNames(hops))
		}
		hop := hops[0].SpanContext()
		mu.Lock()
		got := wire[tc.path]
		mu.Unlock()
		if want := "00-" + hop.TraceID().String() + "-" + hop.SpanID().String() + "-01"; got != want {
			t.Errorf("%s: traceparent on the wire %q, want %q (otelhttp's span, the attempt's child)", tc.op, got, want)
		}
		var server sdktrace.ReadOnlySpan
		for _, s := range serverSpans.Ended() {
			if s.Parent().SpanID() == hop.SpanID() {
				server = s
			}
		}
		if server == nil || server.SpanKind() != trace.SpanKindServer || server.SpanContext().TraceID() != op.SpanContext().TraceID() {
			t.Errorf("%s: no server span of the service under otelhttp's client span", tc.op)
		}
	}
}

// spanNames returns the names of spans.
func spanNames(spans []sdktrace.ReadOnlySpan) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name()
	}
	return out
}
