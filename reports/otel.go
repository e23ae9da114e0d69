package reports

import (
	"context"

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

// page wraps a page getter to count the pages it returns.
func (e *exportTrace) page(get func(context.Context, int64) (*Page, error)) func(context.Context, int64) (*Page, error) {
	return func(ctx context.Context, n int64) (*Page, error) {
		p, err := get(ctx, n)
		if err == nil && p != nil {
			e.pages++
		}
		return p, err
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
// reads the pages (p not nil), the peak window and the rows-exported
// metric.
func (e *exportTrace) end(ctx context.Context, p *prefetcher) {
	if e.span.IsRecording() {
		e.span.SetAttributes(attribute.Int64(attrPages, e.pages), attribute.Int64(attrRows, e.rows))
		if p != nil {
			e.span.SetAttributes(attribute.Int(attrPeakWindow, p.peakWindow()))
		}
	}
	if p != nil {
		e.t.AddRowsExported(ctx, e.rows)
	}
	core.EndSpan(e.span, e.err)
}

// peakWindow is the largest congestion window the export reached.
func (p *prefetcher) peakWindow() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return int(max(p.peak, p.cwnd))
}
