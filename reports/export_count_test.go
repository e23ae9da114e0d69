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
	"github.com/partnerapi/partner-go/internal/contract"
	"github.com/partnerapi/partner-go/internal/mocktest"
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

func countingClient(t *testing.T) (*fake.Fake, *pageCounter, *partner.Client) {
	t.Helper()
	f := fake.New(mocktest.ContractCheck(t, contract.Strict))
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

// TestExportWastesAtMostTwoPageRequests counts, at the server, the page
// requests of whole exports: one per page, and at most 2 past the last
// page, whatever the view's length and the cap on requests in flight.
func TestExportWastesAtMostTwoPageRequests(t *testing.T) {
	const pageSize = 100
	for _, rows := range []int{0, 50, 100, 1000, 3650} {
		for _, limit := range []int{0, 4} {
			t.Run(fmt.Sprintf("%d rows, concurrency %d", rows, limit), func(t *testing.T) {
				t.Parallel()
				f, pc, c := countingClient(t)
				f.InjectFault(fake.Fault{Method: "POST", Path: "/report/v1/view/*/data", Latency: 5 * time.Millisecond})
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
				t.Logf("%d page requests (%d past the end), %d one-row probes (%d past the end)", pages, past, probes, probesPast)
			})
		}
	}
}

// TestExportPausesForRetryAfter: a 429 with Retry-After: 1 on one page
// request pauses the whole export: no page request reaches the server in
// the second that follows (bar those already on their way), and the
// export then completes.
func TestExportPausesForRetryAfter(t *testing.T) {
	f, pc, c := countingClient(t)
	f.InjectFault(fake.Fault{Method: "POST", Path: "/report/v1/view/*/data", Latency: 5 * time.Millisecond})
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
	f.ClearFaults()
	f.InjectFault(fake.Fault{Method: "POST", Path: "/report/v1/view/*/data", Times: 3, Latency: 5 * time.Millisecond})
	f.InjectFault(fake.Fault{Method: "POST", Path: "/report/v1/view/*/data", Times: 1, Status: 429, RetryAfter: "1"})
	got := collectN(t, c.Reports.ExportView(ctx, viewID, reports.ExportOptions{PageSize: 100}))
	if len(got) != 2000 {
		t.Fatalf("%d rows, want 2000", len(got))
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	var limited time.Time
	for _, r := range pc.reqs {
		if r.status == http.StatusTooManyRequests {
			limited = r.at
		}
	}
	if limited.IsZero() {
		t.Fatal("no 429 was served")
	}
	for _, r := range pc.reqs {
		if d := r.at.Sub(limited); d > 100*time.Millisecond && d < 900*time.Millisecond {
			t.Errorf("page %d (size %d) requested %v after a 429 with Retry-After: 1", r.number, r.size, d)
		}
	}
}
