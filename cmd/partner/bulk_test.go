package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/partnerapi/partner-go/fake"
)

const accountsCSV = "account_info.external_account_id,name,employees\n" +
	"X-1,Initech,120\n" +
	"X-2,Hooli,many\n" +
	"X-3,Umbrella,40\n"

func bulkServer(t *testing.T) *fake.Server {
	t.Helper()
	srv := fake.NewServer(fake.WithDemoData(), fake.WithBulkDelay(0))
	t.Cleanup(srv.Close)
	return srv
}

func TestBulkLoadWaitErrorsOut(t *testing.T) {
	srv := bulkServer(t)
	c := newCLI(srv)
	dir := t.TempDir()
	in := filepath.Join(dir, "accounts.csv")
	writeFile(t, in, accountsCSV)
	errs := filepath.Join(dir, "failed.csv")

	r := c.must(t, "bulk", "load", in, "--integration", fake.DemoAccountIntegration, "--wait", "--errors-out", errs)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if !strings.HasPrefix(lines[0], "execution ") || !strings.Contains(lines[0], "started") {
		t.Fatalf("first line %q", lines[0])
	}
	if !strings.Contains(r.stdout, ": completed\n") {
		t.Fatalf("no line for the completed state:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "completed: 3 records, 2 succeeded, 1 failed, 0 skipped") {
		t.Fatalf("counts:\n%s", r.stdout)
	}
	if r.stderr != "" {
		t.Fatalf("stderr is not a terminal, yet: %q", r.stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(readFile(t, errs))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := "id,message,account_info.external_account_id,name,employees"; strings.Join(recs[0], ",") != want {
		t.Errorf("errors file header %q, want the loaded file's column order: %s", recs[0], want)
	}
	if len(recs) != 2 || recs[0][0] != "id" || recs[0][1] != "message" || !strings.Contains(strings.Join(recs[1], ","), "Hooli") ||
		!strings.Contains(recs[1][1], "employees") {
		t.Fatalf("errors file: %q", recs)
	}
	if o := srv.Objects("account"); len(o) != 2+2 { // two demo accounts, two loaded
		t.Fatalf("accounts after the load: %d", len(o))
	}

	if r := c.run(t, "bulk", "load", in, "--integration", fake.DemoAccountIntegration, "--fail-on-errors"); r.code != exitFail ||
		!strings.Contains(r.stderr, "1 rows failed") {
		t.Fatalf("--fail-on-errors: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestBulkLoadNoWaitAndProgress(t *testing.T) {
	srv := bulkServer(t)
	c := newCLI(srv)
	c.tty = true
	in := filepath.Join(t.TempDir(), "accounts.json")
	writeFile(t, in, `[{"account_info": {"external_account_id": "J-1"}, "name": "Json Corp"}]`)
	r := c.must(t, "bulk", "load", in, "--integration", fake.DemoAccountIntegration)
	if strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stdout, "started") {
		t.Fatalf("without --wait: %q", r.stdout)
	}
	if size := len(`[{"account_info": {"external_account_id": "J-1"}, "name": "Json Corp"}]`); !strings.Contains(r.stderr, "100%") ||
		!strings.Contains(r.stderr, "upload accounts.json") || !strings.Contains(r.stderr, " B/s") || size == 0 {
		t.Fatalf("upload progress: %q", r.stderr)
	}
	exs := srv.BulkExecutions()
	if len(exs) != 1 || exs[0].InputCount != 1 {
		t.Fatalf("executions: %+v", exs)
	}
}

func TestBulkLoadXLSXOpportunities(t *testing.T) {
	srv := bulkServer(t)
	c := newCLI(srv)
	in := filepath.Join(t.TempDir(), "opps.xlsx")
	writeXLSX(t, in, []any{"sales_details.crm_opportunity_id", "name", "amount"}, []any{"CRM-9", "Big deal", 5000})
	r := c.must(t, "bulk", "load", in, "--integration", fake.DemoOpportunityIntegration, "--opportunities", "--wait")
	if !strings.Contains(r.stdout, "completed: 1 records, 1 succeeded, 0 failed") {
		t.Fatalf("xlsx load:\n%s", r.stdout)
	}
	found := false
	for _, o := range srv.Objects("opportunity") {
		found = found || o.Fields["name"] == "Big deal"
	}
	if !found {
		t.Fatal("the loaded opportunity is not stored")
	}
}

// TestBulkLoadXLSXPublishedRoutes: an XLSX file goes as an attachment to
// the published operations, POST /bulk/v1/bulkload and
// /bulk/v1/bulkload_opportunity, with its format in the query.
func TestBulkLoadXLSXPublishedRoutes(t *testing.T) {
	srv := bulkServer(t)
	c := newCLI(srv)
	in := filepath.Join(t.TempDir(), "deals.xlsx")
	writeXLSX(t, in, []any{"sales_details.crm_opportunity_id", "name"}, []any{"CRM-31", "Workbook deal"})
	for _, extra := range [][]string{nil, {"--opportunities"}} {
		args := append([]string{"bulk", "load", in, "--integration", fake.DemoOpportunityIntegration, "--wait"}, extra...)
		if r := c.must(t, args...); !strings.Contains(r.stdout, "completed: 1 records") || strings.Contains(r.stdout, "1 failed") {
			t.Fatalf("%v:\n%s", extra, r.stdout)
		}
	}
	var got []string
	for _, r := range srv.Requests() {
		if r.Method == "POST" && strings.HasPrefix(r.Path, "/bulk/") {
			got = append(got, r.Path+"?"+r.Query)
		}
	}
	want := []string{
		"/bulk/v1/bulkload?data_format=XLSX&integration_id=" + fake.DemoOpportunityIntegration,
		"/bulk/v1/bulkload_opportunity?content_type=XLSX&has_header_row=true&integration_id=" + fake.DemoOpportunityIntegration,
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("loads %q, want %q", got, want)
	}
}

// writeXLSX writes rows to the first sheet of a new workbook at path.
func writeXLSX(t *testing.T, path string, rows ...[]any) {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	for i, row := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		f.SetSheetRow(f.GetSheetName(0), cell, &row)
	}
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
}

func TestBulkLoadNotStarted(t *testing.T) {
	srv := bulkServer(t)
	c := newCLI(srv)
	in := filepath.Join(t.TempDir(), "a.csv")
	writeFile(t, in, accountsCSV)
	if r := c.run(t, "bulk", "load", in, "--integration", "int-unknown", "--wait"); r.code != exitFail || !strings.Contains(r.stderr, "int-unknown") {
		t.Fatalf("unknown integration: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := c.run(t, "bulk", "load", filepath.Join(t.TempDir(), "missing.csv"), "--integration", "x"); r.code != exitFail {
		t.Fatalf("missing file: exit %d", r.code)
	}
	if _, err := os.Stat(in); err != nil {
		t.Fatal(err)
	}
}
