package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/reports"
)

// pageCutter is a middleware that, while on, sends the fake's view data
// requests for whole pages from page 2 on to a view that does not exist
// (a 404: an export stops there, after pages 0 and 1), and records the
// pages asked for.
type pageCutter struct {
	on    atomic.Bool
	mu    sync.Mutex
	pages []int64
}

func (p *pageCutter) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/report/v1/view/") && strings.HasSuffix(r.URL.Path, "/data") {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			var body struct {
				Page struct{ Number, Size int64 } `json:"page"`
			}
			json.Unmarshal(b, &body)
			if body.Page.Size > 1 {
				p.mu.Lock()
				p.pages = append(p.pages, body.Page.Number)
				p.mu.Unlock()
				if body.Page.Number >= 2 && p.on.Load() {
					r.URL.Path = "/report/v1/view/999999999/data"
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (p *pageCutter) take() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.pages
	p.pages = nil
	return out
}

// TestReportsExportResume: an export to a file that stops after two
// pages (of 10,000 rows) keeps its partial file and checkpoint beside -o
// and prints the command that goes on; that command writes only the rows
// not written yet, from the same view (no new view prepared, no page
// before the checkpoint's asked for), and leaves the whole export, every
// row once and in order (bigExport), with the partial file and
// checkpoint removed.
func TestReportsExportResume(t *testing.T) {
	t.Parallel()
	const rows = 25_000
	for _, ext := range []string{"csv", "jsonl"} {
		t.Run(ext, func(t *testing.T) {
			t.Parallel() // each has its own fake, cutter and directory
			cut := &pageCutter{}
			// The contract check, outermost, sees what the client sent.
			srv := fake.NewServer(append([]fake.Option{mocktest.ContractCheck(t), fake.WithMiddleware(cut.middleware)}, mocktest.NoWaits()...)...)
			defer srv.Close()
			id := srv.AddReport(fake.Report{Name: "big", Columns: []fake.Column{{ID: "n", Name: "N", Type: "NUMBER"}, {ID: "l", Name: "Label"}},
				RowCount: rows, Generate: func(i int) []any { return []any{i, fmt.Sprintf("row, %d", i)} }})
			report := strconv.FormatInt(id, 10)
			c := newCLI(srv)
			dir := t.TempDir()
			out := filepath.Join(dir, "big export."+ext)
			whole := bigExport(ext, rows)

			cut.on.Store(true)
			r := c.run(t, "reports", "export", report, "-o", out)
			partial, checkpoint := filepath.Join(dir, ".big export."+ext+".partial"), filepath.Join(dir, ".big export."+ext+".checkpoint")
			want := "20,000 rows kept in " + partial + ": go on with: partnerctl reports export " + report + " -o '" + out + "' --resume\n"
			if r.code != exitFail || !strings.HasSuffix(r.stderr, want) {
				t.Fatalf("stopped export: exit %d, stderr %q; want 1 and ending %q", r.code, r.stderr, want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatalf("%s exists after the export stopped: %v", out, err)
			}
			if !strings.HasPrefix(whole, readFile(t, partial)) {
				t.Fatal("the partial file is not the start of the export")
			}
			var st exportState
			if err := json.Unmarshal([]byte(readFile(t, checkpoint)), &st); err != nil || st.Checkpoint.Rows != 20_000 || st.Checkpoint.NextPage != 2 {
				t.Fatalf("checkpoint %s: %+v, %v", checkpoint, st, err)
			}

			cut.on.Store(false)
			cut.take()
			prepared := srv.CountRequests(http.MethodPost, "/report/v1/view/"+report+"/prepare_export")
			r = c.must(t, "reports", "export", report, "-o", out, "--resume")
			if !strings.Contains(r.stderr, "exported 25,000 rows of report "+report) {
				t.Errorf("resumed: stderr %q", r.stderr)
			}
			if got := readFile(t, out); got != whole {
				t.Fatalf("the resumed file differs from the whole export (%d bytes, want %d)", len(got), len(whole))
			}
			if n := srv.CountRequests(http.MethodPost, "/report/v1/view/"+report+"/prepare_export"); n != prepared {
				t.Errorf("the resumed export prepared %d new views", n-prepared)
			}
			if pages := cut.take(); len(pages) == 0 || slices.Min(pages) != 2 {
				t.Errorf("the resumed export asked for pages %v, want from 2 on", pages)
			}
			for _, f := range []string{partial, checkpoint} {
				if _, err := os.Stat(f); !os.IsNotExist(err) {
					t.Errorf("%s is left after the export completed: %v", f, err)
				}
			}
		})
	}
}

// TestReportsExportResumeCommandAsPrinted: the command a stopped export
// prints goes on with it as printed, also when the format is not -o's
// extension and FILE exists (--format and --force are in it).
func TestReportsExportResumeCommandAsPrinted(t *testing.T) {
	t.Parallel()
	const rows = 25_000
	cut := &pageCutter{}
	srv := fake.NewServer(append([]fake.Option{mocktest.ContractCheck(t), fake.WithMiddleware(cut.middleware)}, mocktest.NoWaits()...)...)
	defer srv.Close()
	id := srv.AddReport(fake.Report{Name: "big", Columns: []fake.Column{{ID: "n", Name: "N", Type: "NUMBER"}, {ID: "l", Name: "Label"}},
		RowCount: rows, Generate: func(i int) []any { return []any{i, fmt.Sprintf("row, %d", i)} }})
	c := newCLI(srv)
	out := filepath.Join(t.TempDir(), "rows.txt")
	if err := os.WriteFile(out, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cut.on.Store(true)
	r := c.run(t, "reports", "export", strconv.FormatInt(id, 10), "--format", "jsonl", "-o", out, "--force")
	_, line, ok := strings.Cut(strings.TrimSpace(r.stderr), "go on with: partnerctl ")
	if r.code != exitFail || !ok {
		t.Fatalf("stopped export: exit %d, stderr %q; want 1 and the command that goes on", r.code, r.stderr)
	}
	cut.on.Store(false)
	args := strings.Fields(strings.ReplaceAll(line, "'", "")) // out has no space
	c.must(t, args...)
	if got := readFile(t, out); got != bigExport("jsonl", rows) {
		t.Fatalf("the resumed file differs from the whole export (%d bytes)", len(got))
	}
}

// bigExport is the export in ext (csv or jsonl) of the first rows rows of
// TestReportsExportResume's report.
func bigExport(ext string, rows int) string {
	var b strings.Builder
	if ext == "csv" {
		b.WriteString("N,Label\n")
	}
	for i := range rows {
		if ext == "csv" {
			fmt.Fprintf(&b, "%d,\"row, %d\"\n", i, i)
		} else {
			fmt.Fprintf(&b, `{"N":%d,"Label":"row, %d"}`+"\n", i, i)
		}
	}
	return b.String()
}

// TestReportsExportResumeRefusals: --resume needs a file of CSV or JSON
// lines and a stopped export to go on with; each refusal is a usage error
// before anything is sent.
func TestReportsExportResumeRefusals(t *testing.T) {
	t.Parallel()
	srv, id := reportServer(t)
	c := newCLI(srv)
	dir := t.TempDir()
	report := strconv.FormatInt(id, 10)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--resume"}, "--resume goes on with an export of CSV or JSON lines to a file"},
		{[]string{"--resume", "-o", filepath.Join(dir, "a.xlsx")}, "--resume goes on with an export of CSV or JSON lines to a file"},
		{[]string{"--resume", "-o", filepath.Join(dir, "a.csv")}, "no stopped export to " + filepath.Join(dir, "a.csv")},
		{[]string{"-o", filepath.Join(dir, "a.txt")}, `-o ` + filepath.Join(dir, "a.txt") + `: the extension ".txt" is not csv, jsonl or xlsx: give --format`},
	} {
		r := c.run(t, append([]string{"reports", "export", report}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// TestExportCheckpointSaveFails: a checkpoint that cannot be saved leaves
// the export's state at the one saved before, so that the message of a
// stopped export names the rows the checkpoint file holds.
func TestExportCheckpointSaveFails(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "deals.csv")
	ef, err := openExportFile(out, 7, formatCSV, false, false)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.discard()
	ef.Write([]byte("a\n1\n"))
	ef.save(reports.Checkpoint{Rows: 1})
	// A directory in the checkpoint's place: the next save cannot replace it.
	if err := os.Remove(ef.checkpoint); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ef.checkpoint, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ef.checkpoint)
	ef.Write([]byte("2\n"))
	ef.save(reports.Checkpoint{Rows: 2})
	if ef.state.Checkpoint.Rows != 1 || ef.state.Bytes != 4 || !ef.saved {
		t.Errorf("after a failed save: rows %d, bytes %d, saved %v; want the first checkpoint (1 row, 4 bytes)",
			ef.state.Checkpoint.Rows, ef.state.Bytes, ef.saved)
	}
}

// TestCheckpointPositionAgrees: a checkpoint's position is where its rows
// end: whole pages and the rows into the next, or after a short last
// page; any other is refused.
func TestCheckpointPositionAgrees(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		next, pageRows, size, rows int64
		ok                         bool
	}{
		{2, 0, 10_000, 20_000, true},
		{2, 5, 10_000, 20_005, true},
		{3, 0, 10_000, 25_000, true}, // after the short last page
		{1, 0, 10_000, 1, true},
		{3, 0, 10_000, 20_000, false},
		{1, 0, 10_000, 20_000, false},
		{2, 5, 10_000, 20_000, false},
		{2, 0, 10_000, 1_000_089_999, false},
		{0, 0, 10_000, 1, false},
		{2, 10_000, 10_000, 30_000, false},
		{2, 0, 0, 20_000, false},
		{2, 0, 10_001, 20_002, false},
		{1 << 62, 0, 10_000, 20_000, false},
		{-1, 0, 10_000, 20_000, false},
	} {
		cp := reports.Checkpoint{ViewID: 1, NextPage: tc.next, PageRows: tc.pageRows, PageSize: tc.size, Rows: tc.rows}
		if got := positionAgrees(cp); got != tc.ok {
			t.Errorf("%+v: %v, want %v", cp, got, tc.ok)
		}
	}
}
