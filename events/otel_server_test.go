package events_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/partnerapi/partner-go/events"
)

// receiverTelemetry records a receiver's spans and metrics.
type receiverTelemetry struct {
	sr     *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newReceiverTelemetry() *receiverTelemetry {
	te := &receiverTelemetry{sr: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	te.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(te.sr))
	te.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(te.reader))
	return te
}

// durations returns the attribute sets of http.server.request.duration's
// points, by instrumentation scope.
func (te *receiverTelemetry) durations(t *testing.T) map[string][]attribute.Set {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := te.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string][]attribute.Set{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == "http.server.request.duration" {
				for _, p := range h.DataPoints {
					out[sm.Scope.Name] = append(out[sm.Scope.Name], p.Attributes)
				}
			}
		}
	}
	return out
}

func spanAttr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

// noSecret fails t when a span's name or attribute holds secret.
func noSecret(t *testing.T, spans []sdktrace.ReadOnlySpan, secret string) {
	t.Helper()
	for _, s := range spans {
		if strings.Contains(s.Name(), secret) {
			t.Errorf("span name %q holds the secret", s.Name())
		}
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.String(), secret) {
				t.Errorf("span %q: %s holds the secret", s.Name(), kv.Key)
			}
		}
	}
}

const sdkScope = "github.com/partnerapi/partner-go"

// TestHandlerServerSpanRouteAndDuration: on its own, the receiver's
// server span carries url.scheme and http.route (the route's template,
// the subscriber secret as {secret}, never the secret), and the receiver
// records http.server.request.duration with them; a mux's pattern is the
// route when one routed the request; a refused delivery's path, which
// anyone may choose, gives no route.
func TestHandlerServerSpanRouteAndDuration(t *testing.T) {
	t.Parallel()
	te := newReceiverTelemetry()
	secret := events.NewSecret()
	h := &events.Handler{
		Secrets:        events.NewSecretSet(secret),
		TracerProvider: te.tp,
		MeterProvider:  te.mp,
		Deliver:        func(context.Context, *events.Delivery) error { return nil },
	}
	mux := http.NewServeMux()
	mux.Handle("POST /mux/{kind}/{secret}", h)
	body := `{"event":"object.create","object_id":"o-1"}`
	for _, tc := range []struct {
		handler    http.Handler
		path       string
		status     int
		route      string
		secretPath bool
	}{
		{h, "/hooks/partner/" + string(secret), http.StatusNoContent, "/hooks/partner/{secret}", true},
		{mux, "/mux/object.create/" + string(secret), http.StatusNoContent, "/mux/{kind}/{secret}", true},
		{h, "/anything/guessed", http.StatusUnauthorized, "", false},
	} {
		te.sr.Reset()
		w := httptest.NewRecorder()
		tc.handler.ServeHTTP(w, httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(body)))
		if w.Code != tc.status {
			t.Fatalf("%s: %d, want %d", tc.path, w.Code, tc.status)
		}
		spans := te.sr.Ended()
		if len(spans) != 1 || spans[0].SpanKind() != trace.SpanKindServer {
			t.Fatalf("%s: %d spans, want the receiver's server span", tc.path, len(spans))
		}
		s := spans[0]
		for k, want := range map[string]string{"url.scheme": "http", "http.route": tc.route, "http.request.method": "POST"} {
			if got := spanAttr(s, k); got != want {
				t.Errorf("%s: %s = %q, want %q", tc.path, k, got, want)
			}
		}
		noSecret(t, spans, string(secret))
	}
	got := te.durations(t)[sdkScope]
	if len(got) != 3 {
		t.Fatalf("http.server.request.duration: %d points, want 3: %v", len(got), got)
	}
	routes := map[string]bool{}
	for _, set := range got {
		r, _ := set.Value("http.route")
		routes[r.String()] = true
		if s, _ := set.Value("url.scheme"); s.String() != "http" {
			t.Errorf("duration point %v: url.scheme %q", set, s.String())
		}
		if m, _ := set.Value("http.request.method"); m.String() != "POST" {
			t.Errorf("duration point %v: method %q", set, m.String())
		}
		if st, ok := set.Value("http.response.status_code"); !ok || st.AsInt64() == 0 {
			t.Errorf("duration point %v: no status", set)
		}
	}
	for _, r := range []string{"/hooks/partner/{secret}", "/mux/{kind}/{secret}", ""} {
		if !routes[r] {
			t.Errorf("no duration point with http.route %q: %v", r, routes)
		}
	}
}

// TestHandlerBehindOtelhttp: behind otelhttp.NewHandler the request has
// one server span, otelhttp's, child of the traceparent the service
// sent; the receiver's span is an internal child of it (Deliver runs in
// it), puts http.route on it and masks the secret in the url.path
// otelhttp recorded; otelhttp alone records http.server.request.duration.
func TestHandlerBehindOtelhttp(t *testing.T) {
	t.Parallel()
	te := newReceiverTelemetry()
	secret := events.NewSecret()
	var inside trace.SpanContext
	h := &events.Handler{
		Secrets:        events.NewSecretSet(secret),
		TracerProvider: te.tp,
		MeterProvider:  te.mp,
		Deliver: func(ctx context.Context, _ *events.Delivery) error {
			inside = trace.SpanContextFromContext(ctx)
			return nil
		},
	}
	srv := otelhttp.NewHandler(h, "receiver", otelhttp.WithTracerProvider(te.tp), otelhttp.WithMeterProvider(te.mp),
		otelhttp.WithPropagators(propagation.TraceContext{}))
	req := httptest.NewRequest(http.MethodPost, "/hooks/partner/"+string(secret), strings.NewReader(`{"event":"object.create","object_id":"o-1"}`))
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	req.Header.Set("traceparent", parent)
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	if w.Code != http.StatusNoContent {
		t.Fatalf("status %d", w.Code)
	}

	var server, handler []sdktrace.ReadOnlySpan
	for _, s := range te.sr.Ended() {
		switch {
		case s.SpanKind() == trace.SpanKindServer:
			server = append(server, s)
		case s.Name() == "partner.events.Handler":
			handler = append(handler, s)
		}
	}
	if len(server) != 1 || server[0].InstrumentationScope().Name == sdkScope {
		t.Fatalf("%d server spans, want otelhttp's alone", len(server))
	}
	if len(handler) != 1 || handler[0].SpanKind() != trace.SpanKindInternal || handler[0].Parent().SpanID() != server[0].SpanContext().SpanID() {
		t.Fatalf("the receiver's span: %v, want one internal child of otelhttp's server span", handler)
	}
	if server[0].Parent().SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("otelhttp's span's parent %v, want the traceparent's span", server[0].Parent())
	}
	if inside.SpanID() != handler[0].SpanContext().SpanID() {
		t.Error("Deliver did not run inside the receiver's span")
	}
	if got := spanAttr(server[0], "http.route"); got != "/hooks/partner/{secret}" {
		t.Errorf("otelhttp's span: http.route %q, want /hooks/partner/{secret}", got)
	}
	if got := spanAttr(server[0], "url.path"); got != "/hooks/partner/***" {
		t.Errorf("otelhttp's span: url.path %q, want the secret masked", got)
	}
	noSecret(t, te.sr.Ended(), string(secret))
	d := te.durations(t)
	if len(d[sdkScope]) != 0 || len(d) != 1 {
		t.Errorf("http.server.request.duration by scope: %v; want otelhttp's alone", d)
	}
}
