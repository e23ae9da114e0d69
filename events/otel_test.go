package events_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/partnerapi/partner-go/events"
)

// TestHandlerSpan: a delivery is a server span with its event kind and
// answer, a child of the trace context the request carries, and Deliver
// runs inside it.
func TestHandlerSpan(t *testing.T) {
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	defer otel.SetTextMapPropagator(prev)
	sr := tracetest.NewSpanRecorder()
	var inside trace.SpanContext
	h := &events.Handler{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr)),
		Deliver: func(ctx context.Context, d *events.Delivery) error {
			inside = trace.SpanContextFromContext(ctx)
			return &events.StatusError{Status: http.StatusServiceUnavailable}
		},
	}
	req := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(`{"event":"object.create","object_id":"o-1"}`))
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	req.Header.Set("traceparent", parent)
	h.ServeHTTP(httptest.NewRecorder(), req)

	spans := sr.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	got := map[string]string{}
	for _, kv := range s.Attributes() {
		got[string(kv.Key)] = kv.Value.String()
	}
	if s.Name() != "partner.events.Handler" || s.SpanKind() != trace.SpanKindServer ||
		got["partner.event.kind"] != "object.create" || got["http.response.status_code"] != "503" || got["http.request.method"] != "POST" {
		t.Errorf("span %q kind %v attributes %v, want partner.events.Handler, server, object.create, 503", s.Name(), s.SpanKind(), got)
	}
	if s.Parent().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || s.Parent().SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("parent %v, want the request's traceparent", s.Parent())
	}
	if inside.SpanID() != s.SpanContext().SpanID() {
		t.Error("Deliver did not run inside the delivery's span")
	}
}
