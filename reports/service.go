// Package reports is the /report/v1 area of the Partner Integration
// Service: listing reports, reading their data in real time, exporting
// them consistently through prepared views, and reading chart data.
//
// Real-time data (Data) suits reports under 10,000 rows; past that a
// report may show missing or ghost rows while it changes, and the SDK logs
// a warning through the client's logger once a real-time read goes past
// row 10,000. Export prepares a view (a snapshot taken in one transaction),
// waits for it and streams its rows, fetching pages ahead concurrently.
//
// Rows keep the column order of the server (Row), so an export to CSV has
// the report's column order.
package reports

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/internal/paging"
	"github.com/partnerapi/partner-go/internal/plumbing"
)

// Service calls the /report/v1 operations. It is safe for concurrent use.
// A partner.Client has one as its Reports field; New builds one over any
// core.Client.
type Service struct {
	t    *core.Client
	rows metric.Int64Counter // rows yielded by exports
}

// New returns a Service that sends its requests through p, which
// authorizes them (core.Config.Tokens).
func New(p *core.Client) *Service {
	// The API returns a working no-op instrument beside any error (a bad
	// name or unit), which would be the SDK's own fault: ignored.
	rows, _ := plumbing.Of(p).Meter().Int64Counter("partner.reports.rows_exported", metric.WithUnit("{row}"),
		metric.WithDescription("Report rows yielded by exports."))
	return &Service{t: p, rows: rows}
}

// Paging limits of the interface.
const (
	DefaultPageSize = 100
	MaxPageSize     = 10000
)

// RealTimeRowLimit is the report size above which the interface
// recommends views over real-time data.
const RealTimeRowLimit = 10000

// Status is the publication status of a report (reportStatus).
type Status string

// Report statuses.
const (
	StatusDraft     Status = "DRAFT"
	StatusPublished Status = "PUBLISHED"
)

// Person is who created or modified a report.
type Person struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// Report is an entry of the report list.
type Report struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Status      Status    `json:"reportStatus,omitempty"`
	CreatedBy   *Person   `json:"createdBy,omitempty"`
	ModifiedBy  *Person   `json:"modifiedBy,omitempty"`
	CreatedAt   time.Time `json:"createdAt,omitzero"`
	ModifiedAt  time.Time `json:"modifiedAt,omitzero"`
}

// ListParams are the page member of POST /report/v1/list, for List.
type ListParams struct {
	// PageSize is the number of reports per request, 1 to 10000; 0 means
	// DefaultPageSize.
	PageSize int64
	// StartPage is the first page to read (pages count from 0).
	StartPage int64
}

// page is the `page` object of paged requests; both members are always
// sent, as the interface requires.
type page struct {
	Number int64 `json:"number"`
	Size   int64 `json:"size"`
}

type pageRequest struct {
	Page    page         `json:"page"`
	Filters *FilterGroup `json:"filters,omitempty"`
}

// pageSize validates a page size and start page and applies the default.
func pageSize(size, start, def int64) (int64, error) {
	if size == 0 {
		size = def
	}
	if size < 1 || size > MaxPageSize {
		return 0, fmt.Errorf("partner: reports: page size must be between 1 and %d, got %d", MaxPageSize, size)
	}
	if start < 0 {
		return 0, fmt.Errorf("partner: reports: start page must be 0 or more, got %d", start)
	}
	return size, nil
}

type reportList struct {
	EndOfList bool     `json:"endOfList"`
	Results   []Report `json:"results"`
}

// List iterates over the exportable reports (POST /report/v1/list), page
// by page until the server says endOfList.
func (s *Service) List(ctx context.Context, p ListParams) iter.Seq2[Report, error] {
	size, err := pageSize(p.PageSize, p.StartPage, DefaultPageSize)
	if err != nil {
		return failed[Report](err)
	}
	return paging.Seq(ctx, p.StartPage, func(ctx context.Context, n int64) (paging.Page[Report, int64], error) {
		var out reportList
		err := s.t.Do(ctx, &core.Request{
			Op:     "reports.List",
			Method: http.MethodPost, Path: "/report/v1/list", Idempotent: true,
			JSON: pageRequest{Page: page{Number: n, Size: size}},
		}, &out)
		if err != nil {
			return paging.Page[Report, int64]{}, err
		}
		// A page without results that does not say endOfList would loop
		// forever; it ends the listing too.
		return paging.Page[Report, int64]{Items: out.Results, Next: n + 1, Last: out.EndOfList || len(out.Results) == 0}, nil
	})
}

// failed is an iterator that yields err once.
func failed[T any](err error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		yield(zero, err)
	}
}
