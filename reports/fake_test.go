package reports_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/reports"
	"go.uber.org/goleak"
)

// newClient starts a fake and returns it with a client of it; both are
// closed when the test ends.
func newClient(t testing.TB, fopts []fake.Option, copts ...partner.Option) (*fake.Server, *partner.Client) {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	c, srv := mocktest.FakeClient(t, fopts, append([]partner.Option{
		partner.WithHTTPClient(&http.Client{Transport: tr}),
		partner.WithRetryWait(time.Millisecond, 5*time.Millisecond),
	}, copts...)...)
	t.Cleanup(tr.CloseIdleConnections) // before the server closes
	return srv, c
}

var numberCols = []fake.Column{{ID: "n", Name: "N", Type: "NUMBER"}, {ID: "label", Name: "Label"}}

// numbered adds a report of n rows {N: i, Label: "row i"}.
func numbered(srv *fake.Server, n int) int64 {
	return srv.AddReport(fake.Report{Name: fmt.Sprintf("%d rows", n), Columns: numberCols, RowCount: n,
		Generate: func(i int) []any { return []any{i, fmt.Sprintf("row %d", i)} }})
}

func collectN(t *testing.T, seq func(yield func(reports.Row, error) bool)) []int {
	t.Helper()
	var out []int
	for r, err := range seq {
		if err != nil {
			t.Fatalf("iteration failed after %d rows: %v", len(out), err)
		}
		v, _ := r.Get("N")
		n, err := v.(json.Number).Int64()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, int(n))
	}
	return out
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestListPagesUntilEndOfList(t *testing.T) {
	for _, tc := range []struct {
		reports, size, requests int
	}{
		{0, 2, 1}, // empty: one page that says endOfList
		{4, 2, 2}, // exact multiple: the second page says endOfList
		{5, 2, 3},
	} {
		t.Run(fmt.Sprintf("%d by %d", tc.reports, tc.size), func(t *testing.T) {
			srv, c := newClient(t, nil)
			var want []int64
			for i := range tc.reports {
				want = append(want, srv.AddReport(fake.Report{Name: fmt.Sprintf("r%d", i), Description: "d",
					CreatedBy: &fake.Person{ID: "u1", Name: "Una"}}))
			}
			var got []int64
			for r, err := range c.Reports.List(context.Background(), reports.ListParams{PageSize: int64(tc.size)}) {
				if err != nil {
					t.Fatal(err)
				}
				if r.Status != reports.StatusPublished || r.CreatedBy == nil || r.CreatedBy.Name != "Una" || r.CreatedAt.IsZero() {
					t.Errorf("entry %+v lacks its fields", r)
				}
				got = append(got, r.ID)
			}
			if !slices.Equal(got, want) {
				t.Errorf("ids %v, want %v", got, want)
			}
			if n := srv.CountRequests("POST", "/report/v1/list"); n != tc.requests {
				t.Errorf("%d list requests, want %d", n, tc.requests)
			}
		})
	}
}

func TestListRejectsBadPageSizeBeforeSending(t *testing.T) {
	srv, c := newClient(t, nil)
	for _, size := range []int64{-1, 10001} {
		for _, err := range c.Reports.List(context.Background(), reports.ListParams{PageSize: size}) {
			if err == nil || !strings.Contains(err.Error(), "page size must be between 1 and 10000") {
				t.Errorf("size %d: err = %v", size, err)
			}
		}
	}
	if n := srv.CountRequests("", "/report/v1/*"); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestDataPagingEdges(t *testing.T) {
	for _, tc := range []struct{ rows, requests int }{{0, 1}, {200, 2}, {201, 3}} {
		t.Run(fmt.Sprint(tc.rows), func(t *testing.T) {
			srv, c := newClient(t, nil)
			id := numbered(srv, tc.rows)
			got := collectN(t, c.Reports.Data(context.Background(), id, reports.DataParams{}))
			if !slices.Equal(got, seq(tc.rows)) && !(tc.rows == 0 && got == nil) {
				t.Errorf("rows %v", got)
			}
			if n := srv.CountRequests("POST", "/report/v1/*/data"); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}
}

func TestRowsKeepColumnOrderAndJSONTypes(t *testing.T) {
	srv, c := newClient(t, nil)
	cols := []fake.Column{{ID: "z", Name: "Zeta"}, {ID: "a", Name: "Alpha", Type: "NUMBER"},
		{ID: "m", Name: "Mu", Type: "BOOLEAN"}, {ID: "b", Name: "Beta"}, {ID: "q", Name: "Quote \"q\""}}
	id := srv.AddReport(fake.Report{Name: "types", Columns: cols, Rows: [][]any{
		{"z1", 12345678901234567, true, nil, []string{"x", "y"}},
		{"é\n", 1.5, false, "b", "plain"},
	}})
	var rows []reports.Row
	for r, err := range c.Reports.Data(context.Background(), id, reports.DataParams{}) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	wantCols := []string{"Zeta", "Alpha", "Mu", "Beta", `Quote "q"`}
	if got := rows[0].Columns(); !slices.Equal(got, wantCols) {
		t.Errorf("columns %q, want %q", got, wantCols)
	}
	want0 := []any{"z1", json.Number("12345678901234567"), true, nil, []any{"x", "y"}}
	if got := rows[0].Values(); fmt.Sprint(got) != fmt.Sprint(want0) {
		t.Errorf("row 0 = %#v, want %#v", got, want0)
	}
	if _, ok := rows[0].Value(1).(json.Number); !ok {
		t.Errorf("number decoded as %T", rows[0].Value(1))
	}
	if v, _ := rows[1].Get("Zeta"); v != "é\n" {
		t.Errorf("escaped string = %q", v)
	}
	raw, err := json.Marshal(rows[1])
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"Zeta":"é\n","Alpha":1.5,"Mu":false,"Beta":"b","Quote \"q\"":"plain"}`; string(raw) != want {
		t.Errorf("MarshalJSON = %s, want %s", raw, want)
	}
}

func TestDataPagesCarryVersion(t *testing.T) {
	srv, c := newClient(t, nil)
	id := numbered(srv, 3)
	ctx := context.Background()
	version := func() int64 {
		for p, err := range c.Reports.DataPages(ctx, id, reports.DataParams{}) {
			if err != nil {
				t.Fatal(err)
			}
			return p.Version
		}
		t.Fatal("no page")
		return 0
	}
	v1 := version()
	srv.AppendReportRows(id, []any{3, "row 3"})
	if v2 := version(); v2 != v1+1 {
		t.Errorf("version after a change = %d, want %d", v2, v1+1)
	}
}

// capture is a slog handler that keeps the messages it gets.
type capture struct{ msgs *[]string }

func (c capture) Enabled(context.Context, slog.Level) bool { return true }
func (c capture) Handle(_ context.Context, r slog.Record) error {
	*c.msgs = append(*c.msgs, r.Level.String()+" "+r.Message)
	return nil
}
func (c capture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c capture) WithGroup(string) slog.Handler      { return c }

// TestRealTimeDataOverTenThousandRowsWarns: a real-time read past 10000
// rows warns once, however many pages past the limit it reads (15001
// rows: two).
func TestRealTimeDataOverTenThousandRowsWarns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rows int
		warn bool
	}{{10000, false}, {10001, true}, {15001, true}} {
		t.Run(fmt.Sprint(tc.rows), func(t *testing.T) {
			t.Parallel() // each has its own fake and logger
			var msgs []string
			srv, c := newClient(t, nil, partner.WithLogger(slog.New(capture{&msgs})))
			id := numbered(srv, tc.rows)
			if got := collectN(t, c.Reports.Data(context.Background(), id, reports.DataParams{PageSize: 5000})); len(got) != tc.rows {
				t.Fatalf("%d rows", len(got))
			}
			var warns int
			for _, m := range msgs {
				if strings.HasPrefix(m, "WARN") && strings.Contains(m, "over 10000 rows") {
					warns++
				}
			}
			if want := map[bool]int{false: 0, true: 1}[tc.warn]; warns != want {
				t.Errorf("%d warnings, want %d: %q", warns, want, msgs)
			}
		})
	}
}

func TestViewLifecycleAndConsistency(t *testing.T) {
	clock := fake.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	srv, c := newClient(t, []fake.Option{fake.WithClock(clock)})
	ctx := context.Background()
	id := numbered(srv, 250)
	viewID, err := c.Reports.PrepareExport(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	status := func() reports.ViewState {
		st, err := c.Reports.ViewStatus(ctx, viewID)
		if err != nil {
			t.Fatal(err)
		}
		if st.ViewID != viewID {
			t.Errorf("status of view %d, want %d", st.ViewID, viewID)
		}
		return st.Status
	}
	if st := status(); st != reports.ViewPending {
		t.Errorf("new view is %s", st)
	}
	for _, err := range c.Reports.ViewData(ctx, viewID, reports.ViewDataParams{}) {
		if !partner.IsBadRequest(err) {
			t.Errorf("data of a pending view: %v, want a 400", err)
		}
	}
	clock.Advance(fake.ViewPendingFor)
	if st := status(); st != reports.ViewRunning {
		t.Errorf("view is %s, want RUNNING", st)
	}
	// The report changes while the view is being prepared: the view keeps
	// the rows of the moment it was prepared.
	srv.AppendReportRows(id, []any{250, "row 250"})
	clock.Advance(fake.ViewRunningFor)
	var seen []reports.ViewState
	st, err := c.Reports.WaitView(ctx, viewID, reports.WaitOptions{Progress: func(s *reports.ViewStatus) { seen = append(seen, s.Status) }})
	if err != nil || st.Status != reports.ViewSuccess || st.ViewID != viewID || !slices.Equal(seen, []reports.ViewState{reports.ViewSuccess}) {
		t.Fatalf("WaitView = %+v, %v (seen %v)", st, err, seen)
	}
	srv.SetReportRows(id, [][]any{{-1, "replaced"}})
	if got := collectN(t, c.Reports.ViewData(ctx, viewID, reports.ViewDataParams{PageSize: 100})); !slices.Equal(got, seq(250)) {
		t.Errorf("view data changed with its report: %d rows", len(got))
	}
	got := collectN(t, c.Reports.ExportView(ctx, viewID, reports.ExportOptions{PageSize: 7, Concurrency: 3}))
	if !slices.Equal(got, seq(250)) {
		t.Errorf("ExportView read %d rows", len(got))
	}

	clock.Advance(24 * time.Hour)
	if st := status(); st != reports.ViewDeleted {
		t.Errorf("day-old view is %s, want DELETED", st)
	}
	for _, err := range c.Reports.ViewData(ctx, viewID, reports.ViewDataParams{}) {
		if !partner.IsNotFound(err) {
			t.Errorf("data of a deleted view: %v, want a 404", err)
		}
	}
	var verr *reports.ViewError
	if st, err := c.Reports.WaitView(ctx, viewID, reports.WaitOptions{}); !errors.As(err, &verr) || verr.View.Status != reports.ViewDeleted || st == nil || st.Status != reports.ViewDeleted {
		t.Errorf("WaitView on a deleted view: %+v, %v; want a *ViewError with DELETED", st, err)
	}
}

func TestWaitForFailedView(t *testing.T) {
	t.Parallel()
	srv, c := newClient(t, mocktest.NoWaits())
	id := srv.AddReport(fake.Report{Name: "broken", Columns: numberCols, FailViews: true})
	ctx := context.Background()
	viewID, err := c.Reports.PrepareExport(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var verr *reports.ViewError
	if st, err := c.Reports.WaitView(ctx, viewID, reports.WaitOptions{}); st == nil || st.Status != reports.ViewFailed || !errors.As(err, &verr) || verr.View.ViewID != viewID || verr.View.Status != reports.ViewFailed {
		t.Errorf("WaitView = %+v, %v; want FAILED and a *ViewError", st, err)
	}
	// Export yields the failure of the view it waits for.
	id = srv.AddReport(fake.Report{Name: "broken too", Columns: numberCols, FailViews: true})
	yields := 0
	for _, err := range c.Reports.Export(ctx, id, reports.ExportOptions{}) {
		yields++
		if !errors.As(err, &verr) || verr.View.Status != reports.ViewFailed {
			t.Errorf("Export of a failing report: %v", err)
		}
	}
	if yields != 1 {
		t.Errorf("Export of a failing report yielded %d times, want once (its error)", yields)
	}
}

// TestExportKeepsOrderWithPagesArrivingOutOfOrder: whatever order the
// page answers come in, the rows come in order. With a cap above 1 the
// answer to page 0 comes after two others (firstPageLast), which the
// export sends before its first answer: page 1 and a probe. The view has
// 25 pages, more than 16 in flight.
func TestExportKeepsOrderWithPagesArrivingOutOfOrder(t *testing.T) {
	t.Parallel()
	const rows, size = 2500, 100
	var hold firstPageLast
	srv, c := newClient(t, append(mocktest.NoWaits(), fake.WithMiddleware(hold.middleware)))
	id := numbered(srv, rows)
	for _, concurrency := range []int{1, 4, 16} {
		t.Run(fmt.Sprint(concurrency), func(t *testing.T) {
			after := 0 // a cap of 1 sends one request at a time
			if concurrency > 1 {
				after = 2
			}
			hold.set(t, after)
			var progress []int64
			got := collectN(t, c.Reports.Export(context.Background(), id, reports.ExportOptions{
				PageSize: size, Concurrency: concurrency,
				Progress: func(n int64) { progress = append(progress, n) },
			}))
			if !slices.Equal(got, seq(rows)) {
				t.Fatalf("export read %d rows, not 0..%d in order", len(got), rows-1)
			}
			if len(progress) != rows/size || progress[0] != size || progress[len(progress)-1] != rows {
				t.Errorf("progress %v", progress)
			}
			if n := hold.overtaken(); n < after {
				t.Errorf("%d answers before page 0's, want at least %d", n, after)
			}
		})
	}
}

// firstPageLast holds the answer to page 0 of every view until the fake
// has answered a number of other view data requests of that view, or the
// request is cancelled. A hold longer than 10s fails the test and lets
// the answer go: the export did not send what was expected of it.
type firstPageLast struct {
	mu    sync.Mutex
	t     *testing.T
	after int                  // answers page 0 waits for
	views map[string]*heldView // by view data path
}

type heldView struct {
	answered int           // other view data requests answered
	enough   chan struct{} // closed when answered reaches after
	before   int           // answered when page 0's answer went; -1 before
}

// set makes page 0 of the views read from now on wait for after other
// answers, failing t on a hold too long.
func (h *firstPageLast) set(t *testing.T, after int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.t, h.after, h.views = t, after, map[string]*heldView{}
}

// overtaken returns the other answers that went before page 0's in the
// view whose page 0 was read since set, or -1 when there is not exactly
// one. (Requests of views read before set may still come, cancelled as
// past their last page.)
func (h *firstPageLast) overtaken() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n, read := -1, 0
	for _, v := range h.views {
		if v.before >= 0 {
			n = v.before
			read++
		}
	}
	if read != 1 {
		return -1
	}
	return n
}

func (h *firstPageLast) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || !strings.HasPrefix(r.URL.Path, "/report/v1/view/") || !strings.HasSuffix(r.URL.Path, "/data") {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			Page struct{ Number, Size int64 } `json:"page"`
		}
		json.Unmarshal(body, &req)
		h.mu.Lock()
		v := h.views[r.URL.Path]
		if v == nil {
			v = &heldView{enough: make(chan struct{}), before: -1}
			h.views[r.URL.Path] = v
		}
		t, after := h.t, h.after
		h.mu.Unlock()
		first := req.Page.Number == 0 && req.Page.Size > 1
		if first {
			if after > 0 {
				select {
				case <-v.enough:
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
					t.Errorf("page 0 of %s held 10s: fewer than %d other view data requests came before it", r.URL.Path, after)
				}
			}
			h.mu.Lock()
			v.before = v.answered
			h.mu.Unlock()
		}
		next.ServeHTTP(w, r)
		if !first {
			h.mu.Lock()
			if v.answered++; v.answered == after {
				close(v.enough)
			}
			h.mu.Unlock()
		}
	})
}

// hangFrom serves h, except that view data requests for page n and after
// hang until their client goes away. (The fake's Latency fault cannot
// stand in: it waits before the request body is read, and until then the
// server does not notice a client that hangs up.)
func hangFrom(h http.Handler, n int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" && strings.HasPrefix(r.URL.Path, "/report/v1/view/") && strings.HasSuffix(r.URL.Path, "/data") {
			body, _ := io.ReadAll(r.Body)
			var req struct {
				Page struct{ Number int64 } `json:"page"`
			}
			json.Unmarshal(body, &req)
			if req.Page.Number >= n {
				<-r.Context().Done()
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	})
}

func TestExportCancelledMidwayLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, how := range []string{"cancel", "break"} {
		t.Run(how, func(t *testing.T) {
			f := fake.New(append(mocktest.NoWaits(), mocktest.ContractCheck(t))...)
			// Pages 0 to 2 answer; the pages after them hang, so only
			// cancellation can end their requests.
			ts := httptest.NewServer(hangFrom(f, 3))
			defer ts.Close()
			tr := http.DefaultTransport.(*http.Transport).Clone()
			defer tr.CloseIdleConnections()
			c, err := partner.New(partner.WithBaseURL(ts.URL), partner.WithHTTPClient(&http.Client{Transport: tr}),
				partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret))
			if err != nil {
				t.Fatal(err)
			}
			id := f.AddReport(fake.Report{Name: "big", Columns: numberCols, RowCount: 50_000,
				Generate: func(i int) []any { return []any{i, "x"} }})
			// Connections of the client and the server may stay; nothing
			// of the export may.
			leakOpts := []goleak.Option{goleak.IgnoreCurrent(),
				goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
				goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
				goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop")}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // only a safety net
			defer cancel()
			n := 0
			var last error
			for _, err := range c.Reports.Export(ctx, id, reports.ExportOptions{PageSize: 500, Concurrency: 2}) {
				if err != nil {
					last = err
					break
				}
				if n++; n == 1200 {
					if how == "break" {
						break
					}
					cancel()
				}
			}
			if how == "cancel" && !errors.Is(last, context.Canceled) {
				t.Errorf("export after cancel: %v after %d rows", last, n)
			}
			if n != 1200 {
				t.Errorf("export stopped after %d rows, want 1200", n)
			}
			goleak.VerifyNone(t, leakOpts...)
		})
	}
}

func TestExportCSV(t *testing.T) {
	t.Parallel()
	srv, c := newClient(t, mocktest.NoWaits())
	id := srv.AddReport(fake.Report{Name: "csv", Columns: []fake.Column{
		{ID: "name", Name: "Name"}, {ID: "amount", Name: "Amount", Type: "CURRENCY"}, {ID: "ok", Name: "OK", Type: "BOOLEAN"},
	}, Rows: [][]any{{"Acme, Inc.", 10.25, true}, {"Globex", nil, false}}})
	var b bytes.Buffer
	n, err := c.Reports.ExportCSV(context.Background(), id, &b, reports.ExportOptions{})
	if err != nil || n != 2 {
		t.Fatalf("ExportCSV = %d, %v", n, err)
	}
	if want := "Name,Amount,OK\n\"Acme, Inc.\",10.25,true\nGlobex,,false\n"; b.String() != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", b.String(), want)
	}

	// An empty report has no row to take a header from: nothing is written.
	empty := numbered(srv, 0)
	b.Reset()
	if n, err := c.Reports.ExportCSV(context.Background(), empty, &b, reports.ExportOptions{}); n != 0 || err != nil || b.Len() != 0 {
		t.Errorf("empty export = %d, %v, %q", n, err, b.String())
	}
}

func TestObjectBackedReportFollowsObjects(t *testing.T) {
	srv, c := newClient(t, nil)
	id := srv.AddReport(fake.Report{Name: "opps", ObjectType: "opportunity",
		Columns: []fake.Column{{ID: "name", Name: "Name"}, {ID: "sales.stage", Name: "Stage"}}})
	ctx := context.Background()
	srv.AddObject(fake.Object{ID: "o1", Type: "opportunity", Fields: map[string]any{"name": "One", "sales": map[string]any{"stage": "won"}}})
	srv.AddObject(fake.Object{ID: "a1", Type: "account", Fields: map[string]any{"name": "Acc"}})
	v1, _ := srv.ReportVersion(id)
	srv.AddObject(fake.Object{ID: "o2", Type: "opportunity", Fields: map[string]any{"name": "Two"}})
	if v2, _ := srv.ReportVersion(id); v2 != v1+1 {
		t.Errorf("version %d after a new object, want %d", v2, v1+1)
	}
	var got []string
	for r, err := range c.Reports.Data(ctx, id, reports.DataParams{}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Text("Name")+"/"+r.Text("Stage"))
	}
	if want := []string{"One/won", "Two/"}; !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
}

func TestUnknownReportIsNotFound(t *testing.T) {
	_, c := newClient(t, nil)
	ctx := context.Background()
	for _, err := range c.Reports.Data(ctx, 999, reports.DataParams{}) {
		if !partner.IsNotFound(err) {
			t.Errorf("Data: %v", err)
		}
	}
	if _, err := c.Reports.PrepareExport(ctx, 999); !partner.IsNotFound(err) {
		t.Errorf("PrepareExport: %v", err)
	}
	if _, err := c.Reports.ChartData(ctx, 999, reports.ChartDataParams{}); !partner.IsNotFound(err) {
		t.Errorf("ChartData: %v", err)
	}
	if _, err := c.Reports.ViewStatus(ctx, 999); !partner.IsNotFound(err) {
		t.Errorf("ViewStatus: %v", err)
	}
}

func TestReportReadsAreRetried(t *testing.T) {
	t.Parallel()
	srv, c := newClient(t, mocktest.NoWaits())
	id := numbered(srv, 30)
	// Report reads are POSTs that only read: a 503 is retried.
	srv.InjectFault(fake.Fault{Method: "POST", Path: "/report/v1/*/data", Status: 503, Times: 1})
	srv.InjectFault(fake.Fault{Method: "POST", Path: "/report/v1/view/*/data", Status: 503, Times: 1, PageSize: 10, PageNumber: 0})
	if got := collectN(t, c.Reports.Data(context.Background(), id, reports.DataParams{PageSize: 10})); !slices.Equal(got, seq(30)) {
		t.Errorf("Data read %v", got)
	}
	got := collectN(t, c.Reports.Export(context.Background(), id, reports.ExportOptions{PageSize: 10}))
	if !slices.Equal(got, seq(30)) {
		t.Errorf("Export read %v", got)
	}
	if n := srv.CountRequests("POST", "/report/v1/*/data") + srv.CountRequests("POST", "/report/v1/view/*/data"); n < 2+3+1 {
		t.Errorf("%d data requests: the faults were not retried", n)
	}
	if left := srv.Faults(); len(left) != 0 {
		t.Errorf("faults not met: %+v", left)
	}
}
