package reports_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/reports"
)

// pageLog records the page member of every view data request the fake
// receives: the pages a resumed export asks for.
type pageLog struct {
	mu    sync.Mutex
	pages []int64 // page numbers of whole-page requests (size > 1)
}

func (l *pageLog) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/data") && strings.Contains(r.URL.Path, "/view/") {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			var body struct {
				Page struct{ Number, Size int64 } `json:"page"`
			}
			if json.Unmarshal(b, &body) == nil && body.Page.Size > 1 {
				l.mu.Lock()
				l.pages = append(l.pages, body.Page.Number)
				l.mu.Unlock()
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (l *pageLog) take() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.pages
	l.pages = nil
	return p
}

// readyView prepares a view of a report of rows numbered rows and waits
// until it is ready, on a fake whose views are ready at once
// (mocktest.NoWaits), as are those its exports prepare.
func readyView(t *testing.T, rows int) (*fake.Server, *reports.Service, *pageLog, int64, int64) {
	t.Helper()
	log := &pageLog{}
	srv, c := newClient(t, append(mocktest.NoWaits(), fake.WithMiddleware(log.middleware)))
	id := numbered(srv, rows)
	ctx := context.Background()
	viewID, err := c.Reports.PrepareExport(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Reports.WaitView(ctx, viewID, reports.WaitOptions{}); err != nil {
		t.Fatal(err)
	}
	return srv, c.Reports, log, id, viewID
}

// TestExportResumesFromEveryCheckpoint stops an export of 23 rows in
// pages of 5 after every row (at every page boundary and in the middle of
// every page), by a break and by a cancelled context, keeps the last
// checkpoint as JSON, and goes on from it: the rows come exactly once, in
// order, and the resumed export asks for no page before the checkpoint's.
func TestExportResumesFromEveryCheckpoint(t *testing.T) {
	t.Parallel()
	const rows, size = 23, 5
	for _, how := range []string{"break", "cancel"} {
		// Each way of stopping has its own fake and view (their page logs
		// apart), and runs beside the other.
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			_, svc, log, reportID, viewID := readyView(t, rows)
			for stop := 1; stop <= rows; stop++ {
				t.Run(fmt.Sprintf("after %d", stop), func(t *testing.T) {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					var last reports.Checkpoint
					opts := reports.ExportOptions{PageSize: size, Concurrency: 3, Checkpoint: func(cp reports.Checkpoint) { last = cp }}
					var got []int
					for r, err := range svc.ExportView(ctx, viewID, opts) {
						if err != nil {
							if how == "cancel" && errors.Is(err, context.Canceled) {
								break
							}
							t.Fatalf("after %d rows: %v", len(got), err)
						}
						got = append(got, rowN(t, r))
						if len(got) == stop {
							if how == "break" {
								break
							}
							cancel()
						}
					}
					if !slices.Equal(got, seq(stop)) {
						t.Fatalf("first part: %v", got)
					}
					want := reports.Checkpoint{ViewID: viewID, PageSize: size, NextPage: int64(stop / size), PageRows: int64(stop % size), Rows: int64(stop)}
					if stop == rows && last.Rows == rows {
						// After the last row: where the short last page ends,
						// or past it; both yield no more.
						want = last
					}
					if last != want {
						t.Fatalf("checkpoint %+v, want %+v", last, want)
					}
					b, err := json.Marshal(last)
					if err != nil {
						t.Fatal(err)
					}
					var from reports.Checkpoint
					if err := json.Unmarshal(b, &from); err != nil {
						t.Fatal(err)
					}
					log.take()
					var progress int64
					rest := collectN(t, svc.Export(context.Background(), reportID, reports.ExportOptions{From: &from, Concurrency: 3,
						Progress: func(n int64) { progress = n }}))
					if all := append(got, rest...); !slices.Equal(all, seq(rows)) {
						t.Fatalf("resumed after %d: %v", stop, all)
					}
					if pages := log.take(); len(pages) > 0 && slices.Min(pages) != from.NextPage {
						t.Errorf("resumed from page %d asked for pages %v", from.NextPage, pages)
					}
					if stop < rows && progress != rows {
						t.Errorf("progress %d, want %d (the rows before the checkpoint counted)", progress, rows)
					}
				})
			}
		})
	}
}

// TestExportFromBadCheckpoint: a checkpoint that names no position in the
// view is refused before anything is sent.
func TestExportFromBadCheckpoint(t *testing.T) {
	srv, svc, _, reportID, viewID := readyView(t, 3)
	before := len(srv.Requests())
	for _, tc := range []struct {
		cp   reports.Checkpoint
		opts reports.ExportOptions
		want string
	}{
		{reports.Checkpoint{PageSize: 5}, reports.ExportOptions{}, "view id"},
		{reports.Checkpoint{ViewID: viewID, PageSize: 0}, reports.ExportOptions{}, "page size"},
		{reports.Checkpoint{ViewID: viewID, PageSize: 5, PageRows: 5}, reports.ExportOptions{}, "not a position"},
		{reports.Checkpoint{ViewID: viewID, PageSize: 5, NextPage: -1}, reports.ExportOptions{}, "not a position"},
		{reports.Checkpoint{ViewID: viewID, PageSize: 5}, reports.ExportOptions{PageSize: 10}, "differs from the checkpoint's"},
	} {
		tc.opts.From = &tc.cp
		for _, err := range svc.Export(context.Background(), reportID, tc.opts) {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%+v: %v, want %q", tc.cp, err, tc.want)
			}
			break
		}
	}
	for _, other := range []int64{viewID + 1, 0} {
		for _, err := range svc.ExportView(context.Background(), other, reports.ExportOptions{From: &reports.Checkpoint{ViewID: viewID, PageSize: 5}}) {
			if err == nil || !strings.Contains(err.Error(), "not of view") {
				t.Errorf("view %d, checkpoint of view %d: %v", other, viewID, err)
			}
			break
		}
	}
	if n := len(srv.Requests()); n != before {
		t.Errorf("%d requests sent", n-before)
	}
}

// TestExportCSVResumes: ExportCSV calls Checkpoint once the rows before it
// are written, and From goes on without a header: the file cut at the
// checkpoint's length and continued is the whole export.
func TestExportCSVResumes(t *testing.T) {
	_, svc, _, reportID, _ := readyView(t, 12)
	var whole bytes.Buffer
	if _, err := svc.ExportCSV(context.Background(), reportID, &whole, reports.ExportOptions{PageSize: 5}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var b bytes.Buffer
	var cp reports.Checkpoint
	var kept int
	opts := reports.ExportOptions{PageSize: 5, Checkpoint: func(c reports.Checkpoint) {
		cp, kept = c, b.Len()
		if c.Rows >= 5 {
			cancel() // after the first page
		}
	}}
	if _, err := svc.ExportCSV(ctx, reportID, &b, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("ExportCSV: %v, want it cancelled", err)
	}
	if cp.Rows < 5 || !strings.HasPrefix(whole.String(), b.String()[:kept]) {
		t.Fatalf("checkpoint %+v at %d bytes of %q", cp, kept, b.String())
	}
	b.Truncate(kept)
	n, err := svc.ExportCSV(context.Background(), reportID, &b, reports.ExportOptions{From: &cp})
	if err != nil || n != 12-cp.Rows || b.String() != whole.String() {
		t.Fatalf("resumed: %d, %v\n%s\nwant\n%s", n, err, b.String(), whole.String())
	}
}

// rowN is the row's N.
func rowN(t *testing.T, r reports.Row) int {
	t.Helper()
	v, _ := r.Get("N")
	n, err := v.(json.Number).Int64()
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}
