package core

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// traceHandler adds trace_id and span_id to the records logged while a
// span is active in the record's context.
type traceHandler struct{ slog.Handler }

// withTraceIDs returns l logging through traceHandler; l itself when it
// discards everything.
func withTraceIDs(l *slog.Logger) *slog.Logger {
	h := l.Handler()
	if h == slog.DiscardHandler {
		return l
	}
	if _, ok := h.(traceHandler); ok {
		return l
	}
	return slog.New(traceHandler{h})
}

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r = r.Clone()
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(attrs)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}
