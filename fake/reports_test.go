package fake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake/demo"
	"time"

	"github.com/partnerapi/partner-go/internal/fakeserver/fakehttp"
)

// call sends one request to f with a valid token and returns the status
// and body.
func call(t *testing.T, f *Fake, method, path, body string) (int, string) {
	t.Helper()
	tok := handlerToken(t, f)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	f.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// handlerToken returns an access token of the fake's default client,
// asked of f as an http.Handler.
func handlerToken(t testing.TB, f *Fake) string {
	t.Helper()
	rec := httptest.NewRecorder()
	f.ServeHTTP(rec, httptest.NewRequest("POST", "/oauth/token", strings.NewReader(
		fmt.Sprintf(`{"grant_type":"client_credentials","client_id":%q,"client_secret":%q}`, DefaultClientID, DefaultClientSecret))))
	var tok tokenResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("no token: %s", rec.Body.String())
	}
	return tok.AccessToken
}

// message is the message of an error body, or the body.
func message(body string) string {
	var e fakehttp.APIError
	if json.Unmarshal([]byte(body), &e) == nil && e.Message != "" {
		return e.Message
	}
	return body
}

func smallReport(f *Fake, n int) int64 {
	return f.AddReport(Report{Name: "small", Columns: []Column{{ID: "n", Name: "N", Type: columnNumber}, {ID: "s", Name: "S"}},
		RowCount: n, Generate: func(i int) []any { return []any{i, fmt.Sprintf("r%d", i)} }})
}

func TestReportPagingLimits(t *testing.T) {
	f := New()
	id := smallReport(f, 3)
	for _, path := range []string{"/report/v1/list", fmt.Sprintf("/report/v1/%d/data", id)} {
		for _, tc := range []struct {
			body, want string
		}{
			{`{"page":{"number":0,"size":0}}`, "page.size must be between 1 and 10000, got 0"},
			{`{"page":{"number":0,"size":10001}}`, "page.size must be between 1 and 10000, got 10001"},
			{`{"page":{"number":-1,"size":10}}`, "page.number must be 0 or more, got -1"},
			{`{"page":{"size":10}}`, "page.number is required inside page"},
			{`{"page":{"number":0}}`, "page.size is required inside page"},
			{`{"page":{"number":"0","size":10}}`, `member "page.number" must be a whole number, not string`},
			{`{"page":`, "malformed JSON"},
		} {
			code, body := call(t, f, "POST", path, tc.body)
			if code != http.StatusBadRequest || !strings.Contains(message(body), tc.want) {
				t.Errorf("%s %s: %d %s, want 400 with %q", path, tc.body, code, body, tc.want)
			}
		}
	}
}

// TestReportFiltersOnlyWhereTheyApply: the list and view data take a page
// only; a filter sent there is refused rather than silently ignored.
func TestReportFiltersOnlyWhereTheyApply(t *testing.T) {
	f := New()
	id := smallReport(f, 3)
	viewID, _ := f.prepareView(id)
	filter := `{"page":{"number":0,"size":10},"filters":{"op":"AND","fieldFilters":[{"type":"NUMBER","colId":"n","filter":{"op":"EQUAL_TO","values":["1"]}}]}}`
	for path, want := range map[string]string{
		"/report/v1/list": "the report list takes no filters",
		fmt.Sprintf("/report/v1/view/%d/data", viewID): "view data takes no filters",
	} {
		if code, body := call(t, f, "POST", path, filter); code != http.StatusBadRequest || !strings.Contains(message(body), want) {
			t.Errorf("%s: %d %s, want 400 with %q", path, code, body, want)
		}
	}
	if code, body := call(t, f, "POST", fmt.Sprintf("/report/v1/%d/data", id), filter); code != http.StatusOK || !strings.Contains(body, `"r1"`) || strings.Contains(body, `"r2"`) {
		t.Errorf("real-time data with a filter: %d %s", code, body)
	}
}

func TestReportDataPagesAndDefaults(t *testing.T) {
	f := New()
	id := smallReport(f, 3)
	path := fmt.Sprintf("/report/v1/%d/data", id)
	for _, tc := range []struct{ body, want string }{
		{`{"page":{"number":0,"size":2}}`, `{"version":1,"endOfList":false,"results":[{"N":0,"S":"r0"},{"N":1,"S":"r1"}]}`},
		{`{"page":{"number":1,"size":2}}`, `{"version":1,"endOfList":true,"results":[{"N":2,"S":"r2"}]}`},
		{`{"page":{"number":1,"size":3}}`, `{"version":1,"endOfList":true,"results":[]}`},
		{`{"page":{"number":9223372036854775807,"size":10000}}`, `{"version":1,"endOfList":true,"results":[]}`},
		{`{}`, `{"version":1,"endOfList":true,"results":[{"N":0,"S":"r0"},{"N":1,"S":"r1"},{"N":2,"S":"r2"}]}`},
	} {
		code, body := call(t, f, "POST", path, tc.body)
		if code != 200 || strings.TrimSpace(body) != tc.want {
			t.Errorf("%s: %d %s, want %s", tc.body, code, body, tc.want)
		}
	}
	f.AppendReportRows(id, []any{3, "r3"})
	if _, body := call(t, f, "POST", path, `{"page":{"number":1,"size":3}}`); !strings.Contains(body, `"version":2`) || !strings.Contains(body, `"S":"r3"`) {
		t.Errorf("after append: %s", body)
	}
	if code, body := call(t, f, "POST", "/report/v1/999/data", `{}`); code != 404 || !strings.Contains(body, "report 999 not found") {
		t.Errorf("unknown report: %d %s", code, body)
	}
	if code, _ := call(t, f, "POST", "/report/v1/abc/data", `{}`); code != 400 {
		t.Errorf("non-integer report id: %d", code)
	}
}

func TestReportFilterErrorsNameThePair(t *testing.T) {
	f := New()
	id := smallReport(f, 3)
	path := fmt.Sprintf("/report/v1/%d/data", id)
	for _, tc := range []struct{ filter, want string }{
		{`{"op":"AND","fieldFilters":[{"type":"NUMBER","colId":"n","filter":{"op":"CONTAIN","values":["1"]}}]}`, "filter type NUMBER does not support operator CONTAIN"},
		{`{"op":"AND","fieldFilters":[{"type":"BOOLEAN","colId":"s","filter":{"op":"GREATER_THAN","values":["1"]}}]}`, "filter type BOOLEAN does not support operator GREATER_THAN"},
		{`{"op":"AND","fieldFilters":[{"type":"TEXT","colId":"s","filter":{"op":"OFFSET","values":["1"]}}]}`, "filter type TEXT does not support operator OFFSET"},
		{`{"op":"AND","fieldFilters":[{"type":"TEXT","colId":"x","filter":{"op":"EQUAL_TO","values":["1"]}}]}`, `no column "x"`},
		{`{"op":"NAND"}`, `filters.op must be AND or OR`},
		{`{"op":"OR","group":[{"op":"AND","fieldFilters":[{"type":"NUMBER","colId":"n","filter":{"op":"BETWEEN","values":["1"]}}]}]}`, "filters.group[0].fieldFilters[0] (NUMBER BETWEEN): needs exactly 2 value(s), got 1"},
		{`{"op":"AND","fieldFilters":[{"type":"NUMBER","colId":"n","filter":{"op":"GREATER_THAN","values":["abc"]}}]}`, `value "abc" cannot be compared`},
	} {
		code, body := call(t, f, "POST", path, `{"page":{"number":0,"size":10},"filters":`+tc.filter+`}`)
		if code != 400 || !strings.Contains(message(body), tc.want) {
			t.Errorf("%s: %d %s, want 400 with %q", tc.filter, code, body, tc.want)
		}
	}
}

func TestViewSnapshotAndLifetime(t *testing.T) {
	clock := NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f := New(WithClock(clock))
	id := smallReport(f, 2)
	code, body := call(t, f, "POST", fmt.Sprintf("/report/v1/view/%d/prepare_export", id), ``)
	var v struct{ ViewID int64 }
	if code != 200 || json.Unmarshal([]byte(body), &v) != nil || v.ViewID == 0 {
		t.Fatalf("prepare: %d %s", code, body)
	}
	status := func() string {
		_, body := call(t, f, "GET", fmt.Sprintf("/report/v1/view/%d/status", v.ViewID), ``)
		var st struct{ ViewStatus string }
		json.Unmarshal([]byte(body), &st)
		return st.ViewStatus
	}
	data := fmt.Sprintf("/report/v1/view/%d/data", v.ViewID)
	if st := status(); st != viewPending {
		t.Errorf("status %s", st)
	}
	if code, body := call(t, f, "POST", data, `{}`); code != 400 || !strings.Contains(body, "PENDING") {
		t.Errorf("data of a pending view: %d %s", code, body)
	}
	f.SetReportRows(id, [][]any{{9, "changed"}})
	clock.Advance(ViewPendingFor + ViewRunningFor)
	if st := status(); st != viewSuccess {
		t.Errorf("status %s", st)
	}
	want := `{"version":1,"endOfList":true,"results":[{"N":0,"S":"r0"},{"N":1,"S":"r1"}]}`
	if code, body := call(t, f, "POST", data, `{}`); code != 200 || strings.TrimSpace(body) != want {
		t.Errorf("view data: %d %s, want %s", code, body, want)
	}
	clock.Advance(viewLifetime)
	if st := status(); st != viewDeleted {
		t.Errorf("status %s", st)
	}
	if code, _ := call(t, f, "POST", data, `{}`); code != 404 {
		t.Errorf("data of a deleted view: %d", code)
	}
	if code, _ := call(t, f, "GET", "/report/v1/view/424242/status", ``); code != 404 {
		t.Errorf("unknown view: %d", code)
	}
}

// TestViewDelay: WithViewDelay(d) keeps a view PENDING for two fifths of
// d and RUNNING for the rest; zero makes it SUCCESS, or FAILED for a
// report with FailViews, at once, as does a negative delay.
func TestViewDelay(t *testing.T) {
	clock := NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	prepare := func(f *Fake, report int64) func() string {
		code, body := call(t, f, "POST", fmt.Sprintf("/report/v1/view/%d/prepare_export", report), ``)
		var v struct{ ViewID int64 }
		if code != 200 || json.Unmarshal([]byte(body), &v) != nil || v.ViewID == 0 {
			t.Fatalf("prepare: %d %s", code, body)
		}
		return func() string {
			_, body := call(t, f, "GET", fmt.Sprintf("/report/v1/view/%d/status", v.ViewID), ``)
			var st struct{ ViewStatus string }
			json.Unmarshal([]byte(body), &st)
			return st.ViewStatus
		}
	}
	f := New(WithClock(clock), WithViewDelay(time.Second))
	status := prepare(f, smallReport(f, 2))
	for _, step := range []struct {
		advance time.Duration
		want    string
	}{{0, viewPending}, {399 * time.Millisecond, viewPending}, {time.Millisecond, viewRunning},
		{599 * time.Millisecond, viewRunning}, {time.Millisecond, viewSuccess}} {
		clock.Advance(step.advance)
		if st := status(); st != step.want {
			t.Fatalf("WithViewDelay(1s), %v after prepare: %s, want %s", step.advance, st, step.want)
		}
	}

	f = New(WithClock(clock), WithViewDelay(0))
	if st := prepare(f, smallReport(f, 2))(); st != viewSuccess {
		t.Errorf("WithViewDelay(0): %s at once, want %s", st, viewSuccess)
	}
	failing := f.AddReport(Report{Name: "fails", Columns: []Column{{ID: "N"}}, FailViews: true})
	if st := prepare(f, failing)(); st != viewFailed {
		t.Errorf("WithViewDelay(0), FailViews: %s at once, want %s", st, viewFailed)
	}

	f = New(WithClock(clock), WithViewDelay(-time.Second))
	if st := prepare(f, smallReport(f, 2))(); st != viewSuccess {
		t.Errorf("WithViewDelay(-1s): %s at once, want %s", st, viewSuccess)
	}
}

// TestViewStatusPublishedShape: the view status answer carries only
// viewStatus, as the published example does; WithViewStatusDetail adds
// the fake's own members.
func TestViewStatusPublishedShape(t *testing.T) {
	for _, detail := range []bool{false, true} {
		var opts []Option
		if detail {
			opts = append(opts, WithViewStatusDetail())
		}
		f := New(opts...)
		id := smallReport(f, 2)
		_, body := call(t, f, "POST", fmt.Sprintf("/report/v1/view/%d/prepare_export", id), ``)
		var v struct{ ViewID int64 }
		json.Unmarshal([]byte(body), &v)
		code, body := call(t, f, "GET", fmt.Sprintf("/report/v1/view/%d/status", v.ViewID), ``)
		var got map[string]any
		if code != 200 || json.Unmarshal([]byte(body), &got) != nil || got["viewStatus"] != viewPending {
			t.Fatalf("status: %d %s", code, body)
		}
		if want := map[bool]int{false: 1, true: 5}[detail]; len(got) != want || (detail && got["viewId"] != float64(v.ViewID)) {
			t.Errorf("detail %v: status answer %s", detail, body)
		}
	}
}

func TestChartDataCounts(t *testing.T) {
	f := New()
	id := f.AddReport(Report{Name: "c", Columns: []Column{{ID: "k", Name: "Kind"}, {ID: "v", Name: "V", Type: columnNumber}},
		Rows: [][]any{{"b", 1}, {"a", 2}, {"b", 3}, {nil, 4}}, Charts: []Chart{{ID: 5, Name: "By kind", GroupBy: "k"}}})
	path := fmt.Sprintf("/report/v1/%d/chart-data", id)
	code, body := call(t, f, "POST", path, `{"chartIds":[5]}`)
	want := `{"reportVersion":1,"reportName":"c","charts":[{"id":5,"version":1,"name":"By kind","results":[{"Kind":null,"count":1},{"Kind":"a","count":1},{"Kind":"b","count":2}]}]}`
	if code != 200 || strings.TrimSpace(body) != want {
		t.Errorf("chart data: %d %s\nwant %s", code, body, want)
	}
	code, body = call(t, f, "POST", path, `{"chartIds":[5],"filters":{"op":"AND","fieldFilters":[{"type":"NUMBER","colId":"v","filter":{"op":"GREATER_THAN","negate":true,"values":["2"]}}]}}`)
	if code != 200 || !strings.Contains(body, `"results":[{"Kind":"a","count":1},{"Kind":"b","count":1}]`) {
		t.Errorf("filtered chart data: %d %s", code, body)
	}
	if code, _ := call(t, f, "POST", path, `{"chartIds":[6]}`); code != 404 {
		t.Errorf("unknown chart: %d", code)
	}
	if code, _ := call(t, f, "POST", "/report/v1/77/chart-data", `{"chartIds":[]}`); code != 404 {
		t.Errorf("unknown report: %d", code)
	}
}

func TestMillionRowReportIsCompact(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a million rows")
	}
	f := New()
	id := f.AddReport(Report{Name: "big", Columns: []Column{{ID: "n", Name: "N", Type: columnNumber}, {ID: "ok", Name: "OK", Type: columnBoolean}},
		RowCount: 1_000_000, Generate: func(i int) []any { return []any{i, i%2 == 0} }})
	_, _, rs, _ := f.snapshotReport(id)
	if rs.len() != 1_000_000 {
		t.Fatalf("%d rows", rs.len())
	}
	// One JSON object per row in one buffer, plus one offset: no map or
	// boxed value per cell.
	if got := string(rs.object(999_999)); got != `{"N":999999,"OK":false}` {
		t.Errorf("last row %s", got)
	}
	code, body := call(t, f, "POST", fmt.Sprintf("/report/v1/%d/data", id), `{"page":{"number":99,"size":10000}}`)
	if code != 200 || !strings.HasSuffix(strings.TrimSpace(body), `{"N":999999,"OK":false}]}`) || !strings.Contains(body, `"endOfList":true`) {
		t.Errorf("last page: %d %.200s", code, body)
	}
}

// TestDemoLargeReportRows: the demo's large report holds the rows its
// description gives (names and dates looked up, the row buffer sized from
// its first rows): each made here by formatting, first, last and where
// the lookups wrap.
func TestDemoLargeReportRows(t *testing.T) {
	t.Parallel()
	f := New(WithDemoData())
	defer f.Close()
	_, _, rs, ok := f.snapshotReport(demo.ReportLarge)
	if !ok || rs.len() != demo.ReportLargeRows {
		t.Fatalf("%d rows, want %d", rs.len(), demo.ReportLargeRows)
	}
	regions := []string{"EMEA", "NA", "APAC", "LATAM"}
	stages := []string{"prospecting", "qualification", "proposal", "negotiation", "closed"}
	for _, i := range []int{0, 1, 63, 64, 249, 250, 364, 365, 50_000, demo.ReportLargeRows - 1} {
		want := fmt.Sprintf(`{"Deal ID":%d,"Partner":"Partner %03d","Region":%q,"Stage":%q,"Amount":%d.5,"Registered":%q}`,
			100000+i, i%250+1, regions[i%4], stages[(i/7)%5], 1000+(i*7919)%99000,
			time.Date(2025, 1, 1+i%365, 0, 0, 0, 0, time.UTC).Format(time.DateOnly))
		if got := string(rs.object(i)); got != want {
			t.Errorf("row %d\n%s\nwant\n%s", i, got, want)
		}
	}
}

// BenchmarkDemoLargeReport: a fake with the demo data, and the rows of
// its 100,000-row report made (what the first export of it pays).
func BenchmarkDemoLargeReport(b *testing.B) {
	for b.Loop() {
		f := New(WithDemoData())
		if _, _, rs, ok := f.snapshotReport(demo.ReportLarge); !ok || rs.len() != demo.ReportLargeRows {
			b.Fatalf("%d rows, want %d", rs.len(), demo.ReportLargeRows)
		}
		f.Close()
	}
}

// FuzzReportFilter feeds arbitrary filter objects to the data route's
// filter compiler: it answers an error or a predicate, never a panic, and
// the predicate runs on every kind of cell.
func FuzzReportFilter(f *testing.F) {
	for _, seed := range []string{
		`{"op":"AND","fieldFilters":[{"type":"NUMBER","colId":"n","filter":{"op":"BETWEEN","values":["1","2"]}}]}`,
		`{"op":"OR","group":[{"op":"AND","fieldFilters":[{"type":"TEXT_PG_ARRAY","colId":"s","filter":{"op":"IN","negate":true,"values":["a"]}}]}]}`,
		`{"op":"AND","fieldFilters":[{"type":"DATE_OFFSET","colId":"d","filter":{"op":"OFFSET","values":["-7"]}}]}`,
		`{"op":"AND","fieldFilters":[{"type":"BOOLEAN","colId":"b","filter":{"op":"EQUAL_TO","values":[]}}]}`,
		`{"op":"AND","fieldFilters":[{"type":"DATE_TIME","colId":"d","filter":null}]}`,
	} {
		f.Add([]byte(seed))
	}
	cols := []Column{{ID: "n", Name: "n", Type: columnNumber}, {ID: "s", Name: "s", Type: columnTextPGArray},
		{ID: "d", Name: "d", Type: columnDate}, {ID: "b", Name: "b", Type: columnBoolean}}
	rows := [][]any{
		{1.5, "{a,b}", "2026-01-02", true},
		{nil, []any{"x", 1.0}, "2026-01-02T03:04:05Z", "yes"},
		{"7", "", 3.0, nil},
		{map[string]any{"k": 1.0}, nil, "not a date", false},
	}
	now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		var g filterGroup
		if json.Unmarshal(data, &g) != nil {
			return
		}
		p, err := compileFilter(&g, cols, now)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		for _, r := range rows {
			p(r)
		}
	})
}

// TestDeleteReportKeepsItsViews: a deleted report is gone from the list
// and its data is a 404, while a view prepared before reads on.
func TestDeleteReportKeepsItsViews(t *testing.T) {
	clock := NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	f := New(WithClock(clock))
	id := smallReport(f, 3)
	code, body := call(t, f, "POST", fmt.Sprintf("/report/v1/view/%d/prepare_export", id), "")
	var prepared struct{ ViewID int64 }
	if json.Unmarshal([]byte(body), &prepared); code != http.StatusOK || prepared.ViewID == 0 {
		t.Fatalf("prepare: %d %s", code, body)
	}
	if got := f.ReportViews(id); !slices.Equal(got, []int64{prepared.ViewID}) {
		t.Errorf("ReportViews = %v, want [%d]", got, prepared.ViewID)
	}
	clock.Advance(ViewPendingFor + ViewRunningFor)
	if !f.DeleteReport(id) || f.DeleteReport(id) {
		t.Fatal("DeleteReport: want true, then false")
	}
	page := `{"page":{"number":0,"size":10}}`
	if code, body := call(t, f, "POST", fmt.Sprintf("/report/v1/%d/data", id), page); code != http.StatusNotFound {
		t.Errorf("data of a deleted report: %d %s", code, body)
	}
	if code, body := call(t, f, "POST", "/report/v1/list", page); code != http.StatusOK || strings.Contains(body, `"small"`) {
		t.Errorf("list after the delete: %d %s", code, body)
	}
	if code, body := call(t, f, "POST", fmt.Sprintf("/report/v1/view/%d/data", prepared.ViewID), page); code != http.StatusOK || !strings.Contains(body, `"r2"`) {
		t.Errorf("view of a deleted report: %d %s", code, body)
	}
}

// TestObjectBackedReportFollowsDeletes: deleting a stored object takes its
// row out of a report backed by its type and moves the version.
func TestObjectBackedReportFollowsDeletes(t *testing.T) {
	f := New()
	id := f.AddReport(Report{Name: "opps", ObjectType: "opportunity", Columns: []Column{{ID: "name", Name: "Name"}}})
	a := f.AddObject(Object{Type: "opportunity", Fields: map[string]any{"name": "Keep"}})
	b := f.AddObject(Object{Type: "opportunity", Fields: map[string]any{"name": "Drop"}})
	v, _ := f.ReportVersion(id)
	if !f.DeleteObject(b) {
		t.Fatal("DeleteObject failed")
	}
	if v2, _ := f.ReportVersion(id); v2 <= v {
		t.Errorf("version %d after a delete, was %d", v2, v)
	}
	code, body := call(t, f, "POST", fmt.Sprintf("/report/v1/%d/data", id), `{"page":{"number":0,"size":10}}`)
	if code != http.StatusOK || !strings.Contains(body, `"Keep"`) || strings.Contains(body, `"Drop"`) {
		t.Errorf("data after deleting %s (keeping %s): %d %s", b, a, code, body)
	}
}
