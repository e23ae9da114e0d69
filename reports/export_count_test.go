package reports_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/reports"
)

// pageCounter sits in front of the fake and records every view data
// request it serves: the page asked for, when, and the answer's status.
type pageCounter struct {
	h    http.Handler
	mu   sync.Mutex
	reqs []pageReq
}

type pageReq struct {
	number, size int64
	at           time.Time
	status       int
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (c *pageCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != "POST" || !strings.HasPrefix(r.URL.Path, "/report/v1/view/") || !strings.HasSuffix(r.URL.Path, "/data") {
		c.h.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var pb struct {
		Page struct{ Number, Size int64 }
	}
	json.Unmarshal(body, &pb)
	rec := &statusRecorder{ResponseWriter: w, status: 200}
	at := time.Now()
	c.h.ServeHTTP(rec, r)
	c.mu.Lock()
	c.reqs = append(c.reqs, pageReq{pb.Page.Number, pb.Page.Size, at, rec.status})
	c.mu.Unlock()
}

// counts returns the page requests of size pageSize, those past the last
// of rows rows, and the same for one-row probes.
func (c *pageCounter) counts(rows, pageSize int64) (pages, pagesPast, probes, probesPast int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.reqs {
		switch r.size {
		case pageSize:
			pages++
			if r.number > 0 && r.number*pageSize >= rows {
				pagesPast++
			}
		case 1:
			probes++
			if r.number >= rows {
				probesPast++
			}
		}
	}
	return
}

// countingClient starts a fake whose views are ready at once
// (mocktest.NoWaits) behind a pageCounter, and
// returns it with the counter and a client of it.
func countingClient(t *testing.T) (*fake.Fake, *pageCounter, *partner.Client) {
	t.Helper()
	f := fake.New(append(mocktest.NoWaits(), mocktest.ContractCheck(t))...)
	t.Cleanup(f.Close)
	pc := &pageCounter{h: f}
	ts := httptest.NewServer(pc)
	t.Cleanup(ts.Close)
	c, err := partner.New(partner.WithBaseURL(ts.URL), partner.WithInsecureHTTP(),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret),
		partner.WithRetryWait(time.Millisecond, 5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return f, pc, c
}

// TestExportRequestBound counts, at the server, the requests of whole
// exports: one per page, at most 2 past the last page, and at most
// P + ceil(log2 P) + 2 view data requests of any size for P pages,
// probes included, at the default cap on requests in flight and at 4,
// for views of the lengths boundRows gives.
func TestExportRequestBound(t *testing.T) {
	const pageSize = 10
	for _, rows := range boundRows(pageSize) {
		limits := []int{0, 4}
		if rows > 64*pageSize+1 {
			limits = []int{0} // the large view: see boundRows
		}
		for _, limit := range limits {
			t.Run(fmt.Sprintf("%d rows, concurrency %d", rows, limit), func(t *testing.T) {
				t.Parallel()
				f, pc, c := countingClient(t)
				id := f.AddReport(fake.Report{Name: "r", Columns: numberCols, RowCount: rows,
					Generate: func(i int) []any { return []any{i, fmt.Sprintf("row %d", i)} }})
				got := collectN(t, c.Reports.Export(context.Background(), id, reports.ExportOptions{PageSize: pageSize, Concurrency: limit}))
				if len(got) != rows {
					t.Fatalf("%d rows, want %d", len(got), rows)
				}
				pages, past, probes, probesPast := pc.counts(int64(rows), pageSize)
				wantPages := max((rows+pageSize-1)/pageSize, 1)
				if pages-past != wantPages || past > 2 {
					t.Errorf("%d page requests, %d of them past the last page; want %d and at most 2 past", pages, past, wantPages)
				}
				if all, bound := pc.total(), requestBound(wantPages); all > bound {
					t.Errorf("%d view data requests (%d pages, %d probes), want at most %d", all, pages, probes, bound)
				}
				t.Logf("%d page requests (%d past the end), %d one-row probes (%d past the end)", pages, past, probes, probesPast)
			})
		}
	}
}

// boundRows returns the view lengths, in rows, that TestExportRequestBound
// exports in pages of size rows:
//
//   - small views: empty, one row, a page short of full, full, and one
//     row more (2 pages);
//   - around the powers of two from 4 to 64 pages, where the bound's log
//     term steps and the galloping probes of the caps 4 and 16 land (the
//     first at the cap, each next at twice the highest page known to
//     hold rows): one page short, exactly that many pages with a last
//     page of one row or full, and one page more of one row (a probe of
//     its first row finds the view's last row);
//   - a large view, at the default cap only: 256 pages and one row, so
//     that the probes go on doubling past the sizes above (to pages 128
//     and 256) and the last one finds the view's last row.
//
// The plan behind the export is checked at every length from 0 to 1100
// pages, at the caps 1, 4, 16 and 64, by
// reports/internal/export.TestPlanRequestBoundEverySize, and its runner
// with 1000 pages at those caps by TestPagesRequestBound; through HTTP a
// longer view would send more of the same requests, each a round trip
// through the fake and the contract check.
func boundRows(size int) []int {
	rows := []int{0, 1, size - 1, size, size + 1}
	for p := 4; p <= 64; p *= 2 {
		rows = append(rows, (p-1)*size, (p-1)*size+1, p*size, p*size+1)
	}
	return append(rows, 256*size+1)
}

// requestBound is the most view data requests an export of pages pages
// sends: pages + ceil(log2 pages) + 2.
func requestBound(pages int) int {
	log2 := 0
	for 1<<log2 < pages {
		log2++
	}
	return pages + log2 + 2
}

// total returns the view data requests served.
func (c *pageCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.reqs)
}

// TestExportRetriesThrottledPage: a 429 with Retry-After on one page
// request is retried by the transport, and the export completes with
// every row, sending that one request more than an export without it.
func TestExportRetriesThrottledPage(t *testing.T) {
	t.Parallel()
	f, pc, c := countingClient(t)
	id := f.AddReport(fake.Report{Name: "r", Columns: numberCols, RowCount: 2000,
		Generate: func(i int) []any { return []any{i, fmt.Sprintf("row %d", i)} }})
	ctx := context.Background()
	viewID, err := c.Reports.PrepareExport(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Reports.WaitView(ctx, viewID, reports.WaitOptions{}); err != nil {
		t.Fatal(err)
	}
	f.InjectFault(fake.Fault{Method: "POST", Path: "/report/v1/view/*/data", Times: 1, Status: 429, RetryAfter: "0", PageSize: 100, PageNumber: 0})
	got := collectN(t, c.Reports.ExportView(ctx, viewID, reports.ExportOptions{PageSize: 100}))
	if len(got) != 2000 {
		t.Fatalf("%d rows, want 2000", len(got))
	}
	for i, n := range got {
		if n != i {
			t.Fatalf("row %d is %d", i, n)
		}
	}
	pc.mu.Lock()
	limited := 0
	for _, r := range pc.reqs {
		if r.status == http.StatusTooManyRequests {
			limited++
		}
	}
	pc.mu.Unlock()
	if limited != 1 {
		t.Fatalf("%d 429 answers served, want 1", limited)
	}
	if all, bound := pc.total(), requestBound(20)+1; all > bound {
		t.Errorf("%d view data requests, want at most %d (the bound and the retry)", all, bound)
	}
}
