package reports

import (
	"context"
	"iter"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/partnerapi/partner-go/core"
)

// Attributes of the export spans.
const (
	attrReportID   = "partner.report.id"
	attrViewID     = "partner.report.view_id"
	attrPages      = "partner.export.pages"
	attrRows       = "partner.export.rows"
	attrPeakWindow = "partner.export.peak_window"
)

// exportTrace follows one export for its span: pages and rows read, and
// the rows counted in the rows-exported metric.
type exportTrace struct {
	t           *core.Client
	span        trace.Span
	pages, rows int64
	err         error
}

// startExportTrace starts the span "partner." + op of an export.
func startExportTrace(ctx context.Context, t *core.Client, op string, attrs ...attribute.KeyValue) (context.Context, *exportTrace) {
	ctx, span := t.StartSpan(ctx, op, attrs...)
	return ctx, &exportTrace{t: t, span: span}
}

// count counts the pages of seq.
func (e *exportTrace) count(seq iter.Seq2[*Page, error]) iter.Seq2[*Page, error] {
	return func(yield func(*Page, error) bool) {
		for p, err := range seq {
			if err == nil && p != nil {
				e.pages++
			}
			if !yield(p, err) {
				return
			}
		}
	}
}

// row notes one yielded row or error.
func (e *exportTrace) row(err error) {
	if err != nil {
		e.err = err
		return
	}
	e.rows++
}

// end ends the span with the pages and rows, and, for the export that
// reads the pages (window, its cap on page requests in flight, above 0),
// the peak window and the rows-exported metric. The export starts at its
// cap and only halves it on throttling, so the cap is its peak.
func (e *exportTrace) end(ctx context.Context, window int) {
	if e.span.IsRecording() {
		e.span.SetAttributes(attribute.Int64(attrPages, e.pages), attribute.Int64(attrRows, e.rows))
		if window > 0 {
			e.span.SetAttributes(attribute.Int(attrPeakWindow, window))
		}
	}
	if window > 0 {
		e.t.AddRowsExported(ctx, e.rows)
	}
	core.EndSpan(e.span, e.err)
}
