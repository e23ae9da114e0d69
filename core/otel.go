package core

// This file is the client's OpenTelemetry instrumentation: a span per
// operation (Do, Send) with a child span per HTTP attempt, the W3C trace
// context on requests to the service, the metrics of the calls, and the
// spans and counters the area packages add for their long operations. It
// uses the OpenTelemetry API only: without an SDK behind the providers
// every span is a no-op, and attributes are built only for a recording
// span or an enabled instrument.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"weak"

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

// scopeName is the instrumentation scope of the SDK's tracer and meter;
// their scope also carries scopeVersion and the schema URL of the
// semantic conventions the HTTP attributes follow (semconv.SchemaURL).
const scopeName = "github.com/partnerapi/partner-go"

// scopeVersion is the SDK's version, partner.Version.
const scopeVersion = version.Version

// Names of the SDK's own span attributes and metrics. The HTTP ones are
// the OpenTelemetry semantic conventions' (semconv, httpconv).
const (
	// attrOperation names the SDK operation ("reports.Export").
	attrOperation = "partner.operation"
	// attrOutcomeUnknown is set (true) on the span of a write that
	// failed in a way that leaves the service possibly having processed
	// it (IsOutcomeUnknown).
	attrOutcomeUnknown = "partner.outcome_unknown"
	// attrRetryWait is the wait before a retry, in seconds, on the span
	// of the attempt it preceded and on the operation's retry event.
	attrRetryWait = "partner.retry.wait"
	// attrRequestID is the id the SDK sent in the call's request id
	// header, on the operation's span.
	attrRequestID = "partner.request_id"
	// eventRetry is the event an operation span gets before each retry.
	eventRetry = "partner.retry"

	metricRetries       = "partner.client.retries"
	metricTokenFetches  = "partner.client.token.fetches"
	metricTokenFailures = "partner.client.token.failures"
	metricRetryBudget   = "partner.client.retry_budget.remaining"
)

// outcomeUnknownText is the status description of a span whose write may
// have been processed.
const outcomeUnknownText = "outcome unknown: the service may have processed the call"

// telemetry holds a client's tracer, propagator and instruments; shared
// by the Clients WithTokens makes.
type telemetry struct {
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	duration metric.Float64Histogram
	retries  metric.Int64Counter
	fetches  metric.Int64Counter
	failures metric.Int64Counter
	meter    metric.Meter
	// names holds the span names of the operations started so far
	// ("partner." + op), up to maxSpanNames (spanName).
	namesMu sync.RWMutex
	names   map[string]string
}

// newTelemetry builds the instruments of cfg's providers (the global ones
// when nil), and the retry budget's gauge when there is a budget.
func newTelemetry(cfg *Config, budget *retryBudget) *telemetry {
	tp, mp := cfg.TracerProvider, cfg.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(scopeName, metric.WithInstrumentationVersion(scopeVersion), metric.WithSchemaURL(semconv.SchemaURL))
	tracer := tp.Tracer(scopeName, trace.WithInstrumentationVersion(scopeVersion), trace.WithSchemaURL(semconv.SchemaURL))
	t := &telemetry{tracer: tracer, prop: otel.GetTextMapPropagator(), meter: m}
	// The API returns a working no-op instrument beside any error (a bad
	// name or unit), which would be the SDK's own fault: ignored.
	t.duration, _ = m.Float64Histogram(httpconv.ClientRequestDuration{}.Name(), metric.WithUnit(httpconv.ClientRequestDuration{}.Unit()),
		metric.WithDescription("Duration of HTTP client requests (each attempt)."),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10))
	t.retries, _ = m.Int64Counter(metricRetries, metric.WithUnit("{retry}"),
		metric.WithDescription("Repeats of a request: retries for failures and the repeat after a 401."))
	t.fetches, _ = m.Int64Counter(metricTokenFetches, metric.WithUnit("{fetch}"),
		metric.WithDescription("Access token fetches and refreshes."))
	t.failures, _ = m.Int64Counter(metricTokenFailures, metric.WithUnit("{fetch}"),
		metric.WithDescription("Access token fetches and refreshes that failed."))
	if budget != nil {
		observeBudget(m, budget)
	}
	return t
}

// observeBudget registers the gauge of the budget's remaining tokens. The
// callback holds the budget weakly and is unregistered once the budget
// is collected, so that clients made and dropped do not pile up in a
// long-lived meter.
func observeBudget(m metric.Meter, budget *retryBudget) {
	g, err := m.Int64ObservableGauge(metricRetryBudget, metric.WithUnit("{token}"),
		metric.WithDescription("Tokens left in the client's retry budget."))
	if err != nil {
		return
	}
	wb := weak.Make(budget)
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		if b := wb.Value(); b != nil {
			o.ObserveInt64(g, int64(b.available()))
		}
		return nil
	}, g)
	if err != nil {
		return
	}
	runtime.AddCleanup(budget, func(r metric.Registration) { r.Unregister() }, reg)
}

// internalKind is the start option of the SDK's operation spans, made
// once: building it per call would allocate. An operation is internal:
// the client spans are its attempts', one per HTTP request, as the
// semantic conventions have it (an instrumented transport's span is the
// child of an attempt's).
var internalKind = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}

// startOp starts the span of the operation r belongs to (StartSpan),
// "partner.request" when r names none.
func (c *Client) startOp(ctx context.Context, r *Request) (context.Context, trace.Span) {
	if r.Op == "" {
		return c.tel.tracer.Start(ctx, "partner.request", internalKind...)
	}
	return c.StartSpan(ctx, r.Op)
}

// EndSpan ends the span of an operation (StartSpan, Do, Send) with err:
// the error status, and the outcome-unknown attribute when the service
// may have processed the call.
//
// Deprecated: end a span of one's own with its SetStatus and End; Do
// and Send end the spans they start.
// It stays for v1; the SDK's area packages reach it through
// internal/plumbing.
func EndSpan(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		if errors.Is(err, ErrOutcomeUnknown) || isOutcomeUnknownError(err) {
			span.SetAttributes(attribute.Bool(attrOutcomeUnknown, true))
			span.SetStatus(codes.Error, outcomeUnknownText)
		} else {
			span.SetStatus(codes.Error, errorType(err))
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
	}
	span.End()
}

// isOutcomeUnknownError reports an *Error marked OutcomeUnknown.
func isOutcomeUnknownError(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.OutcomeUnknown
}

// errorType is the error.type of err: the status code of a service's
// answer, a timeout or the end of the context by name, otherwise the Go
// type of the innermost error. Never the error's text, which may quote a
// URL.
func errorType(err error) string {
	var e *Error
	switch {
	case errors.As(err, &e):
		return strconv.Itoa(e.StatusCode)
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "timeout"
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return fmt.Sprintf("%T", err)
		}
		err = next
	}
}

// callTel is the telemetry state of one call (a field of call). Beside
// propagate and timed, it is filled only when timed.
type callTel struct {
	op        trace.Span // the operation's span
	opName    string
	template  string // url.template, "" for an absolute URL without one
	host      string // server.address
	port      int    // server.port, 0 when the URL names none
	propagate bool   // the request goes to the service: inject the trace context
	timed     bool   // the operation span records or the duration is measured
	attempt   trace.Span
	start     time.Time // of the current attempt
	ended     time.Time // end of the previous attempt
}

// initTel fills the call's telemetry state for r sent to u.
func (st *call) initTel(ctx context.Context, r *Request, u *url.URL, toService bool) {
	op := trace.SpanFromContext(ctx)
	st.tel = callTel{op: op, opName: r.Op, propagate: toService,
		timed: op.IsRecording() || st.c.tel.duration.Enabled(ctx)}
	if !st.tel.timed {
		return // nothing records: no attribute is built
	}
	if st.requestID != "" && op.IsRecording() {
		op.SetAttributes(attribute.String(attrRequestID, st.requestID))
	}
	tmpl := r.Route.template
	if tmpl == "" && r.URL == "" {
		tmpl, _, _ = strings.Cut(r.Path, "?")
		if !strings.HasPrefix(tmpl, "/") {
			tmpl = "/" + tmpl
		}
	}
	st.tel.template, st.tel.host = tmpl, u.Hostname()
	st.tel.port, _ = strconv.Atoi(u.Port())
}

// startAttempt starts the span of an attempt and injects the trace
// context into a request to the service.
func (st *call) startAttempt(req *http.Request, attempt int) {
	ct, tel := &st.tel, st.c.tel
	ctx := req.Context()
	var wait time.Duration
	if ct.timed {
		ct.start = time.Now()
		if attempt > 0 && !ct.ended.IsZero() {
			wait = ct.start.Sub(ct.ended)
		}
	}
	if attempt > 0 && tel.retries.Enabled(ctx) {
		tel.retries.Add(ctx, 1, metric.WithAttributes(attribute.String(attrOperation, ct.opName)))
	}
	if ct.op.IsRecording() {
		name := st.method
		if ct.template != "" {
			name += " " + ct.template
		}
		attrs := st.requestAttrs(make([]attribute.KeyValue, 0, 6))
		if attempt > 0 {
			attrs = append(attrs, semconv.HTTPRequestResendCountKey.Int(attempt),
				attribute.Float64(attrRetryWait, wait.Seconds()))
			ct.op.AddEvent(eventRetry, trace.WithAttributes(semconv.HTTPRequestResendCountKey.Int(attempt),
				attribute.Float64(attrRetryWait, wait.Seconds())))
		}
		ctx, ct.attempt = tel.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attrs...), trace.WithTimestamp(ct.start))
	}
	if ct.propagate {
		tel.prop.Inject(ctx, propagation.HeaderCarrier(req.Header))
	}
}

// attemptContext returns ctx, the context of a request of the current
// attempt, with the attempt's span in it when there is one (a recording
// operation), so that a transport that traces (otelhttp's) starts its
// span as the attempt's child and propagates a trace context that
// descends from it. Without a recording span it is ctx itself: no
// allocation.
func (st *call) attemptContext(ctx context.Context) context.Context {
	if st.tel.attempt == nil {
		return ctx
	}
	return trace.ContextWithSpan(ctx, st.tel.attempt)
}

// requestAttrs appends the attributes that describe the request: its
// method, host, port and url.template.
func (st *call) requestAttrs(attrs []attribute.KeyValue) []attribute.KeyValue {
	ct := &st.tel
	attrs = append(attrs, semconv.HTTPRequestMethodKey.String(st.method), semconv.ServerAddressKey.String(ct.host))
	if ct.port != 0 {
		attrs = append(attrs, semconv.ServerPortKey.Int(ct.port))
	}
	if ct.template != "" {
		attrs = append(attrs, semconv.URLTemplateKey.String(ct.template))
	}
	return attrs
}

// endAttempt ends the span of an attempt with its answer or error, and
// records its duration.
func (st *call) endAttempt(ctx context.Context, resp *http.Response, err error) {
	ct := &st.tel
	if !ct.timed {
		return
	}
	ct.ended = time.Now()
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	var errType string
	switch {
	case err != nil:
		errType = errorType(err)
	case status >= 400:
		errType = strconv.Itoa(status)
	}
	if tel := st.c.tel; tel.duration.Enabled(ctx) {
		attrs := st.requestAttrs(append(make([]attribute.KeyValue, 0, 7), attribute.String(attrOperation, ct.opName)))
		if status != 0 {
			attrs = append(attrs, semconv.HTTPResponseStatusCodeKey.Int(status))
		}
		if errType != "" {
			attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
		}
		tel.duration.Record(ctx, ct.ended.Sub(ct.start).Seconds(), metric.WithAttributes(attrs...))
	}
	if ct.attempt == nil {
		return
	}
	if status != 0 {
		ct.attempt.SetAttributes(semconv.HTTPResponseStatusCodeKey.Int(status))
	}
	if errType != "" {
		ct.attempt.SetAttributes(semconv.ErrorTypeKey.String(errType))
		ct.attempt.SetStatus(codes.Error, errType)
	}
	ct.attempt.End(trace.WithTimestamp(ct.ended))
	ct.attempt = nil
}

// StartSpan starts the span of an operation made of several requests
// (an export, a wait), named "partner." + op, kind internal, with attrs.
// End it with EndSpan.
//
// Deprecated: set Request.Op, which names the span Do and Send start
// for a call; an operation of several calls starts its own span with a
// tracer of the provider given as Config.TracerProvider
// (otel.GetTracerProvider() when none), and its calls' spans are that
// span's children.
// It stays for v1; the SDK's area packages reach it through
// internal/plumbing.
func (c *Client) StartSpan(ctx context.Context, op string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	ctx, span := c.tel.tracer.Start(ctx, c.tel.spanName(op), internalKind...)
	if span.IsRecording() {
		span.SetAttributes(attribute.String(attrOperation, op))
		span.SetAttributes(attrs...)
	}
	return ctx, span
}

// maxSpanNames bounds the span names a client keeps (telemetry.names):
// the SDK's operations and a few of one's own.
const maxSpanNames = 256

// spanName is the name of op's span, "partner." + op, built once per op
// rather than once per call.
func (t *telemetry) spanName(op string) string {
	t.namesMu.RLock()
	name, ok := t.names[op]
	t.namesMu.RUnlock()
	if ok {
		return name
	}
	name = "partner." + op
	t.namesMu.Lock()
	if len(t.names) < maxSpanNames {
		if t.names == nil {
			t.names = make(map[string]string)
		}
		t.names[op] = name
	}
	t.namesMu.Unlock()
	return name
}

// CountTokenFetch counts a token fetch of kind ("client_credentials",
// "refresh", "external"), and its failure when err is not nil.
//
// Deprecated: a TokenSource of one's own counts its fetches with an
// instrument of its own, from a meter of the provider given as
// Config.MeterProvider (otel.GetMeterProvider() when none).
// It stays for v1; the SDK's area packages reach it through
// internal/plumbing.
func (c *Client) CountTokenFetch(ctx context.Context, kind string, err error) {
	kindAttr := attribute.String("partner.token.kind", kind)
	c.tel.fetches.Add(ctx, 1, metric.WithAttributes(kindAttr))
	if err != nil {
		c.tel.failures.Add(ctx, 1, metric.WithAttributes(kindAttr, semconv.ErrorTypeKey.String(errorType(err))))
	}
}

// Meter returns the meter of the client's metrics (Config.MeterProvider,
// the global provider when it was not set), for an area's own
// instruments.
//
// Deprecated: make instruments with a meter, of one's own
// instrumentation scope, from the provider given as
// Config.MeterProvider (otel.GetMeterProvider() when none).
// It stays for v1; the SDK's area packages reach it through
// internal/plumbing.
func (c *Client) Meter() metric.Meter { return c.tel.meter }

// TracerProvider returns the provider the client's spans go to:
// Config.TracerProvider, nil when it was not set (the global provider).
//
// Deprecated: use the provider given as Config.TracerProvider
// (otel.GetTracerProvider() when none).
// It stays for v1; the SDK's area packages reach it through
// internal/plumbing.
func (c *Client) TracerProvider() trace.TracerProvider { return c.cfg.TracerProvider }
