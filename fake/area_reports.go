package fake

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/partnerapi/partner-go/fake/demo"
)

// This file is the reports area of the fake: report definitions, their
// rows, views and seeding. Routes are in reports_http.go (charts in
// reports_charts.go, metadata in reports_metadata.go), row storage in
// reports_rows.go, filters in reports_filter.go.

// Report statuses (reportStatus).
const (
	reportDraft     = "DRAFT"
	reportPublished = "PUBLISHED"
)

// Column types a report column may declare; they are also the filter
// types that apply to the column.
const (
	columnText           = "TEXT"
	columnTextRepeated   = "TEXT_REPEATED"
	columnTextPGArray    = "TEXT_PG_ARRAY"
	columnBoolean        = "BOOLEAN"
	columnNumber         = "NUMBER"
	columnDecimal        = "DECIMAL"
	columnDate           = "DATE"
	columnDateOffset     = "DATE_OFFSET"
	columnDateTime       = "DATE_TIME"
	columnDateTimeOffset = "DATE_TIME_OFFSET"
	columnCurrency       = "CURRENCY"
)

// View statuses (viewStatus of GET /report/v1/view/{viewId}/status).
const (
	viewPending = "PENDING"
	viewRunning = "RUNNING"
	viewSuccess = "SUCCESS"
	viewFailed  = "FAILED"
	viewDeleted = "DELETED"
)

// How a view moves through its states by default, measured on the fake's
// clock (WithViewDelay changes the first two).
const (
	ViewPendingFor = 100 * time.Millisecond // PENDING for this long after prepare
	ViewRunningFor = 150 * time.Millisecond // then RUNNING for this long, then SUCCESS
	viewLifetime   = 24 * time.Hour         // then DELETED, its data 404
)

// WithViewDelay sets how long a report view takes to be ready after it
// was prepared, as WithBulkDelay does for bulk executions, measured on
// the fake's clock (default ViewPendingFor+ViewRunningFor): it is PENDING
// for the first two fifths of d, RUNNING for the rest, then SUCCESS
// (FAILED for a report with FailViews). Zero (or less) makes views ready
// at once, so an export in a test waits for nothing.
func WithViewDelay(d time.Duration) Option {
	d = max(d, 0)
	return func(f *Fake) {
		f.reports.pendingFor, f.reports.runningFor, f.reports.delaySet = d*2/5, d-d*2/5, true
	}
}

// Person is who created or modified a report.
type Person struct {
	ID   string
	Name string
}

// Column is a column of a report. Rows are JSON objects keyed by Name
// (ID when Name is empty), in column order; filters name columns by ID.
type Column struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	// Type is the column's type, which also names the filters that
	// apply to it: "TEXT" (the default when ""), "TEXT_REPEATED",
	// "TEXT_PG_ARRAY", "BOOLEAN", "NUMBER", "DECIMAL", "DATE",
	// "DATE_OFFSET", "DATE_TIME", "DATE_TIME_OFFSET" or "CURRENCY".
	Type string `json:"type,omitempty"`
}

// Chart groups a report's rows by one column and counts each group. Its
// results are objects {"<column name>": value, "count": n}, ordered by
// value.
type Chart struct {
	ID      int64  `json:"id"`
	Name    string `json:"name,omitempty"`
	GroupBy string `json:"group_by"` // column ID
}

// Report is a report definition with its rows. The rows come from exactly
// one of Rows, Generate or ObjectType. The JSON names are those of the
// Seed format; the members without one are for Go callers only.
type Report struct {
	ID          int64     `json:"id,omitempty"` // 0: assigned by AddReport
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Status      string    `json:"status,omitempty"` // "DRAFT" or "PUBLISHED" (the default when "")
	CreatedBy   *Person   `json:"-"`
	ModifiedBy  *Person   `json:"-"`
	CreatedAt   time.Time `json:"-"` // zero: the fake's clock at AddReport
	ModifiedAt  time.Time `json:"-"` // zero: CreatedAt
	Columns     []Column  `json:"columns"`
	Charts      []Chart   `json:"charts,omitempty"`

	// Rows holds the values of each row in column order: string, bool,
	// nil, any integer or float type, time.Time (written in RFC 3339),
	// []string, or anything encoding/json can encode.
	Rows [][]any `json:"rows,omitempty"`
	// Generate, with RowCount, produces row i on demand instead of Rows.
	// The rows are encoded once, the first time the report is read, so a
	// generated report costs nothing until it is used. Generate must be a
	// pure function of i.
	Generate func(i int) []any `json:"-"`
	RowCount int               `json:"-"`
	// ObjectType, when set, backs the report by the stored objects of
	// that type (Fake.Objects): one row per object, ordered by object id,
	// each column ID a dotted field name. The report's version moves when
	// such an object is created, updated or deleted.
	ObjectType string `json:"object_type,omitempty"`

	// FailViews makes every view of the report end FAILED instead of
	// SUCCESS.
	FailViews bool `json:"fail_views,omitempty"`
}

type report struct {
	def     Report // Rows and Generate dropped once encoded
	version int64
	rows    rowSet
	ready   bool // rows hold the current content
	keys    [][]byte
}

type view struct {
	id       int64
	reportID int64
	created  time.Time
	// pendingFor and runningFor are the fake's (WithViewDelay), copied
	// here so that status needs only the view.
	pendingFor, runningFor time.Duration
	failed                 bool
	version                int64
	rows                   rowSet // immutable snapshot
}

type reportsStore struct {
	mu       sync.Mutex
	reports  map[int64]*report
	views    map[int64]*view
	nextID   int64
	nextView int64
	observed bool

	pendingFor, runningFor time.Duration // WithViewDelay
	delaySet               bool
}

// AddReport stores a report (replacing one with the same ID) and returns
// its ID. It panics when the definition is inconsistent (a row whose
// length differs from the columns, a chart grouping by an unknown
// column), since that is a mistake in the test.
func (f *Fake) AddReport(r Report) int64 {
	if err := checkReport(r); err != nil {
		panic("fake: AddReport: " + err.Error())
	}
	r.Columns = slices.Clone(r.Columns)
	for i := range r.Columns {
		if r.Columns[i].Name == "" {
			r.Columns[i].Name = r.Columns[i].ID
		}
		if r.Columns[i].Type == "" {
			r.Columns[i].Type = columnText
		}
	}
	r.Charts = slices.Clone(r.Charts)
	if r.Status == "" {
		r.Status = reportPublished
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = f.clock.Now().UTC()
	}
	if r.ModifiedAt.IsZero() {
		r.ModifiedAt = r.CreatedAt
	}
	if r.Rows != nil {
		r.Rows = slices.Clone(r.Rows)
	}
	s := &f.reports
	s.mu.Lock()
	if s.reports == nil {
		s.reports = map[int64]*report{}
		s.views = map[int64]*view{}
	}
	if r.ID == 0 {
		s.nextID++
		for s.reports[s.nextID] != nil {
			s.nextID++
		}
		r.ID = s.nextID
	}
	s.reports[r.ID] = &report{def: r, version: 1, keys: columnKeys(r.Columns)}
	observe := r.ObjectType != "" && !s.observed
	s.observed = s.observed || observe
	s.mu.Unlock()
	if observe {
		f.onObjectChange(f.reportObjectChanged)
	}
	return r.ID
}

func checkReport(r Report) error {
	cols := map[string]bool{}
	for _, c := range r.Columns {
		if c.ID == "" {
			return fmt.Errorf("report %q: a column has no ID", r.Name)
		}
		if cols[c.ID] {
			return fmt.Errorf("report %q: column %q twice", r.Name, c.ID)
		}
		cols[c.ID] = true
		if c.Type != "" && !knownColumnType(c.Type) {
			return fmt.Errorf("report %q: column %q has unknown type %q", r.Name, c.ID, c.Type)
		}
	}
	sources := 0
	for _, set := range []bool{r.Rows != nil, r.Generate != nil, r.ObjectType != ""} {
		if set {
			sources++
		}
	}
	if sources > 1 {
		return fmt.Errorf("report %q: set only one of Rows, Generate and ObjectType", r.Name)
	}
	for i, row := range r.Rows {
		if len(row) != len(r.Columns) {
			return fmt.Errorf("report %q: row %d has %d values for %d columns", r.Name, i, len(row), len(r.Columns))
		}
	}
	for _, ch := range r.Charts {
		if !cols[ch.GroupBy] {
			return fmt.Errorf("report %q: chart %d groups by unknown column %q", r.Name, ch.ID, ch.GroupBy)
		}
	}
	return nil
}

// AppendReportRows adds rows at the end of a report's content and moves
// its version on. Views prepared before keep their snapshot. It reports
// whether the report exists; it panics on a row of the wrong length.
func (f *Fake) AppendReportRows(id int64, rows ...[]any) bool {
	return f.editReportRows(id, func(r *report) {
		r.rows = r.rows.appendRows(r.keys, rows) // append never touches a snapshot's bytes
	})
}

// SetReportRows replaces a report's rows and moves its version on.
func (f *Fake) SetReportRows(id int64, rows [][]any) bool {
	return f.editReportRows(id, func(r *report) {
		r.rows = rowSet{}.appendRows(r.keys, rows)
	})
}

func (f *Fake) editReportRows(id int64, edit func(r *report)) bool {
	s := &f.reports
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reports[id]
	if r == nil {
		return false
	}
	if r.def.ObjectType != "" {
		panic(fmt.Sprintf("fake: report %d is backed by objects: change the objects instead", id))
	}
	f.materialize(r)
	edit(r)
	r.version++
	r.def.ModifiedAt = f.clock.Now().UTC()
	return true
}

// DeleteReport removes a report; its views stay readable.
func (f *Fake) DeleteReport(id int64) bool {
	s := &f.reports
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.reports[id]
	delete(s.reports, id)
	return ok
}

// ReportVersion returns the version of a report's content.
func (f *Fake) ReportVersion(id int64) (int64, bool) {
	_, version, ok := f.reportDef(id)
	return version, ok
}

// reportDef returns a report's definition and version without building
// its rows.
func (f *Fake) reportDef(id int64) (Report, int64, bool) {
	s := &f.reports
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reports[id]
	if r == nil {
		return Report{}, 0, false
	}
	return r.def, r.version, true
}

// ReportViews returns the IDs of the views prepared for a report.
func (f *Fake) ReportViews(reportID int64) []int64 {
	s := &f.reports
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []int64
	for id, v := range s.views {
		if v.reportID == reportID {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// reportObjectChanged moves the version of the reports backed by the
// changed object's type.
func (f *Fake) reportObjectChanged(c objectChange) {
	s := &f.reports
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.reports {
		if r.def.ObjectType != "" && r.def.ObjectType == c.Object.Type {
			r.version++
			r.ready = false
			r.def.ModifiedAt = c.At.UTC()
		}
	}
}

// materialize brings r.rows up to date. Called with s.mu held.
func (f *Fake) materialize(r *report) {
	if r.ready {
		return
	}
	switch {
	case r.def.ObjectType != "":
		objs := f.Objects(r.def.ObjectType) // the objects lock is never taken around s.mu
		vals := make([]any, len(r.def.Columns))
		var rs rowSet
		for _, o := range objs {
			for i, c := range r.def.Columns {
				vals[i], _ = o.Field(c.ID)
			}
			rs = rs.appendRow(r.keys, vals)
		}
		r.rows = rs
	case r.def.Generate != nil:
		var rs rowSet
		rs.grow(r.def.RowCount)
		for i := range r.def.RowCount {
			rs = rs.appendRow(r.keys, r.def.Generate(i))
			if i == 63 {
				rs.reserve(r.def.RowCount) // sized by the first 64 rows
			}
		}
		r.rows = rs
		r.def.Generate = nil
	default:
		r.rows = rowSet{}.appendRows(r.keys, r.def.Rows)
		r.def.Rows = nil
	}
	r.ready = true
}

// snapshotReport returns the report's definition, version and current
// rows (immutable), or false when it does not exist.
func (f *Fake) snapshotReport(id int64) (Report, int64, rowSet, bool) {
	s := &f.reports
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reports[id]
	if r == nil {
		return Report{}, 0, rowSet{}, false
	}
	f.materialize(r)
	return r.def, r.version, r.rows, true
}

// viewStatus is the status of v at now.
func (v view) status(now time.Time) string {
	age := now.Sub(v.created)
	switch {
	case age >= viewLifetime:
		return viewDeleted
	case age < v.pendingFor:
		return viewPending
	case age < v.pendingFor+v.runningFor:
		return viewRunning
	case v.failed:
		return viewFailed
	default:
		return viewSuccess
	}
}

// prepareView snapshots the report's rows into a new view.
func (f *Fake) prepareView(reportID int64) (int64, bool) {
	s := &f.reports
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reports[reportID]
	if r == nil {
		return 0, false
	}
	f.materialize(r)
	if s.nextView == 0 {
		s.nextView = 7000
	}
	s.nextView++
	if s.nextView%64 == 0 {
		s.sweepViews(f.clock.Now())
	}
	s.views[s.nextView] = &view{
		id: s.nextView, reportID: reportID, created: f.clock.Now(), failed: r.def.FailViews,
		pendingFor: s.pendingFor, runningFor: s.runningFor,
		version: r.version, rows: r.rows,
	}
	return s.nextView, true
}

// sweepViews releases the rows of deleted views and forgets views deleted
// for another viewLifetime (their status is then a 404), so that a
// long-running fake does not keep every snapshot it ever made.
func (s *reportsStore) sweepViews(now time.Time) {
	for id, v := range s.views {
		switch age := now.Sub(v.created); {
		case age >= 2*viewLifetime:
			delete(s.views, id)
		case age >= viewLifetime:
			v.rows = rowSet{}
		}
	}
}

// lookupView returns a copy of the view with id. A deleted view's rows
// are released then.
func (f *Fake) lookupView(id int64) (view, bool) {
	s := &f.reports
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.views[id]
	if v == nil {
		return view{}, false
	}
	if v.status(f.clock.Now()) == viewDeleted {
		v.rows = rowSet{}
	}
	return *v, true
}

// dealTexts are the partner names and registration dates of the demo's
// large report, formatted once per process: its generator looks them up
// for each of its 100,000 rows.
type dealTexts struct {
	partners [250]string
	days     [365]string
}

var demoDealTexts = sync.OnceValue(func() *dealTexts {
	t := new(dealTexts)
	for i := range t.partners {
		t.partners[i] = fmt.Sprintf("Partner %03d", i+1)
	}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range t.days {
		t.days[i] = base.AddDate(0, 0, i).Format(time.DateOnly)
	}
	return t
})

// seedReportsDemo adds the reports part of the demo data set: three small
// reports, one of them backed by the demo opportunities, and a large one
// of 100,000 generated rows; all have charts.
func (f *Fake) seedReportsDemo() {
	admin := &Person{ID: "usr-demo-admin", Name: "Demo Admin"}
	created := time.Date(2026, 1, 15, 9, 30, 4, 963880000, time.UTC) // "2026-01-15T09:30:04.96388Z", as the published example writes times
	f.AddReport(Report{
		ID: demo.ReportPipeline, Name: "Pipeline by stage", Description: "Open opportunities and their stage",
		CreatedBy: admin, ModifiedBy: admin, CreatedAt: created,
		Columns: []Column{
			{ID: "name", Name: "Opportunity", Type: columnText},
			{ID: "stage", Name: "Stage", Type: columnText},
			{ID: "amount", Name: "Amount", Type: columnCurrency},
		},
		ObjectType: "opportunity",
		Charts:     []Chart{{ID: 1, Name: "Opportunities by stage", GroupBy: "stage"}},
	})
	regions := []string{"EMEA", "NA", "APAC", "LATAM"}
	tiers := []string{"Gold", "Silver", "Registered"}
	f.AddReport(Report{
		ID: demo.ReportPartners, Name: "Partners", Description: "Partner directory",
		CreatedBy: admin, CreatedAt: created, Status: reportPublished,
		Columns: []Column{
			{ID: "partner_id", Name: "Partner ID", Type: columnNumber},
			{ID: "partner_name", Name: "Partner", Type: columnText},
			{ID: "region", Name: "Region", Type: columnText},
			{ID: "tier", Name: "Tier", Type: columnText},
			{ID: "active", Name: "Active", Type: columnBoolean},
		},
		Generate: func(i int) []any {
			return []any{i + 1, fmt.Sprintf("Partner %03d", i+1), regions[i%len(regions)], tiers[i%len(tiers)], i%5 != 0}
		},
		RowCount: 25,
		Charts: []Chart{
			{ID: 1, Name: "Partners by region", GroupBy: "region"},
			{ID: 2, Name: "Partners by tier", GroupBy: "tier"},
		},
	})
	f.AddReport(Report{
		ID: demo.ReportDraft, Name: "Quarterly targets (draft)", Status: reportDraft,
		CreatedBy: admin, CreatedAt: created,
		Columns: []Column{{ID: "quarter", Name: "Quarter"}, {ID: "target", Name: "Target", Type: columnDecimal}},
		Rows:    [][]any{{"2026-Q1", 125000.5}, {"2026-Q2", 150000}, {"2026-Q3", 160000}, {"2026-Q4", 210000}},
	})
	stages := []string{"prospecting", "qualification", "proposal", "negotiation", "closed"}
	f.AddReport(Report{
		ID: demo.ReportLarge, Name: "Deal registrations", Description: "Every deal registration, 100,000 rows",
		CreatedBy: admin, ModifiedBy: admin, CreatedAt: created,
		Columns: []Column{
			{ID: "deal_id", Name: "Deal ID", Type: columnNumber},
			{ID: "partner", Name: "Partner", Type: columnText},
			{ID: "region", Name: "Region", Type: columnText},
			{ID: "stage", Name: "Stage", Type: columnText},
			{ID: "amount", Name: "Amount", Type: columnCurrency},
			{ID: "registered", Name: "Registered", Type: columnDate},
		},
		Generate: func(i int) []any {
			t := demoDealTexts()
			return []any{100000 + i, t.partners[i%len(t.partners)], regions[i%len(regions)],
				stages[(i/7)%len(stages)], float64(1000+(i*7919)%99000) + 0.5, t.days[i%len(t.days)]}
		},
		RowCount: demo.ReportLargeRows,
		Charts: []Chart{
			{ID: 1, Name: "Deals by stage", GroupBy: "stage"},
			{ID: 2, Name: "Deals by region", GroupBy: "region"},
		},
	})
}
