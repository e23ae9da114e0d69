package reports_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/paging"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/reports"
)

// The deployed service's report metadata, data-schema and view metadata
// operations document no 200 shape: the SDK keeps the answer whole and
// types only what is safe.

func TestWireMetadata(t *testing.T) {
	c, mt := mocktest.New(t)
	ctx := context.Background()
	const answer = `{"reportId": 42, "reportName": "Pipeline", "extra": {"kept": [1, 2]},
		"columns": [{"id": "0", "name": "Deal", "type": "TEXT"}, {"id": 1, "name": "Stage", "type": "TEXT"}, {"name": "Amount", "type": "CURRENCY"}]}`
	expect(t, mt, "POST", "/report/v1/42/metadata", `{}`, answer)
	md, err := c.Reports.Metadata(ctx, 42)
	if err != nil {
		t.Fatal(err)
	}
	if string(md.Raw) != answer {
		t.Errorf("Raw = %s, want the answer untouched", md.Raw)
	}
	cols, err := md.Columns()
	want := []reports.Column{{ID: "0", Name: "Deal", Type: reports.TypeText}, {ID: "1", Name: "Stage", Type: reports.TypeText}, {ID: "2", Name: "Amount", Type: reports.TypeCurrency}}
	if err != nil || len(cols) != 3 || cols[0] != want[0] || cols[1] != want[1] || cols[2] != want[2] {
		t.Errorf("Columns = %+v, %v; want %+v", cols, err, want)
	}
	for name, wantID := range map[string]string{"Stage": "1", "stage": "1", "Amount": "2"} {
		if id, err := md.ColumnID(name); err != nil || id != wantID {
			t.Errorf("ColumnID(%q) = %q, %v; want %q", name, id, err, wantID)
		}
	}
	if _, err := md.ColumnID("Owner"); !errors.Is(err, reports.ErrNoColumn) {
		t.Errorf("ColumnID of a missing name: %v, want ErrNoColumn", err)
	}

	expect(t, mt, "POST", "/report/v1/42/data-schema", `{}`, `[{"colId": "0", "name": "Deal"}, {"colId": "1", "name": "deal"}]`)
	ds, err := c.Reports.DataSchema(ctx, 42)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := ds.ColumnID("deal"); err != nil || id != "1" {
		t.Errorf("exact name first: %q, %v", id, err)
	}
	if _, err := ds.ColumnID("DEAL"); err == nil {
		t.Error("two columns match DEAL without case: want an error")
	}

	// A shape with no columns is kept, and says so without failing.
	expect(t, mt, "POST", "/report/v1/43/metadata", `{}`, `{"something": "else"}`)
	md, err = c.Reports.Metadata(ctx, 43)
	if err != nil || string(md.Raw) != `{"something": "else"}` {
		t.Fatalf("Metadata = %v, %v", md, err)
	}
	if cols, err := md.Columns(); cols != nil || err != nil {
		t.Errorf("Columns of a shape without columns = %v, %v", cols, err)
	}
}

func TestWireMetadataErrors(t *testing.T) {
	c, mt := mocktest.New(t)
	ctx := context.Background()
	for status, is := range map[int]func(error) bool{400: partner.IsBadRequest, 404: partner.IsNotFound} {
		mt.RegisterResponder("POST", base+"/report/v1/7/metadata", httpmockStatus(status))
		mt.RegisterResponder("POST", base+"/report/v1/7/data-schema", httpmockStatus(status))
		mt.RegisterResponder("GET", base+"/report/v1/view/7", httpmockStatus(status))
		if _, err := c.Reports.Metadata(ctx, 7); !is(err) {
			t.Errorf("Metadata %d: %v", status, err)
		}
		if _, err := c.Reports.DataSchema(ctx, 7); !is(err) {
			t.Errorf("DataSchema %d: %v", status, err)
		}
		if _, err := c.Reports.ViewMetadata(ctx, 7); !is(err) {
			t.Errorf("ViewMetadata %d: %v", status, err)
		}
	}
}

func TestWireViewMetadata(t *testing.T) {
	c, mt := mocktest.New(t)
	ctx := context.Background()
	const answer = `{"viewId": 9000000001, "reportId": 42, "viewStatus": "SUCCESS", "createdAt": "2026-01-15T09:30:00Z", "rowCount": 1200, "more": true}`
	expect(t, mt, "GET", "/report/v1/view/9000000001", ``, answer)
	v, err := c.Reports.ViewMetadata(ctx, 9000000001)
	if err != nil {
		t.Fatal(err)
	}
	if string(v.Raw) != answer || v.ID != 9000000001 || v.ReportID != 42 || v.Status != reports.ViewSuccess ||
		!v.CreatedAt.Equal(time.Date(2026, 1, 15, 9, 30, 0, 0, time.UTC)) || v.RowCount != 1200 {
		t.Errorf("ViewMetadata = %+v", v)
	}
	// Members of another type or name leave the typed fields zero; Raw
	// still has everything.
	const other = `{"viewId": "v-1", "status": "DONE", "rowCount": 3}`
	expect(t, mt, "GET", "/report/v1/view/5", ``, other)
	v, err = c.Reports.ViewMetadata(ctx, 5)
	if err != nil || v.ID != 5 || v.Status != "" || v.RowCount != 3 || string(v.Raw) != other {
		t.Errorf("ViewMetadata of another shape = %+v, %v", v, err)
	}
	// The view's id may come as member id; viewId wins when both are there.
	expect(t, mt, "GET", "/report/v1/view/6", ``, `{"id": 6, "viewStatus": "RUNNING"}`)
	if v, err = c.Reports.ViewMetadata(ctx, 6); err != nil || v.ID != 6 || v.Status != reports.ViewRunning {
		t.Errorf("ViewMetadata with id = %+v, %v", v, err)
	}
	expect(t, mt, "GET", "/report/v1/view/8", ``, `{"id": 80, "viewId": 8}`)
	if v, err = c.Reports.ViewMetadata(ctx, 8); err != nil || v.ID != 8 {
		t.Errorf("ViewMetadata with id and viewId = %+v, %v", v, err)
	}
	expect(t, mt, "GET", "/report/v1/view/9", ``, `{"id": 90}`)
	if v, err = c.Reports.ViewMetadata(ctx, 9); err != nil || v.ID != 90 {
		t.Errorf("ViewMetadata with only id = %+v, %v", v, err)
	}
}

// TestWirePositionalColumnIDs sends a filter naming columns by position,
// as the deployed service's examples do.
func TestWirePositionalColumnIDs(t *testing.T) {
	c, mt := mocktest.New(t)
	expect(t, mt, "POST", "/report/v1/42/chart-data",
		`{"filters":{"op":"AND","fieldFilters":[{"type":"TEXT","colId":"0","filter":{"op":"EQUAL_TO","negate":false,"values":["EMEA"]}},{"type":"TEXT","colId":"1","filter":{"op":"EQUAL_TO","negate":true,"values":["lost"]}}]},"chartIds":[1]}`,
		`{"reportVersion": 3, "reportName": "Pipeline", "charts": []}`)
	f := reports.And(reports.Text("0").EqualTo("EMEA"), reports.Text("1").EqualTo("lost").Not())
	if _, err := c.Reports.ChartData(context.Background(), 42, reports.ChartDataParams{Filters: &f, ChartIDs: []int64{1}}); err != nil {
		t.Fatal(err)
	}
}

// TestMetadataAgainstFake reads the fake's metadata, finds a column's id
// by name and filters with it; reads a view's metadata.
func TestMetadataAgainstFake(t *testing.T) {
	srv, c := newClient(t, nil)
	ctx := context.Background()
	id := srv.AddReport(fake.Report{
		Name:    "Deals",
		Columns: []fake.Column{{ID: "deal", Name: "Deal"}, {ID: "stage", Name: "Stage"}, {ID: "amount", Name: "Amount", Type: "CURRENCY"}},
		Rows:    [][]any{{"Renewal", "won", 12000}, {"Expansion", "open", 5400.5}, {"Pilot", "won", 800}},
	})
	md, err := c.Reports.Metadata(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	cols, err := md.Columns()
	if err != nil || len(cols) != 3 || cols[2] != (reports.Column{ID: "2", Name: "Amount", Type: reports.TypeCurrency}) {
		t.Fatalf("Columns = %+v, %v", cols, err)
	}
	stage, err := md.ColumnID("Stage")
	if err != nil || stage != "1" {
		t.Fatalf("ColumnID(Stage) = %q, %v", stage, err)
	}
	won := reports.And(reports.Text(stage).EqualTo("won"))
	rows, err := paging.Collect(c.Reports.Data(ctx, id, reports.DataParams{Filters: &won}))
	if err != nil || len(rows) != 2 || rows[0].Text("Deal") != "Renewal" || rows[1].Text("Deal") != "Pilot" {
		t.Fatalf("filtered by position: %v, %v", rows, err)
	}
	ds, err := c.Reports.DataSchema(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if amount, err := ds.ColumnID("amount"); err != nil || amount != "2" {
		t.Errorf("DataSchema ColumnID(amount) = %q, %v", amount, err)
	}
	if _, err := c.Reports.Metadata(ctx, 999999); !partner.IsNotFound(err) {
		t.Errorf("metadata of an unknown report: %v", err)
	}

	viewID, err := c.Reports.PrepareExport(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.Reports.ViewMetadata(ctx, viewID)
	if err != nil {
		t.Fatal(err)
	}
	if v.ID != viewID || v.ReportID != id || v.Status != reports.ViewPending || v.CreatedAt.IsZero() || v.RowCount != 3 {
		t.Errorf("ViewMetadata = %+v", v)
	}
	if _, err := c.Reports.ViewMetadata(ctx, 999999); !partner.IsNotFound(err) {
		t.Errorf("view metadata of an unknown view: %v", err)
	}
}

func httpmockStatus(status int) func(*http.Request) (*http.Response, error) {
	return func(*http.Request) (*http.Response, error) {
		return httpmock.NewStringResponse(status, `{"error":"x","message":"refused"}`), nil
	}
}
