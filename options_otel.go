package partner

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// WithTracerProvider sets the OpenTelemetry tracer provider that receives
// the client's spans: one per operation ("partner.reports.Export", kind
// client) with a child per HTTP attempt, and one per token fetch. Without
// it the client uses the global provider (otel.GetTracerProvider) as it
// is when New runs; with no SDK installed the spans cost next to nothing.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(s *settings) { s.cfg.TracerProvider = tp }
}

// WithMeterProvider sets the OpenTelemetry meter provider that receives
// the client's metrics (http.client.request.duration, retries, token
// fetches and failures, the retry budget, rows exported, records loaded).
// Without it the client uses the global provider (otel.GetMeterProvider)
// as it is when New runs.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(s *settings) { s.cfg.MeterProvider = mp }
}
