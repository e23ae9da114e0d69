package reports

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"iter"
	"slices"

	"go.opentelemetry.io/otel/attribute"

	"github.com/partnerapi/partner-go/internal/errs"
	"github.com/partnerapi/partner-go/reports/internal/export"
)

// Defaults of ExportOptions. The cap of 16 page requests in flight is a
// ceiling: an export sends 2 page requests and a probe before its first
// answer, and halves the number in flight on a 429 or 503 (whose retry
// and Retry-After are the client's retry policy). Lower it for a service
// that should never see more than a few concurrent queries from one
// client. The memory budget of 6 MiB holds one page of 10,000 rows of 10
// columns of about 22 bytes each, or two pages of shorter rows. What
// these values cost and gain, measured: BENCHMARKS.md (Reports, the
// defaults of ExportOptions).
const (
	DefaultExportPageSize    = MaxPageSize
	DefaultExportConcurrency = 16
	DefaultExportMaxMemory   = 6 << 20
)

// ExportOptions tune Export, ExportView and ExportCSV.
type ExportOptions struct {
	// PageSize is the number of rows per request, 1 to 10000; 0 means
	// DefaultExportPageSize.
	PageSize int64
	// Concurrency caps the page requests awaiting their answers at once;
	// 0 means DefaultExportConcurrency, 1 sends one request at a time.
	// A 429 or 503 answer halves the number in flight (once for the
	// requests already sent), which then grows back by one for every
	// that many pages answered; the retry itself, and its Retry-After,
	// are the client's retry policy. Whatever its value, what the
	// export holds is bounded by MaxMemory: answers further ahead wait
	// unread in their connections (at most 2 of them past the cap).
	Concurrency int
	// MaxMemory bounds the bytes of pages an export holds at once, read
	// and decoded: a page counts as twice its body (Content-Length) until
	// it is decoded, then as what it holds (its body, which its rows
	// keep, and its rows); 0 means DefaultExportMaxMemory. Pages are read
	// in order, the one being yielded first, as far ahead as the budget
	// allows; the answers beyond it wait unread in their connections. A
	// page larger than the budget is read alone.
	MaxMemory int64
	// Wait tunes the wait for the view.
	Wait WaitOptions
	// Progress, when set, is called after each page with the number of
	// rows yielded so far (with From, those before it included).
	Progress func(rows int64)
	// From, when set, goes on with an export that stopped: the rows of
	// From.ViewID not yielded before From, in order, read in pages of
	// From.PageSize (PageSize, when set, must be the same). Export then
	// neither prepares a view nor waits for one.
	From *Checkpoint
	// Checkpoint, when set, is called on the iterating goroutine with
	// where the export stands: after every page whose rows were all
	// yielded, and once more where the iteration stops early (an error,
	// or a break out of the loop, after the row it broke on). An export
	// From that checkpoint yields exactly the rows not yielded yet.
	Checkpoint func(Checkpoint)
}

// Export reads a whole report consistently: it prepares a view
// (PrepareExport), waits for it (WaitView) and streams every row of it
// (ExportView). Nothing is sent before the iteration starts. A view that
// fails is yielded as a *ViewError, as WaitView returns it.
func (s *Service) Export(ctx context.Context, reportID int64, opts ExportOptions) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		ctx, tr := s.startExportTrace(ctx, "reports.Export", attribute.Int64(attrReportID, reportID))
		defer tr.end(ctx)
		viewID, err := s.exportedView(ctx, reportID, opts)
		if viewID != 0 {
			tr.span.SetAttributes(attribute.Int64(attrViewID, viewID))
		}
		if err != nil {
			tr.err = err
			yield(Row{}, errs.Wrap(err, "reports: exporting report %d", reportID))
			return
		}
		for r, err := range s.exportView(ctx, viewID, opts, tr) {
			tr.row(err)
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}

// exportedView returns the view Export reads: opts.From's, or a new one
// once it is ready.
func (s *Service) exportedView(ctx context.Context, reportID int64, opts ExportOptions) (int64, error) {
	if opts.From != nil {
		return opts.From.ViewID, nil
	}
	viewID, err := s.PrepareExport(ctx, reportID)
	if err == nil {
		_, err = s.WaitView(ctx, viewID, opts.Wait)
	}
	return viewID, err
}

// ExportView streams every row of a prepared, successful view (POST
// /report/v1/view/{viewId}/data, page after page). Because a view never
// changes, it requests several pages ahead at once (see
// ExportOptions.Concurrency), and still yields the rows strictly in
// order.
//
// The interface gives no row count, so ExportView finds where the view
// ends with one-row probes (the first row of a page ahead: galloping,
// then bisecting) while it reads, and requests a whole page only when it
// knows the page holds rows or is at most 2 pages past the last one it
// knows: it sends at most 2 page requests past the last page, and
// cancels those in flight once it knows the end. A view of P pages costs
// at most P + ceil(log2 P) + 2 requests, probes included (retries not
// counted). A page that does not say endOfList is taken to have a next
// page.
//
// Stopping the iteration or cancelling ctx cancels the requests in flight
// and returns once their goroutines are gone. ExportOptions.Checkpoint
// tells where it stopped, and ExportOptions.From goes on from there.
func (s *Service) ExportView(ctx context.Context, viewID int64, opts ExportOptions) iter.Seq2[Row, error] {
	return s.exportView(ctx, viewID, opts, nil)
}

// exportView is ExportView, whose span tells parent (Export's, when not
// nil) the pages and the engine's facts as it ends.
func (s *Service) exportView(ctx context.Context, viewID int64, opts ExportOptions, parent *exportTrace) iter.Seq2[Row, error] {
	cp := Checkpoint{ViewID: viewID}
	if opts.From != nil {
		cp = *opts.From
		if err := cp.check(viewID); err != nil {
			return failed[Row](err)
		}
		if opts.PageSize != 0 && opts.PageSize != cp.PageSize {
			return failed[Row](fmt.Errorf("partner: reports: page size %d differs from the checkpoint's, %d", opts.PageSize, cp.PageSize))
		}
		opts.PageSize = cp.PageSize
	}
	if opts.PageSize == 0 {
		opts.PageSize = DefaultExportPageSize
	}
	size, err := pageSize(opts.PageSize, 0, DefaultExportPageSize)
	cp.PageSize = size
	if err == nil && opts.Concurrency < 0 {
		err = fmt.Errorf("partner: reports: concurrency must be 0 or more, got %d", opts.Concurrency)
	}
	if err == nil && opts.MaxMemory < 0 {
		err = fmt.Errorf("partner: reports: max memory must be 0 or more, got %d", opts.MaxMemory)
	}
	if err != nil {
		return failed[Row](err)
	}
	limit := opts.Concurrency
	if limit == 0 {
		limit = DefaultExportConcurrency
	}
	budget := opts.MaxMemory
	if budget == 0 {
		budget = DefaultExportMaxMemory
	}
	fetch := func(ctx context.Context, number, size int64, h export.Hooks) (export.Page[*Page], error) {
		ph := pageHooks{throttled: h.Throttled}
		if h.Ready != nil {
			ph.ready = func(size int64) error { return h.Ready(pageCost(size)) }
		}
		pg, held, err := s.viewPage(ctx, viewID, number, size, ph)
		if err != nil {
			return export.Page[*Page]{}, err
		}
		return export.Page[*Page]{Value: pg, Rows: len(pg.Rows), End: pg.EndOfList, Cost: held}, nil
	}
	fetch = fromPage(cp.NextPage, size, fetch)
	return func(yield func(Row, error) bool) {
		ctx, tr := s.startExportTrace(ctx, "reports.ExportView", attribute.Int64(attrViewID, viewID))
		tr.limit, tr.parent, tr.reads = limit, parent, true
		defer tr.end(ctx)
		for r, err := range checkpointRows(ctx, cp, opts, tr.count(export.Pages(ctx, size, limit, budget, fetch, &tr.stats))) {
			tr.row(err)
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}

// pageCost is what a page of size bytes on the wire (-1: unknown) is
// taken to hold read and decoded until it is: twice its body. Its rows
// and their value offsets take about 0.4 times the body for rows of 10
// columns of about 22 bytes each (BenchmarkDecodePage10k), more for
// shorter values; once decoded, the page counts what it holds.
func pageCost(size int64) int64 {
	if size < 0 {
		return -1
	}
	return 2 * size
}

// ExportCSV exports a report (Export) as CSV to w: a header row with the
// column names of the first row, then every row in the same column order;
// a column missing from a later row is written empty. It returns the
// number of rows written (the header not counted). An empty report writes
// nothing, as there is no row to take the column names from.
//
// With opts.From it goes on with a file that has its header: it writes
// the rows not written yet, without a header. opts.Checkpoint is called
// once the rows before the checkpoint are written to w, so that a caller
// keeping the checkpoint with w's length can go on from there.
func (s *Service) ExportCSV(ctx context.Context, reportID int64, w io.Writer, opts ExportOptions) (int64, error) {
	cw := csv.NewWriter(w)
	var header *columns
	var record []string
	var n int64
	if tell := opts.Checkpoint; tell != nil {
		opts.Checkpoint = func(cp Checkpoint) {
			// A write that failed leaves w short of the checkpoint.
			if cw.Flush(); cw.Error() == nil {
				tell(cp)
			}
		}
	}
	for r, err := range s.Export(ctx, reportID, opts) {
		if err != nil {
			return n, err
		}
		if header == nil {
			header = r.cols
			if opts.From == nil {
				if err := cw.Write(header.names); err != nil {
					return n, err
				}
			}
			record = make([]string, len(header.names))
		}
		if r.cols == header || (r.cols != nil && slices.Equal(r.cols.names, header.names)) {
			for i := range record {
				record[i] = r.text(i)
			}
		} else {
			for i, name := range header.names {
				record[i] = r.Text(name)
			}
		}
		if err := cw.Write(record); err != nil {
			return n, err
		}
		n++
	}
	cw.Flush()
	return n, cw.Error()
}
