package events

import (
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/partnerapi/partner-go/internal/version"
)

// scopeName is the instrumentation scope of the Handler's tracer.
const scopeName = "github.com/partnerapi/partner-go"

// deliveryTrace is the server span of one delivery a Handler receives.
type deliveryTrace struct {
	span trace.Span
	rec  *statusRecorder // nil when the span is not recording
}

// traceDelivery starts the span "partner.events.Handler" (kind server)
// of a delivery, as a child of the trace context the request carries,
// and returns the writer and request the handler goes on with.
func (h *Handler) traceDelivery(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request, *deliveryTrace) {
	tp := h.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	tracer := tp.Tracer(scopeName, trace.WithInstrumentationVersion(version.Version), trace.WithSchemaURL(semconv.SchemaURL))
	ctx, span := tracer.Start(ctx, "partner.events.Handler", trace.WithSpanKind(trace.SpanKindServer))
	dt := &deliveryTrace{span: span}
	if span.IsRecording() {
		span.SetAttributes(semconv.HTTPRequestMethodKey.String(r.Method), attribute.String("partner.operation", "events.Handler"))
		dt.rec = &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		w = dt.rec
	}
	return w, r.WithContext(ctx), dt
}

// delivery notes the parsed delivery: its kind and id.
func (dt *deliveryTrace) delivery(d *Delivery) {
	if !dt.span.IsRecording() {
		return
	}
	dt.span.SetAttributes(attribute.String("partner.event.kind", string(d.Event)))
	if d.DeliveryID != "" {
		dt.span.SetAttributes(attribute.String("partner.event.delivery_id", d.DeliveryID))
	}
}

// end ends the span with the answer's status.
func (dt *deliveryTrace) end() {
	if dt.rec != nil {
		dt.span.SetAttributes(attribute.Int("http.response.status_code", dt.rec.status))
		if dt.rec.status >= 500 {
			dt.span.SetStatus(codes.Error, http.StatusText(dt.rec.status))
		}
	}
	dt.span.End()
}

// statusRecorder remembers the status a handler answers.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController the writer underneath.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
