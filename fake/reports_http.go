package fake

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Routes of the reports area (/report/v1). Paging follows the limits of
// the interface: page.number >= 0 (default 0), 1 <= page.size <= 10000
// (default 100), both required inside a page object; a body without a
// page object, or no body at all (the published descriptions do not
// require one), takes the defaults.

const maxPageSize = 10000

// registerReports registers the routes of the reports area.
func (f *Fake) registerReports() {
	if s := &f.reports; !s.delaySet {
		s.pendingFor, s.runningFor = ViewPendingFor, ViewRunningFor
	}
	f.handle("POST /report/v1/list", scopeReports, f.handleReportList)
	f.handle("POST /report/v1/{reportId}/data", scopeReports, f.handleReportData)
	f.handle("POST /report/v1/view/{reportId}/prepare_export", scopeReports, f.handlePrepareExport)
	f.handle("GET /report/v1/view/{viewId}/status", scopeReports, f.handleViewStatus)
	f.handle("POST /report/v1/view/{viewId}/data", scopeReports, f.handleViewData)
	f.handle("POST /report/v1/{reportId}/chart-data", scopeReports, f.handleChartData)
	f.handle("POST /report/v1/{reportId}/chart-metadata", scopeReports, f.handleChartMetadata)
	f.registerReportMetadata()
}

type pageJSON struct {
	Number *int64 `json:"number"`
	Size   *int64 `json:"size"`
}

// defaultPageSize is the size of the page a paged body without a page
// asks for.
const defaultPageSize = 100

type pageBody struct {
	Page    *pageJSON    `json:"page"`
	Filters *filterGroup `json:"filters"`
}

// readPage decodes a paged body; on bad input it has answered 400.
func readPage(w http.ResponseWriter, r *http.Request) (number, size int64, filters *filterGroup, ok bool) {
	var body pageBody
	if !decodeOptionalJSON(w, r, &body) {
		return 0, 0, nil, false
	}
	number, size, problem := pageOf(body.Page)
	if problem != "" {
		writeError(w, http.StatusBadRequest, "invalid_request", "%s", problem)
		return 0, 0, nil, false
	}
	return number, size, body.Filters, true
}

// pageOf returns the page a paged body's page member asks for (page 0
// of defaultPageSize when it has none), or what is wrong with it.
func pageOf(p *pageJSON) (number, size int64, problem string) {
	switch {
	case p == nil:
		return 0, defaultPageSize, ""
	case p.Number == nil:
		return 0, 0, "page.number is required inside page"
	case p.Size == nil:
		return 0, 0, "page.size is required inside page"
	case *p.Number < 0:
		return 0, 0, fmt.Sprintf("page.number must be 0 or more, got %d", *p.Number)
	case *p.Size < 1 || *p.Size > maxPageSize:
		return 0, 0, fmt.Sprintf("page.size must be between 1 and %d, got %d", maxPageSize, *p.Size)
	}
	return *p.Number, *p.Size, ""
}

// pageBounds returns the item range [lo, hi) of a page over n items and
// whether it is the last page.
func pageBounds(number, size int64, n int) (lo, hi int, last bool) {
	if number > int64(n)/size {
		return n, n, true
	}
	lo = int(number * size)
	hi = min(lo+int(size), n)
	return lo, hi, hi >= n
}

func pathID(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "%s must be an integer, got %q", name, r.PathValue(name))
		return 0, false
	}
	return id, true
}

type personJSON struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

type reportEntryJSON struct {
	ID           int64       `json:"id"`
	Name         string      `json:"name"`
	Description  string      `json:"description,omitempty"`
	ReportStatus string      `json:"reportStatus,omitempty"`
	CreatedBy    *personJSON `json:"createdBy,omitempty"`
	ModifiedBy   *personJSON `json:"modifiedBy,omitempty"`
	CreatedAt    string      `json:"createdAt,omitempty"`
	ModifiedAt   string      `json:"modifiedAt,omitempty"`
}

type reportListJSON struct {
	EndOfList bool              `json:"endOfList"`
	Results   []reportEntryJSON `json:"results"`
}

func person(p *Person) *personJSON {
	if p == nil {
		return nil
	}
	return &personJSON{ID: p.ID, Name: p.Name}
}

// listTime writes a time of the report list as the published example
// does ("2021-05-10T14:25:04.96388Z", gw report: getReports): in UTC, to
// the microsecond, without trailing zeros in the fraction (none for a
// whole second).
func listTime(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)
}

func (f *Fake) handleReportList(w http.ResponseWriter, r *http.Request) {
	number, size, filters, ok := readPage(w, r)
	if !ok {
		return
	}
	if filters != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "the report list takes no filters")
		return
	}
	s := &f.reports
	s.mu.Lock()
	defs := make([]Report, 0, len(s.reports))
	for _, rep := range s.reports {
		defs = append(defs, rep.def)
	}
	s.mu.Unlock()
	slices.SortFunc(defs, func(a, b Report) int { return cmp.Compare(a.ID, b.ID) })
	lo, hi, last := pageBounds(number, size, len(defs))
	out := reportListJSON{EndOfList: last, Results: []reportEntryJSON{}}
	for _, d := range defs[lo:hi] {
		out.Results = append(out.Results, reportEntryJSON{
			ID: d.ID, Name: d.Name, Description: d.Description, ReportStatus: d.Status,
			CreatedBy: person(d.CreatedBy), ModifiedBy: person(d.ModifiedBy),
			CreatedAt: listTime(d.CreatedAt), ModifiedAt: listTime(d.ModifiedAt),
		})
	}
	writeJSON(w, http.StatusOK, out)
}

// writeRows answers a report data page: rows [lo, hi) of rs, or the
// listed rows of rs when idx is not nil.
func writeRows(w http.ResponseWriter, version int64, last bool, rs rowSet, lo, hi int, idx []int) {
	b := make([]byte, 0, 64)
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, version, 10)
	b = append(b, `,"endOfList":`...)
	b = strconv.AppendBool(b, last)
	b = append(b, `,"results":[`...)
	w.Header().Set("Content-Type", "application/json")
	if idx == nil {
		body := rs.rangeBytes(lo, hi)
		w.Header().Set("Content-Length", strconv.Itoa(len(b)+len(body)+3))
		w.WriteHeader(http.StatusOK)
		w.Write(b)
		w.Write(body)
		w.Write([]byte("]}\n"))
		return
	}
	for i, k := range idx[lo:hi] {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, rs.object(k)...)
	}
	b = append(b, "]}\n"...)
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// rowCheckEvery is how many rows the row loops go through between checks
// of the request's context, so that a client that leaves stops the work.
const rowCheckEvery = 256

// filterRows returns the indexes of the rows of rs that pass p. It stops
// with ctx's error when ctx ends.
func filterRows(ctx context.Context, rs rowSet, cols []Column, p predicate) ([]int, error) {
	idx := []int{}
	for i := range rs.len() {
		if i%rowCheckEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		vals, err := rs.values(i, cols)
		if err != nil {
			return nil, err
		}
		if p(vals) {
			idx = append(idx, i)
		}
	}
	return idx, nil
}

func (f *Fake) handleReportData(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "reportId")
	if !ok {
		return
	}
	number, size, filters, ok := readPage(w, r)
	if !ok {
		return
	}
	def, version, rs, ok := f.reportOr404(w, id)
	if !ok {
		return
	}
	pred, ok := f.filterOr400(w, filters, def.Columns)
	if !ok {
		return
	}
	var idx []int
	n := rs.len()
	if pred != nil {
		var err error
		if idx, err = filterRows(r.Context(), rs, def.Columns, pred); err != nil {
			if r.Context().Err() != nil {
				return // the client left; nobody reads an answer
			}
			writeError(w, http.StatusInternalServerError, "internal", "reading rows: %v", err)
			return
		}
		n = len(idx)
	}
	lo, hi, last := pageBounds(number, size, n)
	writeRows(w, version, last, rs, lo, hi, idx)
}

type viewIDJSON struct {
	ViewID int64 `json:"viewId"`
}

// handlePrepareExport snapshots the report into a new view. Its body, if
// any, is ignored (the interface shows no fields).
func (f *Fake) handlePrepareExport(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "reportId")
	if !ok {
		return
	}
	viewID, ok := f.prepareView(id)
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "report %d not found", id)
		return
	}
	writeJSON(w, http.StatusOK, viewIDJSON{ViewID: viewID})
}

// viewStatusJSON is the answer of the view status route: only viewStatus,
// as the published example ({"viewStatus": "RUNNING"}) shows.
type viewStatusJSON struct {
	ViewStatus string `json:"viewStatus"`
}

// viewJSON is the fake's own answer about a view: the view metadata
// route's shape (with RowCount), and the view status route's with
// WithViewStatusDetail.
type viewJSON struct {
	ViewID     int64  `json:"viewId"`
	ReportID   int64  `json:"reportId"`
	ViewStatus string `json:"viewStatus"`
	Version    int64  `json:"version"`
	CreatedAt  string `json:"createdAt"`
	RowCount   *int   `json:"rowCount,omitempty"`
}

// WithViewStatusDetail makes the view status route
// (GET /report/v1/view/{viewId}/status) answer, beside viewStatus, the
// fake's own members viewId, reportId, version and createdAt. The
// deployed service publishes viewStatus alone, which the fake answers by
// default; the view metadata route (GET /report/v1/view/{viewId}) always
// carries them.
func WithViewStatusDetail() Option { return func(f *Fake) { f.deploy.viewStatusDetail = true } }

func (f *Fake) handleViewStatus(w http.ResponseWriter, r *http.Request) {
	f.writeView(w, r, false)
}

// writeView answers a view's status, or its metadata (with its row count)
// when meta is set.
func (f *Fake) writeView(w http.ResponseWriter, r *http.Request, meta bool) {
	id, ok := pathID(w, r, "viewId")
	if !ok {
		return
	}
	v, ok := f.viewOr404(w, id)
	if !ok {
		return
	}
	status := v.status(f.clock.Now())
	if !meta && !f.deploy.viewStatusDetail {
		writeJSON(w, http.StatusOK, viewStatusJSON{ViewStatus: status})
		return
	}
	out := viewJSON{
		ViewID: v.id, ReportID: v.reportID, ViewStatus: status,
		Version: v.version, CreatedAt: v.created.UTC().Format(time.RFC3339),
	}
	if meta {
		n := v.rows.len()
		out.RowCount = &n
	}
	writeJSON(w, http.StatusOK, out)
}

// handleViewData serves a view's snapshot: 404 once the view is deleted,
// 400 while it is not ready or when it failed.
func (f *Fake) handleViewData(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "viewId")
	if !ok {
		return
	}
	number, size, filters, ok := readPage(w, r)
	if !ok {
		return
	}
	if filters != nil {
		// A view is a snapshot of the whole report; filter real-time data
		// or chart data instead.
		writeError(w, http.StatusBadRequest, "invalid_request", "view data takes no filters")
		return
	}
	v, ok := f.viewOr404(w, id)
	if !ok {
		return
	}
	switch st := v.status(f.clock.Now()); st {
	case viewSuccess:
	case viewDeleted:
		writeError(w, http.StatusNotFound, "not_found", "view %d was deleted (views live %s)", id, viewLifetime)
		return
	default:
		writeError(w, http.StatusBadRequest, "view_not_ready", "view %d is %s, its data can be read once it is %s", id, st, viewSuccess)
		return
	}
	lo, hi, last := pageBounds(number, size, v.rows.len())
	writeRows(w, v.version, last, v.rows, lo, hi, nil)
}

// String makes a view printable in test failures.
func (v view) String() string {
	return fmt.Sprintf("view %d of report %d (version %d, %d rows)", v.id, v.reportID, v.version, v.rows.len())
}

// reportOr404 snapshots the report's rows, or answers 404.
func (f *Fake) reportOr404(w http.ResponseWriter, id int64) (Report, int64, rowSet, bool) {
	def, version, rs, ok := f.snapshotReport(id)
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "report %d not found", id)
	}
	return def, version, rs, ok
}

// reportDefOr404 returns the report's definition and version, or answers
// 404.
func (f *Fake) reportDefOr404(w http.ResponseWriter, id int64) (Report, int64, bool) {
	def, version, ok := f.reportDef(id)
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "report %d not found", id)
	}
	return def, version, ok
}

// viewOr404 finds the view, or answers 404.
func (f *Fake) viewOr404(w http.ResponseWriter, id int64) (view, bool) {
	v, ok := f.lookupView(id)
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "view %d not found", id)
	}
	return v, ok
}

// filterOr400 compiles a filter group over cols, or answers 400 naming
// what is wrong. A nil group gives a nil predicate (every row).
func (f *Fake) filterOr400(w http.ResponseWriter, g *filterGroup, cols []Column) (predicate, bool) {
	pred, err := compileFilter(g, cols, f.clock.Now())
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_filter", "%v", err)
		return nil, false
	}
	return pred, true
}
