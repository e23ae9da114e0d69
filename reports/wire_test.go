package reports_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/partnerapi/partner-go/internal/paging"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/reports"
)

const base = mocktest.BaseURL

// expect answers method+path with resp after checking that the request
// body is exactly body.
func expect(t *testing.T, mt *httpmock.MockTransport, method, path, body, resp string) {
	mt.RegisterResponder(method, base+path, func(r *http.Request) (*http.Response, error) {
		var got []byte
		if r.Body != nil {
			got, _ = io.ReadAll(r.Body)
		}
		if string(got) != body {
			t.Errorf("%s %s body:\n got %s\nwant %s", method, path, got, body)
		}
		if r.Header.Get("Authorization") != "Bearer "+mocktest.AccessToken {
			t.Errorf("%s %s: Authorization %q", method, path, r.Header.Get("Authorization"))
		}
		return httpmock.NewStringResponse(200, resp), nil
	})
}

func TestWireList(t *testing.T) {
	c, mt := mocktest.New(t)
	expect(t, mt, "POST", "/report/v1/list", `{"page":{"number":0,"size":100}}`, `{
		"endOfList": true,
		"results": [
			{"id": 1001, "name": "Pipeline", "description": "Open deals", "reportStatus": "PUBLISHED",
			 "createdBy": {"id": "u-1", "name": "Una"}, "modifiedBy": {"id": "u-2"},
			 "createdAt": "2026-01-15T09:30:00Z", "modifiedAt": "2026-01-16T10:00:00Z"},
			{"id": 1002, "name": "Archive", "reportStatus": "ARCHIVED"}
		]}`)
	got, err := paging.Collect(c.Reports.List(context.Background(), reports.ListParams{}))
	if err != nil {
		t.Fatal(err)
	}
	want0 := reports.Report{ID: 1001, Name: "Pipeline", Description: "Open deals", Status: reports.StatusPublished,
		CreatedBy: &reports.Person{ID: "u-1", Name: "Una"}, ModifiedBy: &reports.Person{ID: "u-2"},
		CreatedAt: time.Date(2026, 1, 15, 9, 30, 0, 0, time.UTC), ModifiedAt: time.Date(2026, 1, 16, 10, 0, 0, 0, time.UTC)}
	if len(got) != 2 || got[0].ID != want0.ID || *got[0].CreatedBy != *want0.CreatedBy || *got[0].ModifiedBy != *want0.ModifiedBy ||
		!got[0].CreatedAt.Equal(want0.CreatedAt) || !got[0].ModifiedAt.Equal(want0.ModifiedAt) || got[0].Status != want0.Status || got[0].Description != want0.Description {
		t.Errorf("got %+v", got)
	}
	if got[1].Status != "ARCHIVED" {
		t.Errorf("an unknown status is kept: %q", got[1].Status)
	}
}

func TestWireDataWithFilters(t *testing.T) {
	c, mt := mocktest.New(t)
	expect(t, mt, "POST", "/report/v1/42/data",
		`{"page":{"number":0,"size":2},"filters":{"op":"AND","group":[{"op":"OR","fieldFilters":[{"type":"NUMBER","colId":"amount","filter":{"op":"BETWEEN","negate":false,"values":["1","9"]}}]}],"fieldFilters":[{"type":"TEXT","colId":"stage","filter":{"op":"EQUAL_TO","negate":true,"values":["lost"]}}]}}`,
		`{"version": 7, "endOfList": true, "results": [{"stage": "won", "amount": 5, "owner": null}, {"amount": 2.50, "stage": "open"}]}`)
	f := reports.And(reports.Text("stage").EqualTo("lost").Not(), reports.Or(reports.Number("amount").Between("1", "9")))
	var pages []*reports.Page
	for p, err := range c.Reports.DataPages(context.Background(), 42, reports.DataParams{PageSize: 2, Filters: &f}) {
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, p)
	}
	if len(pages) != 1 || pages[0].Version != 7 || !pages[0].EndOfList || len(pages[0].Rows) != 2 {
		t.Fatalf("pages %+v", pages)
	}
	r0, r1 := pages[0].Rows[0], pages[0].Rows[1]
	if !slices.Equal(r0.Columns(), []string{"stage", "amount", "owner"}) || !slices.Equal(r1.Columns(), []string{"amount", "stage"}) {
		t.Errorf("columns %q, %q", r0.Columns(), r1.Columns())
	}
	if r1.Text("amount") != "2.50" {
		t.Errorf("a number keeps its text: %q", r1.Text("amount"))
	}
}

func TestWireViews(t *testing.T) {
	c, mt := mocktest.New(t)
	ctx := context.Background()
	expect(t, mt, "POST", "/report/v1/view/42/prepare_export", `{}`, `{"viewId": 9000000001}`)
	viewID, err := c.Reports.PrepareExport(ctx, 42)
	if err != nil || viewID != 9000000001 {
		t.Fatalf("PrepareExport = %d, %v", viewID, err)
	}
	// The published example carries only viewStatus; the view is the one
	// asked about, whatever else the body holds.
	expect(t, mt, "GET", "/report/v1/view/9000000001/status", ``, `{"viewStatus": "RUNNING"}`)
	st, err := c.Reports.ViewStatus(ctx, viewID)
	if err != nil || st.Status != reports.ViewRunning || st.ViewID != viewID {
		t.Errorf("ViewStatus of the published example = %+v, %v", st, err)
	}
	expect(t, mt, "GET", "/report/v1/view/9000000001/status", ``, `{"viewId": 17, "viewStatus": "ARCHIVING"}`)
	st, err = c.Reports.ViewStatus(ctx, viewID)
	if err != nil || st.Status != "ARCHIVING" || st.ViewID != viewID {
		t.Errorf("ViewStatus = %+v, %v", st, err)
	}
	expect(t, mt, "POST", "/report/v1/view/9000000001/data", `{"page":{"number":0,"size":100}}`,
		`{"version": 3, "endOfList": true, "results": [{"a": "x"}]}`)
	rows, err := paging.Collect(c.Reports.ViewData(ctx, viewID, reports.ViewDataParams{}))
	if err != nil || len(rows) != 1 || rows[0].Text("a") != "x" {
		t.Errorf("ViewData = %v, %v", rows, err)
	}
}

func TestWireCharts(t *testing.T) {
	c, mt := mocktest.New(t)
	ctx := context.Background()
	expect(t, mt, "POST", "/report/v1/42/chart-data",
		`{"filters":{"op":"AND","fieldFilters":[{"type":"TEXT","colId":"region","filter":{"op":"EQUAL_TO","negate":false,"values":["EMEA"]}}]},"chartIds":[1,2]}`,
		`{"reportVersion": 3, "reportName": "Pipeline", "charts": [{"id": 1, "version": 3, "name": "By stage", "results": [{"stage": "won", "count": 2}]}]}`)
	f := reports.And(reports.Text("region").EqualTo("EMEA"))
	got, err := c.Reports.ChartData(ctx, 42, reports.ChartDataParams{Filters: &f, ChartIDs: []int64{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if got.ReportVersion != 3 || got.ReportName != "Pipeline" || len(got.Charts) != 1 || got.Charts[0].Version != 3 ||
		!slices.Equal(got.Charts[0].Results[0].Columns(), []string{"stage", "count"}) {
		t.Errorf("chart data %+v", got)
	}
	expect(t, mt, "POST", "/report/v1/42/chart-metadata", `{"chartIds":[1]}`,
		`{"charts": [{"id": 1, "name": "By stage", "version": 3, "axis": {"x": "stage"}}], "layout": "grid"}`)
	meta, err := c.Reports.ChartMetadata(ctx, 42, reports.ChartMetadataParams{ChartIDs: []int64{1}})
	if err != nil {
		t.Fatal(err)
	}
	infos, err := meta.Charts()
	if err != nil || len(infos) != 1 || infos[0] != (reports.ChartInfo{ID: 1, Version: 3, Name: "By stage"}) {
		t.Errorf("Charts() = %+v, %v", infos, err)
	}
	if !strings.Contains(string(meta.Raw), `"layout": "grid"`) {
		t.Errorf("raw metadata lost: %s", meta.Raw)
	}
}

// TestWireChartsEmptyParams: zero params ask for charts with an empty
// list of ids, never a null one, for data and metadata alike.
func TestWireChartsEmptyParams(t *testing.T) {
	c, mt := mocktest.New(t)
	ctx := context.Background()
	expect(t, mt, "POST", "/report/v1/42/chart-data", `{"chartIds":[]}`, `{"reportVersion": 1, "charts": []}`)
	if _, err := c.Reports.ChartData(ctx, 42, reports.ChartDataParams{}); err != nil {
		t.Fatal(err)
	}
	expect(t, mt, "POST", "/report/v1/42/chart-metadata", `{"chartIds":[]}`, `{"charts": []}`)
	if _, err := c.Reports.ChartMetadata(ctx, 42, reports.ChartMetadataParams{}); err != nil {
		t.Fatal(err)
	}
}
