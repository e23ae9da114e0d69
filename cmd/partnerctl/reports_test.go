package main

import (
	"archive/zip"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// reportServer serves a fake with one report whose columns are not in
// alphabetical order, so that column order is checked. Its views are
// ready at once (mocktest.NoWaits).
func reportServer(t *testing.T) (*fake.Server, int64) {
	t.Helper()
	srv := newFake(t, mocktest.NoWaits()...)
	t.Cleanup(srv.Close)
	id := srv.AddReport(fake.Report{
		ID: 7, Name: "Deals",
		Columns: []fake.Column{{ID: "0", Name: "Zone"}, {ID: "1", Name: "Amount", Type: "NUMBER"}, {ID: "2", Name: "Account"}},
		Rows:    [][]any{{"EMEA", 1200, "Acme, Inc."}, {"APAC", 30.5, "Globex"}, {"EMEA", 7, nil}},
		Charts:  []fake.Chart{{ID: 1, Name: "By zone", GroupBy: "0"}},
	})
	return srv, id
}

func TestReportsList(t *testing.T) {
	t.Parallel()
	srv, _ := reportServer(t)
	c := newCLI(srv)
	r := c.must(t, "reports", "list")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "ID") || !strings.HasPrefix(lines[1], "7 ") || !strings.Contains(lines[1], "Deals") {
		t.Fatalf("table:\n%s", r.stdout)
	}
	r = c.must(t, "reports", "list", "--json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 || list[0]["id"] != 7.0 || list[0]["name"] != "Deals" {
		t.Fatalf("json: %v %s", err, r.stdout)
	}
}

func TestReportsExportFiles(t *testing.T) {
	t.Parallel()
	srv, _ := reportServer(t)
	c := newCLI(srv)
	dir := t.TempDir()

	csvPath := filepath.Join(dir, "deals.csv")
	r := c.must(t, "reports", "export", "7", "-o", csvPath)
	want := "Zone,Amount,Account\nEMEA,1200,\"Acme, Inc.\"\nAPAC,30.5,Globex\nEMEA,7,\n"
	if got := readFile(t, csvPath); got != want {
		t.Fatalf("csv:\n%q\nwant\n%q", got, want)
	}
	// A new export gets the mode any new file gets here (0666 less the
	// umask), not a temporary file's 0600.
	pf, err := os.Create(filepath.Join(t.TempDir(), "probe"))
	if err != nil {
		t.Fatal(err)
	}
	pfi, _ := pf.Stat()
	pf.Close()
	if fi, err := os.Stat(csvPath); err != nil || fi.Mode().Perm() != pfi.Mode().Perm() {
		t.Fatalf("mode of the export: %v %v, want %v", fi.Mode(), err, pfi.Mode())
	}
	// One that replaces a file keeps that file's mode.
	if err := os.Chmod(csvPath, 0o600); err != nil {
		t.Fatal(err)
	}
	c.must(t, "reports", "export", "7", "-o", csvPath, "--force")
	if fi, err := os.Stat(csvPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode of the replaced export: %v %v, want 0600", fi.Mode(), err)
	}
	if r.stdout != "" || !strings.Contains(r.stderr, "exported 3 rows of report 7") {
		t.Fatalf("stdout %q stderr %q", r.stdout, r.stderr)
	}

	r = c.must(t, "reports", "export", "7", "--format", "jsonl")
	want = `{"Zone":"EMEA","Amount":1200,"Account":"Acme, Inc."}` + "\n" +
		`{"Zone":"APAC","Amount":30.5,"Account":"Globex"}` + "\n" +
		`{"Zone":"EMEA","Amount":7,"Account":null}` + "\n"
	if r.stdout != want {
		t.Fatalf("jsonl:\n%s\nwant\n%s", r.stdout, want)
	}
	if r.stderr != "" {
		t.Fatalf("stderr is not a terminal, yet: %q", r.stderr)
	}

	xlsxPath := filepath.Join(dir, "deals.xlsx") // the format comes from the extension
	c.must(t, "reports", "export", "7", "-o", xlsxPath)
	f, err := excelize.OpenFile(xlsxPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, _ := f.GetRows(f.GetSheetName(0))
	if len(rows) != 4 || strings.Join(rows[0], "|") != "Zone|Amount|Account" || strings.Join(rows[1], "|") != "EMEA|1200|Acme, Inc." {
		t.Fatalf("xlsx rows: %q", rows)
	}
	if typ, _ := f.GetCellType(f.GetSheetName(0), "B3"); typ != excelize.CellTypeUnset && typ != excelize.CellTypeNumber {
		t.Fatalf("amount cell type %v, want a number", typ)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("files left in the directory: %v", entries)
	}
}

// TestReportsExportFailure checks that a failed export exits 1, names the
// report, and leaves neither the file nor a temporary one.
func TestReportsExportFailure(t *testing.T) {
	t.Parallel()
	srv, _ := reportServer(t)
	c := newCLI(srv)
	dir := t.TempDir()
	out := filepath.Join(dir, "deals.csv")
	srv.InjectFault(fake.Fault{Method: http.MethodPost, Path: "/report/v1/view/*/data", Status: http.StatusNotFound, Message: "view gone"})
	r := c.run(t, "reports", "export", "7", "-o", out)
	if r.code != exitFail || strings.Count(r.stderr, "report 7") != 1 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("files left after a failed export: %v", entries)
	}
	// An existing file under that name is left as it was.
	writeFile(t, out, "old")
	c.run(t, "reports", "export", "7", "-o", out)
	if got := readFile(t, out); got != "old" {
		t.Fatalf("the failed export replaced the file: %q", got)
	}
	// A file that cannot be created: the message names the file asked for.
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if f, err := os.Create(filepath.Join(dir, "probe")); err == nil { // root writes anyway
		f.Close()
		os.Remove(f.Name())
	} else if r := c.run(t, "reports", "export", "7", "-o", filepath.Join(dir, "new.csv")); r.code != exitFail ||
		!strings.Contains(r.stderr, "cannot write "+filepath.Join(dir, "new.csv")) || strings.Contains(r.stderr, ".partial") {
		t.Fatalf("read-only directory: exit %d, stderr %q", r.code, r.stderr)
	}
	os.Chmod(dir, 0o700)
	r = c.run(t, "reports", "export", "999")
	if r.code != exitFail || strings.Contains(r.stderr, "export of report") || strings.Count(r.stderr, "exporting report 999") != 1 ||
		strings.Count(r.stderr, "partnerctl:") != 1 {
		t.Fatalf("unknown report: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestReportsExportProgressOnTerminal(t *testing.T) {
	t.Parallel()
	srv, _ := reportServer(t)
	c := newCLI(srv)
	c.tty = true
	r := c.must(t, "reports", "export", "7", "-o", filepath.Join(t.TempDir(), "x.csv"))
	// The view's metadata gives the total, so the count becomes a bar.
	if !strings.Contains(r.stderr, "3 rows / 3 rows") || !strings.Contains(r.stderr, "100%") {
		t.Fatalf("progress on a terminal: %q", r.stderr)
	}
}

func TestReportsCharts(t *testing.T) {
	t.Parallel()
	srv, _ := reportServer(t)
	c := newCLI(srv)
	r := c.must(t, "reports", "charts", "7")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 4 || lines[0] != "chart 1: By zone" || strings.Fields(lines[1])[0] != "Zone" ||
		strings.Join(strings.Fields(lines[2]), " ") != "APAC 1" || strings.Join(strings.Fields(lines[3]), " ") != "EMEA 2" {
		t.Fatalf("charts:\n%s", r.stdout)
	}
}

// TestReportsExportEmptyReport checks that a report without rows exports
// its header, taken from the report's metadata.
func TestReportsExportEmptyReport(t *testing.T) {
	t.Parallel()
	srv := newFake(t, mocktest.NoWaits()...)
	defer srv.Close()
	srv.AddReport(fake.Report{ID: 9, Name: "Empty", Rows: [][]any{},
		Columns: []fake.Column{{ID: "0", Name: "Zone"}, {ID: "1", Name: "Amount", Type: "NUMBER"}}})
	c := newCLI(srv)
	if r := c.must(t, "reports", "export", "9"); r.stdout != "Zone,Amount\n" {
		t.Fatalf("csv of an empty report: %q", r.stdout)
	}
	out := filepath.Join(t.TempDir(), "empty.xlsx")
	c.must(t, "reports", "export", "9", "-o", out)
	f, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if rows, _ := f.GetRows(f.GetSheetName(0)); len(rows) != 1 || strings.Join(rows[0], "|") != "Zone|Amount" {
		t.Fatalf("xlsx of an empty report: %q", rows)
	}
	if r := c.must(t, "reports", "export", "9", "--format", "jsonl"); r.stdout != "" {
		t.Fatalf("jsonl of an empty report: %q", r.stdout)
	}
}

// sheetDimension returns the <dimension> element of the first sheet of the
// workbook at path, as streaming readers see it.
func sheetDimension(t *testing.T, path string) string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	rc, err := zr.Open("xl/worksheets/sheet1.xml")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return regexp.MustCompile(`<dimension[^>]*>`).FindString(string(b))
}

// TestReportsExportXLSXDimension: the workbook declares the range it
// uses, header row included, so that streaming readers see every row.
func TestReportsExportXLSXDimension(t *testing.T) {
	t.Parallel()
	srv, _ := reportServer(t)
	srv.AddReport(fake.Report{ID: 9, Name: "Empty", Rows: [][]any{},
		Columns: []fake.Column{{ID: "0", Name: "Zone"}, {ID: "1", Name: "Amount", Type: "NUMBER"}}})
	c := newCLI(srv)
	dir := t.TempDir()
	for id, want := range map[string]string{"7": `<dimension ref="A1:C4"/>`, "9": `<dimension ref="A1:B1"/>`} {
		out := filepath.Join(dir, id+".xlsx")
		c.must(t, "reports", "export", id, "-o", out)
		if got := sheetDimension(t, out); got != want {
			t.Errorf("report %s: %s, want %s", id, got, want)
		}
		f, err := excelize.OpenFile(out) // still a valid workbook
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

// TestReportsExportRefusals: -o naming a directory fails before any
// request, and a workbook is not written to a terminal.
func TestReportsExportRefusals(t *testing.T) {
	t.Parallel()
	srv, _ := reportServer(t)
	c := newCLI(srv)
	dir := t.TempDir()
	if r := c.run(t, "reports", "export", "7", "-o", dir); r.code != exitUsage || !strings.Contains(r.stderr, "-o "+dir+" is a directory") {
		t.Fatalf("-o a directory: exit %d, stderr %q", r.code, r.stderr)
	}
	missing := filepath.Join(dir, "no-such-dir", "deals.csv")
	if r := c.run(t, "reports", "export", "7", "-o", missing); r.code != exitUsage || !strings.Contains(r.stderr, "does not exist") {
		t.Fatalf("-o in a missing directory: exit %d, stderr %q", r.code, r.stderr)
	}
	c.tty = true
	if r := c.run(t, "reports", "export", "7", "--format", "xlsx"); r.code != exitUsage || r.stdout != "" ||
		!strings.Contains(r.stderr, "give -o FILE or redirect stdout") {
		t.Fatalf("xlsx to a terminal: exit %d, stdout %.40q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if reqs := srv.Requests(); len(reqs) != 0 {
		t.Fatalf("requests were sent: %+v", reqs)
	}
}
