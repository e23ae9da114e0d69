package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
)

const accountsCSV = "account_info.external_account_id,name,employees\n" +
	"X-1,Initech,120\n" +
	"X-2,Hooli,many\n" +
	"X-3,Umbrella,40\n"

func bulkServer(t *testing.T, opts ...fake.Option) *fake.Server {
	t.Helper()
	srv := newFake(t, append([]fake.Option{fake.WithDemoData(), fake.WithBulkDelay(0)}, opts...)...)
	t.Cleanup(srv.Close)
	return srv
}

func TestBulkLoadWaitErrorsOut(t *testing.T) {
	t.Parallel()
	srv := bulkServer(t)
	c := newCLI(srv)
	dir := t.TempDir()
	in := filepath.Join(dir, "accounts.csv")
	writeFile(t, in, accountsCSV)
	errs := filepath.Join(dir, "failed.csv")

	// One of the three rows is refused: exit 5, as the root help says,
	// with the rows written and the counts printed.
	r := c.run(t, "bulk", "load", in, "--integration", demo.AccountIntegration, "--wait", "--errors-out", errs)
	if r.code != exitDataFailed || !strings.Contains(r.stderr, "1 row failed") || !strings.Contains(r.stderr, "--allow-partial") {
		t.Fatalf("1 of 3 rows refused: exit %d, stderr %q", r.code, r.stderr)
	}
	r.stderr = strings.TrimSpace(r.stderr[strings.Index(r.stderr, "partnerctl: "):])
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
	if strings.Count(r.stderr, "\n") != 0 {
		t.Fatalf("stderr is not a terminal, yet: %q", r.stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(readFile(t, errs))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := "account_info.external_account_id,name,employees,_error"; strings.Join(recs[0], ",") != want {
		t.Errorf("errors file header %q, want the loaded file's columns in order, then _error: %s", recs[0], want)
	}
	if len(recs) != 2 || strings.Join(recs[1][:3], ",") != "X-2,Hooli,many" || !strings.Contains(recs[1][3], "employees") {
		t.Fatalf("errors file: %q", recs)
	}
	if o := srv.Objects("account"); len(o) != 2+2 { // two demo accounts, two loaded
		t.Fatalf("accounts after the load: %d", len(o))
	}

	// A script that accepts a partial refusal says so; the rows are still
	// written.
	errs2 := filepath.Join(dir, "failed2.csv")
	r = c.run(t, "bulk", "load", in, "--integration", demo.AccountIntegration, "--wait", "--allow-partial", "--errors-out", errs2)
	if r.code != exitOK || !strings.Contains(r.stdout, "completed: 3 records, 0 succeeded, 1 failed, 2 skipped") || !strings.Contains(readFile(t, errs2), "Hooli") {
		t.Fatalf("--allow-partial: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	// --fail-on-errors, whose behaviour is now the default, still implies
	// --wait and exits 5.
	if r := c.run(t, "bulk", "load", in, "--integration", demo.AccountIntegration, "--fail-on-errors"); r.code != exitDataFailed ||
		!strings.Contains(r.stderr, "1 row failed") {
		t.Fatalf("--fail-on-errors: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := c.run(t, "bulk", "load", in, "--integration", demo.AccountIntegration, "--fail-on-errors", "--allow-partial"); r.code != exitUsage {
		t.Fatalf("--fail-on-errors with --allow-partial: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestBulkLoadAllowPartialStillFailsWhenNoneLoaded: --allow-partial
// accepts refused records beside loaded ones, not a load that loaded
// nothing.
func TestBulkLoadAllowPartialStillFailsWhenNoneLoaded(t *testing.T) {
	t.Parallel()
	srv := bulkServer(t)
	c := newCLI(srv)
	in := filepath.Join(t.TempDir(), "wrong-key.csv")
	writeFile(t, in, "id,name\n1,Initech\n")
	r := c.run(t, "bulk", "load", in, "--integration", demo.AccountIntegration, "--wait", "--allow-partial")
	if r.code != exitDataFailed || !strings.Contains(r.stderr, "no record succeeded") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// TestBulkProgressNotUnderDumbTerminal: on a terminal that moves no
// cursor (TERM=dumb) the upload draws no bar; the same load on another
// terminal does (TestBulkLoadNoWaitAndProgress).
func TestBulkProgressNotUnderDumbTerminal(t *testing.T) {
	t.Parallel()
	srv := bulkServer(t)
	c := newCLI(srv)
	c.tty = true
	c.env["TERM"] = "dumb"
	in := filepath.Join(t.TempDir(), "accounts.json")
	writeFile(t, in, `[{"account_info": {"external_account_id": "J-1"}, "name": "Json Corp"}]`)
	r := c.must(t, "bulk", "load", in, "--integration", demo.AccountIntegration)
	if r.stderr != "" {
		t.Fatalf("TERM=dumb: stderr %q, want no progress", r.stderr)
	}
	if !strings.Contains(r.stdout, "started") {
		t.Fatalf("stdout %q", r.stdout)
	}
}

func TestBulkLoadNoWaitAndProgress(t *testing.T) {
	t.Parallel()
	srv := bulkServer(t)
	c := newCLI(srv)
	c.tty = true
	in := filepath.Join(t.TempDir(), "accounts.json")
	writeFile(t, in, `[{"account_info": {"external_account_id": "J-1"}, "name": "Json Corp"}]`)
	r := c.must(t, "bulk", "load", in, "--integration", demo.AccountIntegration)
	if strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stdout, "started") {
		t.Fatalf("without --wait: %q", r.stdout)
	}
	if size := len(`[{"account_info": {"external_account_id": "J-1"}, "name": "Json Corp"}]`); !strings.Contains(r.stderr, "100%") ||
		!strings.Contains(r.stderr, "upload accounts.json") || !strings.Contains(r.stderr, "71.0 b / 71.0 b") || size == 0 {
		t.Fatalf("upload progress: %q", r.stderr)
	}
	exs := srv.BulkExecutions()
	if len(exs) != 1 || exs[0].InputCount != 1 {
		t.Fatalf("executions: %+v", exs)
	}
}

func TestBulkLoadXLSXOpportunities(t *testing.T) {
	t.Parallel()
	srv := bulkServer(t)
	c := newCLI(srv)
	in := filepath.Join(t.TempDir(), "opps.xlsx")
	writeXLSX(t, in, []any{"sales_details.crm_opportunity_id", "name", "amount"}, []any{"CRM-9", "Big deal", 5000})
	r := c.must(t, "bulk", "load", in, "--integration", demo.OpportunityIntegration, "--opportunities", "--wait")
	if !strings.Contains(r.stdout, "completed: 1 record, 1 succeeded, 0 failed") {
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
	t.Parallel()
	srv := bulkServer(t)
	c := newCLI(srv)
	in := filepath.Join(t.TempDir(), "deals.xlsx")
	writeXLSX(t, in, []any{"sales_details.crm_opportunity_id", "name"}, []any{"CRM-31", "Workbook deal"})
	for _, extra := range [][]string{nil, {"--opportunities"}} {
		args := append([]string{"bulk", "load", in, "--integration", demo.OpportunityIntegration, "--wait"}, extra...)
		if r := c.must(t, args...); !strings.Contains(r.stdout, "completed: 1 record,") || strings.Contains(r.stdout, "1 failed") {
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
		"/bulk/v1/bulkload?data_format=XLSX&integration_id=" + demo.OpportunityIntegration,
		"/bulk/v1/bulkload_opportunity?content_type=XLSX&has_header_row=true&integration_id=" + demo.OpportunityIntegration,
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
	t.Parallel()
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

// TestBulkLoadErrorsOutReloads: the failed-rows file loads again as it is
// (once the bad value is fixed), its error column never takes the name of
// a column of the data, and no file is written when no row failed.
func TestBulkLoadErrorsOutReloads(t *testing.T) {
	t.Parallel()
	srv := bulkServer(t)
	c := newCLI(srv)
	dir := t.TempDir()
	in := filepath.Join(dir, "accounts.csv")
	writeFile(t, in, "account_info.external_account_id,_error,employees\nE-1,a note,many\nE-2,,7\n")
	errs := filepath.Join(dir, "failed.csv")
	if r := c.run(t, "bulk", "load", in, "--integration", demo.AccountIntegration, "--errors-out", errs); r.code != exitDataFailed {
		t.Fatalf("a load with a refused row: exit %d, stderr %q", r.code, r.stderr)
	}
	got := readFile(t, errs)
	recs, err := csv.NewReader(strings.NewReader(got)).ReadAll()
	if err != nil || len(recs) != 2 || strings.Join(recs[0], ",") != "account_info.external_account_id,_error,employees,__error" ||
		strings.Join(recs[1][:3], ",") != "E-1,a note,many" || !strings.Contains(recs[1][3], "employees") {
		t.Fatalf("errors file: %v %q", err, recs)
	}

	writeFile(t, errs, strings.Replace(got, ",many,", ",12,", 1))
	errs2 := filepath.Join(dir, "failed-again.csv")
	r := c.must(t, "bulk", "load", errs, "--integration", demo.AccountIntegration, "--errors-out", errs2)
	if !strings.Contains(r.stdout, "completed: 1 record, 1 succeeded, 0 failed") ||
		!strings.Contains(r.stdout, "no row failed: "+errs2+" not written") ||
		!strings.Contains(r.stdout, "column __error not sent") {
		t.Fatalf("reloading the fixed errors file:\n%s", r.stdout)
	}
	if _, err := os.Stat(errs2); !os.IsNotExist(err) {
		t.Fatalf("an errors file was written though no row failed: %v", err)
	}
	var loaded bool
	for _, o := range srv.Objects("account") {
		if v, _ := o.Field("account_info.external_account_id"); v == "E-1" {
			loaded = o.Fields["employees"] == 12.0 || o.Fields["employees"] == "12"
		}
	}
	if !loaded {
		t.Fatal("the reloaded row is not stored with the fixed value")
	}
	for _, o := range srv.Objects("account") {
		if _, sent := o.Fields["__error"]; sent {
			t.Fatalf("the reason column reached the service: %v", o.Fields)
		}
	}
}

// TestBulkLoadNoRecordSucceeded: a load where every record failed exits 5.
func TestBulkLoadNoRecordSucceeded(t *testing.T) {
	t.Parallel()
	srv := bulkServer(t)
	c := newCLI(srv)
	in := filepath.Join(t.TempDir(), "wrong-key.csv")
	writeFile(t, in, "id,name\n1,Initech\n2,Hooli\n")
	r := c.run(t, "bulk", "load", in, "--integration", demo.AccountIntegration, "--wait")
	if r.code != exitDataFailed || !strings.Contains(r.stdout, "completed: 2 records, 0 succeeded, 2 failed") ||
		!strings.Contains(r.stderr, "no record succeeded: all 2 failed") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// TestBulkLoadPathsCheckedFirst: a directory as FILE or --errors-out, or
// --errors-out in a directory that does not exist, is a usage error before
// any request.
func TestBulkLoadPathsCheckedFirst(t *testing.T) {
	t.Parallel()
	srv := bulkServer(t)
	c := newCLI(srv)
	dir := t.TempDir()
	in := filepath.Join(dir, "a.csv")
	writeFile(t, in, accountsCSV)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{dir}, dir + " is a directory"},
		{[]string{in, "--errors-out", dir}, "--errors-out " + dir + " is a directory"},
		{[]string{in, "--errors-out", filepath.Join(dir, "nope", "f.csv")}, "directory " + filepath.Join(dir, "nope") + " does not exist"},
	} {
		r := c.run(t, append([]string{"bulk", "load", "--integration", demo.AccountIntegration}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if reqs := srv.Requests(); len(reqs) != 0 {
		t.Fatalf("requests were sent: %+v", reqs)
	}
}

// TestBulkLoadTruncatedJSON: the fake names where a truncated body ends.
func TestBulkLoadTruncatedJSON(t *testing.T) {
	t.Parallel()
	srv := bulkServer(t)
	c := newCLI(srv)
	in := filepath.Join(t.TempDir(), "cut.json")
	writeFile(t, in, `[{"account_info": {"external_account_id": "T-1"}}, {"account_info": {"external_account_id": "T-2"}}`)
	r := c.run(t, "bulk", "load", in, "--integration", demo.AccountIntegration)
	if r.code != exitFail || !strings.Contains(r.stderr, "after record 2") || strings.Contains(r.stderr, "record 3") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}
