package reports

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"iter"
	"slices"
	"sync"

	"github.com/partnerapi/partner-go/internal/transport"
)

// Defaults of ExportOptions.
const (
	DefaultExportPageSize    = MaxPageSize
	DefaultExportConcurrency = 16
)

// decodedPages caps the pages ExportView holds decoded at once (the one
// being yielded and those decoded ahead of it), whatever the number of
// requests in flight: a page that arrives further ahead waits, unread, in
// its connection. With 10,000-row pages of 10 columns this keeps an
// export's heap around 30 MB.
const decodedPages = 4

// ExportOptions tune Export, ExportView and ExportCSV.
type ExportOptions struct {
	// PageSize is the number of rows per request, 1 to 10000; 0 means
	// DefaultExportPageSize.
	PageSize int64
	// Concurrency is the number of page requests in flight at once; 0
	// means DefaultExportConcurrency, 1 reads one page after the other.
	// Whatever its value, at most 4 pages are held decoded at once: the
	// answers further ahead wait unread in their connections.
	Concurrency int
	// Wait tunes the wait for the view.
	Wait WaitOptions
	// Progress, when set, is called after each page with the number of
	// rows yielded so far.
	Progress func(rows int64)
}

// Export reads a whole report consistently: it prepares a view
// (PrepareExport), waits for it (WaitView) and streams every row of it
// (ExportView). Nothing is sent before the iteration starts.
func (s *Service) Export(ctx context.Context, reportID int64, opts ExportOptions) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		viewID, err := s.PrepareExport(ctx, reportID)
		if err == nil {
			_, err = s.WaitView(ctx, viewID, opts.Wait)
		}
		if err != nil {
			yield(Row{}, transport.Wrap(err, "reports: exporting report %d", reportID))
			return
		}
		for r, err := range s.ExportView(ctx, viewID, opts) {
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}

// ExportView streams every row of a prepared, successful view (POST
// /report/v1/view/{viewId}/data, page after page). Because a view never
// changes, it requests up to opts.Concurrency pages ahead at once, and
// still yields the rows strictly in order. Stopping the
// iteration or cancelling ctx cancels the requests in flight and returns
// once their goroutines are gone.
func (s *Service) ExportView(ctx context.Context, viewID int64, opts ExportOptions) iter.Seq2[Row, error] {
	if opts.PageSize == 0 {
		opts.PageSize = DefaultExportPageSize
	}
	size, err := pageSize(opts.PageSize, 0, DefaultExportPageSize)
	if err == nil && opts.Concurrency < 0 {
		err = fmt.Errorf("partner: reports: concurrency must be 0 or more, got %d", opts.Concurrency)
	}
	if err != nil {
		return failed[Row](err)
	}
	window := opts.Concurrency
	if window == 0 {
		window = DefaultExportConcurrency
	}
	return func(yield func(Row, error) bool) {
		ahead := newPrefetcher(ctx, window, func(ctx context.Context, n int64, gate func() error) (*Page, error) {
			return s.viewPage(ctx, viewID, n, size, gate)
		})
		defer ahead.close()
		for r, err := range rows(ctx, pages(ctx, 0, ahead.get), opts.Progress) {
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}

// prefetcher fetches pages ahead of the pager: asked for page n, it makes
// sure pages n to n+window-1 are requested, and waits for page n. A page
// is decoded only once it is less than decodedPages ahead of page n, so
// memory does not grow with the window. Pages past the last one may be
// requested for nothing; their answers (empty pages or errors) are never
// read.
type prefetcher struct {
	ctx    context.Context
	cancel context.CancelFunc
	fetch  func(ctx context.Context, n int64, gate func() error) (*Page, error)
	window int64
	wg     sync.WaitGroup

	mu      sync.Mutex
	cur     int64         // page the consumer waits for or reads
	advance chan struct{} // closed when cur moves

	next    int64 // next page to request
	end     int64 // page that said endOfList, or -1
	pending map[int64]chan fetched
}

type fetched struct {
	page *Page
	err  error
}

func newPrefetcher(ctx context.Context, window int, fetch func(ctx context.Context, n int64, gate func() error) (*Page, error)) *prefetcher {
	ctx, cancel := context.WithCancel(ctx)
	return &prefetcher{ctx: ctx, cancel: cancel, fetch: fetch, window: int64(window), end: -1,
		pending: map[int64]chan fetched{}, advance: make(chan struct{})}
}

// gate blocks the decoding of page m until m is less than decodedPages
// ahead of the consumer, or the export ends.
func (p *prefetcher) gate(m int64) error {
	for {
		p.mu.Lock()
		ok, ch := m < p.cur+decodedPages, p.advance
		p.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-p.ctx.Done():
			return p.ctx.Err()
		}
	}
}

// moveTo records that the consumer is done with the pages before n.
func (p *prefetcher) moveTo(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur = n
	close(p.advance)
	p.advance = make(chan struct{})
}

// get returns page n. The pager calls it for 0, 1, 2, ... in order, from
// one goroutine.
func (p *prefetcher) get(ctx context.Context, n int64) (*Page, error) {
	p.moveTo(n)
	for p.next < n+p.window && (p.end < 0 || p.next <= p.end) {
		m := p.next
		ch := make(chan fetched, 1) // never blocks the fetching goroutine
		p.pending[m] = ch
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			pg, err := p.fetch(p.ctx, m, func() error { return p.gate(m) })
			ch <- fetched{pg, err}
		}()
		p.next++
	}
	ch, ok := p.pending[n]
	if !ok {
		return nil, fmt.Errorf("partner: reports: page %d was not requested", n)
	}
	delete(p.pending, n)
	select {
	case f := <-ch:
		if f.err == nil && (f.page.EndOfList || len(f.page.Rows) == 0) {
			p.end = n
			p.dropAfter(n)
		}
		return f.page, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// dropAfter forgets the pages requested past the last one.
func (p *prefetcher) dropAfter(n int64) {
	for m := range p.pending {
		if m > n {
			delete(p.pending, m)
		}
	}
}

// close cancels the requests in flight and waits for their goroutines.
func (p *prefetcher) close() {
	p.cancel()
	p.wg.Wait()
}

// ExportCSV exports a report (Export) as CSV to w: a header row with the
// column names of the first row, then every row in the same column order;
// a column missing from a later row is written empty. It returns the
// number of rows written (the header not counted). An empty report writes
// nothing, as there is no row to take the column names from.
func (s *Service) ExportCSV(ctx context.Context, reportID int64, w io.Writer, opts ExportOptions) (int64, error) {
	cw := csv.NewWriter(w)
	var header *columns
	var record []string
	var n int64
	for r, err := range s.Export(ctx, reportID, opts) {
		if err != nil {
			return n, err
		}
		if header == nil {
			header = r.cols
			if err := cw.Write(header.names); err != nil {
				return n, err
			}
			record = make([]string, len(header.names))
		}
		if r.cols == header || (r.cols != nil && slices.Equal(r.cols.names, header.names)) {
			for i, v := range r.vals {
				record[i] = formatValue(v)
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
