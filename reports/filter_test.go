package reports_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/reports"
)

var now = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// filterReport has one column of every filter type.
func filterReport(srv *fake.Server) int64 {
	return srv.AddReport(fake.Report{Name: "filters", Columns: []fake.Column{
		{ID: "name", Name: "Name", Type: "TEXT"},
		{ID: "tags", Name: "Tags", Type: "TEXT_REPEATED"},
		{ID: "pg", Name: "PG", Type: "TEXT_PG_ARRAY"},
		{ID: "ok", Name: "OK", Type: "BOOLEAN"},
		{ID: "n", Name: "N", Type: "NUMBER"},
		{ID: "amount", Name: "Amount", Type: "CURRENCY"},
		{ID: "day", Name: "Day", Type: "DATE"},
		{ID: "at", Name: "At", Type: "DATE_TIME"},
	}, Rows: [][]any{
		{"alpha", []string{"x", "y"}, "{red,green}", true, 1, 10.5, "2026-03-01", "2026-03-09T08:00:00Z"},
		{"beta", []string{}, "{}", false, 2, 20, "2026-02-01", "2026-01-01T00:00:00Z"},
		{"alphabet", []string{"y"}, "{blue}", true, 3, nil, "2026-03-10", "2026-03-10T11:00:00Z"},
		{"", nil, nil, nil, nil, 5, nil, nil},
	}, Charts: []fake.Chart{{ID: 7, Name: "By OK", GroupBy: "ok"}}})
}

func TestFiltersOfEveryType(t *testing.T) {
	srv, c := newClient(t, []fake.Option{fake.WithClock(fake.NewManualClock(now))})
	id := filterReport(srv)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		filter reports.FilterGroup
		want   []string
	}{
		{"text equal", reports.And(reports.Text("name").EqualTo("beta")), []string{"beta"}},
		{"text contain", reports.And(reports.Text("name").Contains("pha")), []string{"alpha", "alphabet"}},
		{"text start end", reports.And(reports.Text("name").StartsWith("al"), reports.Text("name").EndsWith("bet")), []string{"alphabet"}},
		{"text in negated", reports.And(reports.Text("name").In("alpha", "beta").Not()), []string{"alphabet", ""}},
		{"text empty", reports.And(reports.Text("name").IsEmpty()), []string{""}},
		{"repeated any element", reports.And(reports.TextRepeated("tags").EqualTo("y")), []string{"alpha", "alphabet"}},
		{"repeated empty", reports.And(reports.TextRepeated("tags").IsEmpty()), []string{"beta", ""}},
		{"pg array", reports.And(reports.TextPGArray("pg").In("green", "blue")), []string{"alpha", "alphabet"}},
		{"boolean", reports.And(reports.Boolean("ok").EqualTo("false")), []string{"beta"}},
		{"number between", reports.And(reports.Number("n").Between("2", "3")), []string{"beta", "alphabet"}},
		{"number gt", reports.And(reports.Number("n").GreaterThan("1")), []string{"beta", "alphabet"}},
		{"currency at most", reports.And(reports.Currency("amount").AtMost("10.5")), []string{"alpha", ""}},
		{"decimal less", reports.And(reports.Decimal("amount").LessThan("6")), []string{""}},
		{"date at least", reports.And(reports.Date("day").AtLeast("2026-03-01")), []string{"alpha", "alphabet"}},
		{"date-time gt", reports.And(reports.DateTime("at").GreaterThan("2026-03-09T07:59:59Z")), []string{"alpha", "alphabet"}},
		{"date offset last 7 days", reports.And(reports.DateOffset("day").Offset("-7")), []string{"alphabet"}},
		{"date-time offset", reports.And(reports.DateTimeOffset("at").Offset("-2", "0")), []string{"alpha", "alphabet"}},
		{"or of groups", reports.Or(reports.Text("name").EqualTo("beta"), reports.And(reports.Number("n").EqualTo("3"), reports.Boolean("ok").EqualTo("true"))), []string{"beta", "alphabet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for r, err := range c.Reports.Data(ctx, id, reports.DataParams{Filters: &tc.filter}) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, r.Text("Name"))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("rows %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFilterPairTheServerRejects(t *testing.T) {
	srv, c := newClient(t, nil)
	id := filterReport(srv)
	f := reports.And(reports.Number("n").Contains("1"))
	for _, err := range c.Reports.Data(context.Background(), id, reports.DataParams{Filters: &f}) {
		if !partner.IsBadRequest(err) || !strings.Contains(err.Error(), "NUMBER does not support operator CONTAIN") {
			t.Errorf("err = %v, want a 400 naming NUMBER and CONTAIN", err)
		}
	}
}

func TestFilterValidatedBeforeSending(t *testing.T) {
	srv, c := newClient(t, nil)
	id := filterReport(srv)
	for _, tc := range []struct {
		f    reports.FilterGroup
		want string
	}{
		{reports.And(reports.Number("n").Where(reports.OpBetween, "1")), "BETWEEN takes 2 values, got 1"},
		{reports.FilterGroup{Op: "XOR"}, `filters.op must be AND or OR, not "XOR"`},
		{reports.And(reports.Field{Type: "MONEY", ColID: "n"}.EqualTo("1")), `unknown filter type "MONEY"`},
		{reports.And(reports.Text("").EqualTo("1")), "colId is required"},
		{reports.And(reports.Or(reports.Text("name").Where("LIKE", "a"))), `filters.group[0].fieldFilters[0]: unknown operator "LIKE"`},
		{reports.And(reports.Text("name").EqualTo()), "EQUAL_TO needs at least one value"},
	} {
		for _, err := range c.Reports.Data(context.Background(), id, reports.DataParams{Filters: &tc.f}) {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		}
	}
	if n := srv.CountRequests("POST", "/report/v1/*/data"); n != 0 {
		t.Errorf("%d requests sent for invalid filters", n)
	}
}

func TestChartDataAndMetadata(t *testing.T) {
	_, c := newClient(t, []fake.Option{fake.WithDemoData()})
	ctx := context.Background()
	got, err := c.Reports.ChartData(ctx, demo.ReportPartners, reports.ChartDataParams{ChartIDs: []int64{2}})
	if err != nil {
		t.Fatal(err)
	}
	if got.ReportName != "Partners" || len(got.Charts) != 1 || got.Charts[0].ID != 2 || got.Charts[0].Name != "Partners by tier" {
		t.Fatalf("chart data %+v", got)
	}
	var groups []string
	for _, r := range got.Charts[0].Results {
		if cols := r.Columns(); !slices.Equal(cols, []string{"Tier", "count"}) {
			t.Errorf("result columns %q", cols)
		}
		groups = append(groups, r.Text("Tier")+"="+r.Text("count"))
	}
	if want := []string{"Gold=9", "Registered=8", "Silver=8"}; !slices.Equal(groups, want) {
		t.Errorf("groups %q, want %q", groups, want)
	}

	// Filters apply before grouping.
	f := reports.And(reports.Text("region").EqualTo("EMEA"))
	got, err = c.Reports.ChartData(ctx, demo.ReportPartners, reports.ChartDataParams{Filters: &f, ChartIDs: []int64{1}})
	if err != nil {
		t.Fatal(err)
	}
	if res := got.Charts[0].Results; len(res) != 1 || res[0].Text("Region") != "EMEA" || res[0].Text("count") != "7" {
		t.Errorf("filtered chart %v", res)
	}

	if _, err := c.Reports.ChartData(ctx, demo.ReportPartners, reports.ChartDataParams{ChartIDs: []int64{99}}); !partner.IsNotFound(err) {
		t.Errorf("unknown chart: %v", err)
	}

	meta, err := c.Reports.ChartMetadata(ctx, demo.ReportPartners, reports.ChartMetadataParams{ChartIDs: []int64{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	infos, err := meta.Charts()
	if err != nil || len(infos) != 2 || infos[0].ID != 1 || infos[1].Name != "Partners by tier" {
		t.Errorf("metadata charts %+v, %v (raw %s)", infos, err, meta.Raw)
	}
	if _, err := c.Reports.ChartMetadata(ctx, demo.ReportPartners, reports.ChartMetadataParams{ChartIDs: []int64{42}}); !partner.IsNotFound(err) {
		t.Errorf("unknown chart metadata: %v", err)
	}
}
