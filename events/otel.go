package events

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/httpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/partnerapi/partner-go/internal/version"
)

// scopeName is the instrumentation scope of the Handler's tracer and
// meter.
const scopeName = "github.com/partnerapi/partner-go"

var (
	serverKind   = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
	internalKind = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
)

// deliveryTrace is the telemetry of one delivery a Handler receives: its
// span, the server span of the request (the delivery's own, or the one
// an instrumented handler in front of the Handler opened), and the
// duration it records.
type deliveryTrace struct {
	h      *Handler
	r      *http.Request
	span   trace.Span      // "partner.events.Handler"
	server trace.Span      // the request's server span: span, or the outer one
	own    bool            // server is span
	rec    *statusRecorder // nil when nothing records
	dur    metric.Float64Histogram
	start  time.Time
	// allowed is set once the delivery's path passed the secret check.
	allowed bool
}

// traceDelivery starts the span "partner.events.Handler" of a delivery
// and returns the writer and request the handler goes on with. On its
// own, the Handler opens the request's server span, a child of the trace
// context the request carries, and records http.server.request.duration.
// Behind a handler that opened the request's span already (an
// instrumented handler, such as otelhttp's, puts it in the request's
// context), the Handler's span is an internal child of that one, which
// keeps the server span's role and records the duration itself: there is
// one server span per request.
func (h *Handler) traceDelivery(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request, *deliveryTrace) {
	tp := h.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	tracer := tp.Tracer(scopeName, trace.WithInstrumentationVersion(version.Version), trace.WithSchemaURL(semconv.SchemaURL))
	dt := &deliveryTrace{h: h, r: r, start: time.Now()}
	ctx := r.Context()
	outer := trace.SpanFromContext(ctx)
	var span trace.Span
	if sc := outer.SpanContext(); sc.IsValid() && !sc.IsRemote() {
		ctx, span = tracer.Start(ctx, "partner.events.Handler", internalKind...)
		dt.server = outer
	} else {
		ctx = otel.GetTextMapPropagator().Extract(ctx, propagation.HeaderCarrier(r.Header))
		ctx, span = tracer.Start(ctx, "partner.events.Handler", serverKind...)
		dt.server, dt.own = span, true
		dt.dur = h.durationHistogram(ctx)
	}
	dt.span = span
	if span.IsRecording() {
		span.SetAttributes(attribute.String("partner.operation", "events.Handler"))
	}
	if dt.server.IsRecording() {
		if dt.own { // an instrumented handler in front has set its own
			dt.server.SetAttributes(semconv.HTTPRequestMethodKey.String(method(r)), semconv.URLSchemeKey.String(scheme(r)))
		}
		if h.Secrets != nil {
			// An instrumented handler in front may have recorded the
			// path, whose last segment is a subscriber secret.
			dt.server.SetAttributes(semconv.URLPathKey.String(maskSecretPath(r.URL.Path)))
		}
	}
	if span.IsRecording() || dt.server.IsRecording() || dt.dur != nil {
		dt.rec = &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		w = dt.rec
	}
	r = r.WithContext(ctx)
	dt.r = r
	return w, r, dt
}

// durationHistogram returns the instrument of http.server.request.duration
// of the Handler's meter, or nil when it records nothing.
func (h *Handler) durationHistogram(ctx context.Context) metric.Float64Histogram {
	m := h.meter
	if h.MeterProvider != nil || m == nil {
		mp := h.MeterProvider
		if mp == nil {
			mp = otel.GetMeterProvider()
		}
		m = mp.Meter(scopeName, metric.WithInstrumentationVersion(version.Version), metric.WithSchemaURL(semconv.SchemaURL))
	}
	d := httpconv.ServerRequestDuration{}
	hist, err := m.Float64Histogram(d.Name(), metric.WithUnit(d.Unit()), metric.WithDescription(d.Description()),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10))
	if err != nil || !hist.Enabled(ctx) {
		return nil
	}
	return hist
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

// end ends the span with the answer's status, puts the route on the
// server span and records the duration.
func (dt *deliveryTrace) end() {
	defer dt.span.End()
	if dt.rec == nil {
		return
	}
	status := dt.rec.status
	route := dt.h.route(dt.r, dt.allowed)
	if dt.span.IsRecording() {
		dt.span.SetAttributes(semconv.HTTPResponseStatusCodeKey.Int(status))
		if status >= 500 {
			dt.span.SetStatus(codes.Error, http.StatusText(status))
		}
	}
	if route != "" && dt.server.IsRecording() {
		dt.server.SetAttributes(semconv.HTTPRouteKey.String(route))
	}
	if dt.own && status >= 500 {
		dt.span.SetAttributes(semconv.ErrorTypeKey.String(strconv.Itoa(status)))
	}
	if dt.dur == nil {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, semconv.HTTPRequestMethodKey.String(method(dt.r)), semconv.URLSchemeKey.String(scheme(dt.r)),
		semconv.HTTPResponseStatusCodeKey.Int(status))
	if route != "" {
		attrs = append(attrs, semconv.HTTPRouteKey.String(route))
	}
	if status >= 500 {
		attrs = append(attrs, semconv.ErrorTypeKey.String(strconv.Itoa(status)))
	}
	dt.dur.Record(dt.r.Context(), time.Since(dt.start).Seconds(), metric.WithAttributes(attrs...))
}

// route returns the http.route of a delivery: a template of its path
// that never holds a secret, or "" when the Handler cannot tell one
// (semconv: leave it out rather than put a path of unbounded variety).
// The pattern of the http.ServeMux that routed the request comes first
// ("/hooks/{kind}/{secret}"; with Secrets, a literal last segment, which
// a pattern naming one path would have to hold, reads {secret}). Else the
// route Routes names ("/hooks/object.update"), followed by /{secret} when
// the path went on past it; else, for a delivery whose secret the
// Handler's Secrets allowed, its path with the secret as {secret}.
func (h *Handler) route(r *http.Request, allowed bool) string {
	if p := r.Pattern; p != "" {
		// [METHOD ][HOST]/[PATH]
		if i := strings.IndexAny(p, " \t"); i >= 0 {
			p = strings.TrimLeft(p[i:], " \t")
		}
		if i := strings.IndexByte(p, '/'); i > 0 {
			p = p[i:]
		}
		if i := strings.LastIndexByte(p, '/'); h.Secrets != nil && i >= 0 && i < len(p)-1 && !strings.HasPrefix(p[i+1:], "{") {
			p = p[:i+1] + "{secret}"
		}
		return p
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	if _, ok := h.Routes.get(path); ok && path != "" {
		return path
	}
	parent := path[:max(strings.LastIndexByte(path, '/'), 0)]
	if _, ok := h.Routes.get(parent); ok || (allowed && h.Secrets != nil) {
		return parent + "/{secret}"
	}
	return ""
}

// method is the request's method as http.request.method reads it: a
// method of RFC 9110 or PATCH, else _OTHER, so that the attribute keeps
// few values whatever a client sends.
func method(r *http.Request) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return r.Method
	}
	return "_OTHER"
}

// scheme is the request's url.scheme: https when it came over TLS, else
// http (a proxy in front that ended TLS is not taken at its word).
func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
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
