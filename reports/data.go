package reports

import (
	"context"
	"iter"
	"log/slog"
	"net/http"
	"sync"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/internal/paging"
	"github.com/partnerapi/partner-go/internal/plumbing"
)

// Page is one page of report data (real-time or view data).
type Page struct {
	// Number is the page number, from 0.
	Number int64
	// Version identifies the version of the report content the page was
	// read from.
	Version int64
	// EndOfList is true on the last page.
	EndOfList bool
	// Rows are the page's rows, in order.
	Rows []Row
}

// DataParams are the body of POST /report/v1/{reportId}/data (its page
// member and filters), for Data and DataPages.
type DataParams struct {
	// PageSize is the number of rows per request, 1 to 10000; 0 means
	// DefaultPageSize.
	PageSize int64
	// StartPage is the first page to read.
	StartPage int64
	// Filters, when set, keeps only the matching rows.
	Filters *FilterGroup
}

// ViewDataParams are the page member of POST /report/v1/view/{viewId}/data,
// for ViewData and ViewDataPages.
type ViewDataParams struct {
	// PageSize is the number of rows per request, 1 to 10000; 0 means
	// DefaultPageSize.
	PageSize int64
	// StartPage is the first page to read.
	StartPage int64
}

// Data iterates over the rows of a report read in real time (POST
// /report/v1/{reportId}/data). Its pages may come from different versions
// of a report that changes meanwhile; for a consistent read of a large
// report use Export. Reading past row 10,000 logs a warning once.
func (s *Service) Data(ctx context.Context, reportID int64, p DataParams) iter.Seq2[Row, error] {
	return rows(ctx, s.DataPages(ctx, reportID, p))
}

// DataPages is Data page by page (POST /report/v1/{reportId}/data), with
// each page's version.
func (s *Service) DataPages(ctx context.Context, reportID int64, p DataParams) iter.Seq2[*Page, error] {
	size, err := pageSize(p.PageSize, p.StartPage, DefaultPageSize)
	if err == nil && p.Filters != nil {
		err = p.Filters.Validate()
	}
	if err != nil {
		return failed[*Page](err)
	}
	var warn sync.Once
	return pages(ctx, p.StartPage, func(ctx context.Context, n int64) (*Page, error) {
		pg, _, err := s.fetchPage(ctx, "reports.DataPages", "/report/v1/{reportId}/data", reportID, pageRequest{Page: page{Number: n, Size: size}, Filters: p.Filters}, pageHooks{})
		if err == nil && n*size+int64(len(pg.Rows)) > RealTimeRowLimit {
			warn.Do(func() {
				plumbing.Of(s.t).Logger().LogAttrs(ctx, slog.LevelWarn,
					"partner: reports: real-time data of a report over 10000 rows may miss rows or show ghost rows while it changes; export it through a view instead",
					slog.Int64("reportId", reportID))
			})
		}
		return pg, err
	})
}

// ViewData iterates over the rows of a prepared view (POST
// /report/v1/view/{viewId}/data). A view's data never changes; read it
// once WaitView says SUCCESS.
func (s *Service) ViewData(ctx context.Context, viewID int64, p ViewDataParams) iter.Seq2[Row, error] {
	return rows(ctx, s.ViewDataPages(ctx, viewID, p))
}

// ViewDataPages is ViewData page by page (POST
// /report/v1/view/{viewId}/data).
func (s *Service) ViewDataPages(ctx context.Context, viewID int64, p ViewDataParams) iter.Seq2[*Page, error] {
	size, err := pageSize(p.PageSize, p.StartPage, DefaultPageSize)
	if err != nil {
		return failed[*Page](err)
	}
	return pages(ctx, p.StartPage, func(ctx context.Context, n int64) (*Page, error) {
		pg, _, err := s.viewPage(ctx, viewID, n, size, pageHooks{})
		return pg, err
	})
}

func (s *Service) viewPage(ctx context.Context, viewID, n, size int64, h pageHooks) (*Page, int64, error) {
	return s.fetchPage(ctx, "reports.ViewDataPages", "/report/v1/view/{viewId}/data", viewID, pageRequest{Page: page{Number: n, Size: size}}, h)
}

// pages runs the core pager over whole data pages.
func pages(ctx context.Context, start int64, fetch func(ctx context.Context, n int64) (*Page, error)) iter.Seq2[*Page, error] {
	return func(yield func(*Page, error) bool) {
		for p, err := range paging.Pages(ctx, start, pageFetch(fetch)) {
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(p.Items[0], nil) {
				return
			}
		}
	}
}

// pageFetch adapts a data page fetch to the core pager, with the whole
// page as its one item. A page without rows that does not say endOfList
// ends the iteration too, rather than looping forever.
func pageFetch(fetch func(ctx context.Context, n int64) (*Page, error)) paging.Fetch[*Page, int64] {
	return func(ctx context.Context, n int64) (paging.Page[*Page, int64], error) {
		p, err := fetch(ctx, n)
		if err != nil {
			return paging.Page[*Page, int64]{}, err
		}
		return paging.Page[*Page, int64]{Items: []*Page{p}, Next: n + 1, Last: p.EndOfList || len(p.Rows) == 0}, nil
	}
}

// rows flattens pages into rows, stopping as soon as ctx is done.
func rows(ctx context.Context, seq iter.Seq2[*Page, error]) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		for p, err := range seq {
			if err != nil {
				yield(Row{}, err)
				return
			}
			for _, r := range p.Rows {
				if err := ctx.Err(); err != nil {
					yield(Row{}, err)
					return
				}
				if !yield(r, nil) {
					return
				}
			}
		}
	}
}

// pageHooks let an export pace a page request (export.Hooks).
type pageHooks struct {
	// ready, when set, is called with the answer's Content-Length (-1
	// when unknown) once its headers are in; the body is read only once
	// it returns (nil): until then the answer waits in the connection,
	// not in memory.
	ready func(size int64) error
	// throttled, when set, is called for every 429 or 503 answer,
	// retried ones included.
	throttled func()
}

// observe tells h.throttled of the 429 and 503 answers.
func (h pageHooks) observe() func(*http.Response) {
	if h.throttled == nil {
		return nil
	}
	return func(resp *http.Response) {
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			h.throttled()
		}
	}
}

// fetchPage posts a page request to path filled with id (operation op)
// and decodes the data page, returning the bytes it holds (decodePage).
// The page is read in the retry loop (core.Request.Read), so that a page
// cut off is sent for again, and once h.ready lets it: the body is read
// straight into the one buffer of its Content-Length that the page's rows
// keep.
func (s *Service) fetchPage(ctx context.Context, op, path string, id int64, body pageRequest, h pageHooks) (*Page, int64, error) {
	var p *Page
	var held int64
	read := func(resp *http.Response) error {
		if h.ready != nil {
			if err := h.ready(resp.ContentLength); err != nil {
				return err
			}
		}
		p = &Page{Number: body.Page.Number}
		var err error
		held, err = decodePage(resp.Body, resp.ContentLength, body.Page.Size, p)
		return err
	}
	resp, err := s.t.Send(ctx, &core.Request{Op: op, Method: http.MethodPost, Route: core.PathOf(path, id), JSON: body, Idempotent: true, Observe: h.observe(),
		MaxAnswerSize: core.MaxPageAnswerSize, Read: read})
	if err != nil {
		return nil, 0, err
	}
	resp.Body.Close()
	return p, held, nil
}
