package reports

import (
	"context"
	"iter"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/partnerapi/partner-go/internal/plumbing"
	"github.com/partnerapi/partner-go/reports/internal/export"
)

// Attributes of the export spans.
const (
	attrReportID    = "partner.report.id"
	attrViewID      = "partner.report.view_id"
	attrViewState   = "partner.report.view_state"
	eventViewState  = "partner.report.view_state"
	attrPages       = "partner.export.pages"
	attrRows        = "partner.export.rows"
	attrPeakWindow  = "partner.export.peak_window"
	attrConcurrency = "partner.export.concurrency"
	attrThrottled   = "partner.export.throttled"
)

// exportTrace follows one export for its span: pages and rows read, what
// the engine reports of the pages in flight, and the rows counted in the
// rows-exported metric.
type exportTrace struct {
	counted     metric.Int64Counter // the rows-exported metric
	span        trace.Span
	pages, rows int64
	limit       int          // cap on page requests in flight, 0 until the pages are read
	stats       export.Stats // filled by the engine when the pages are read
	parent      *exportTrace // Export's trace, told the facts of the view's export
	reads       bool         // this export reads the pages (ExportView)
	err         error
}

// startExportTrace starts the span "partner." + op of an export.
func (s *Service) startExportTrace(ctx context.Context, op string, attrs ...attribute.KeyValue) (context.Context, *exportTrace) {
	ctx, span := plumbing.Of(s.t).StartSpan(ctx, op, attrs...)
	return ctx, &exportTrace{counted: s.rows, span: span}
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

// end ends the span with the pages and rows and, once the pages were
// read, the cap on page requests in flight, the most that were in flight
// at once (the peak window) and the halvings for throttling. The export
// that reads the pages counts its rows in the rows-exported metric and
// tells its parent (Export) its facts.
func (e *exportTrace) end(ctx context.Context) {
	if e.reads && e.rows > 0 {
		e.counted.Add(ctx, e.rows)
	}
	if e.parent != nil {
		e.parent.pages, e.parent.limit, e.parent.stats = e.pages, e.limit, e.stats
	}
	if e.span.IsRecording() {
		e.span.SetAttributes(attribute.Int64(attrPages, e.pages), attribute.Int64(attrRows, e.rows))
		if e.limit > 0 {
			e.span.SetAttributes(attribute.Int(attrConcurrency, e.limit),
				attribute.Int(attrPeakWindow, e.stats.PeakInFlight), attribute.Int(attrThrottled, e.stats.Throttled))
		}
	}
	plumbing.EndSpan(e.span, e.err)
}

// noteViewState adds a status read to the span of WaitView: an event
// with the state when it differs from the previous read's.
func noteViewState(span trace.Span, prev *ViewState, v *ViewStatus) {
	if v == nil || !span.IsRecording() || v.Status == *prev {
		return
	}
	*prev = v.Status
	span.AddEvent(eventViewState, trace.WithAttributes(attribute.String(attrViewState, string(v.Status))))
}

// endViewWait ends the span of WaitView with the last state read.
func endViewWait(span trace.Span, v *ViewStatus, err error) {
	if v != nil && span.IsRecording() {
		span.SetAttributes(attribute.String(attrViewState, string(v.Status)))
	}
	plumbing.EndSpan(span, err)
}
