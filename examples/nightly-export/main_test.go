package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/reports"
)

// quick makes the fake's report views ready at once.
var quick = []fake.Option{fake.WithViewDelay(0)}

// stopAfter returns a config whose export is cancelled once at least rows
// are in the file, and the context to run it with.
func stopAfter(t *testing.T, cfg config, rows int64) (context.Context, config) {
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	cfg.progress = func(n int64) {
		if n >= rows {
			cancel()
		}
	}
	return ctx, cfg
}

// checkRows fails unless file holds a header whose first column is
// first, then rows numbered from start to start+n-1 in that column, each
// once, in order.
func checkRows(t *testing.T, file, first string, start, n int) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != n+1 || recs[0][0] != first {
		t.Fatalf("%s has %d records (first %q), want a header and %d rows", file, len(recs), recs[0], n)
	}
	for i, r := range recs[1:] {
		if id, _ := strconv.Atoi(r[0]); id != start+i {
			t.Fatalf("row %d is %q, want %d: a row is missing or repeated", i+1, r[0], start+i)
		}
	}
}

// resumeCase is a report to export, the page size, and where to stop.
type resumeCase struct {
	pageSize, stopAt int64
	first            string // the first column's name
	start, rows      int    // its number in the first row, the rows
}

// testResume runs an export that is stopped mid-way, then again, and
// checks that the second run goes on where the first stopped and the file
// has every row once.
func testResume(t *testing.T, cfg config, rc resumeCase) {
	dir := t.TempDir()
	cfg.out = filepath.Join(dir, "report.csv")
	cfg.pageSize = rc.pageSize
	var logs bytes.Buffer
	cfg.log = slog.New(slog.NewTextHandler(&logs, nil))

	ctx, first := stopAfter(t, cfg, rc.stopAt)
	err := run(ctx, first)
	if !errors.Is(err, errStopped) {
		t.Fatalf("first run: %v, want it stopped\nlogs:\n%s", err, logs.String())
	}
	b, err := os.ReadFile(cfg.out + ".checkpoint")
	if err != nil {
		t.Fatalf("the stopped run left no checkpoint: %v", err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if st.Checkpoint.Rows < rc.stopAt || st.Checkpoint.Rows >= int64(rc.rows) {
		t.Fatalf("checkpoint at %d rows, want it mid-way", st.Checkpoint.Rows)
	}
	if _, err := os.Stat(cfg.out); err == nil {
		t.Fatal("the stopped run wrote the final file")
	}
	// A kill can come after rows were written and before their
	// checkpoint was: the next run must drop them.
	f, err := os.OpenFile(cfg.out+".partial", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Repeat("999999,written after the checkpoint\n", 2000)) // longer than the rest
	f.Close()

	logs.Reset()
	if err := run(t.Context(), cfg); err != nil {
		t.Fatalf("second run: %v\nlogs:\n%s", err, logs.String())
	}
	checkRows(t, cfg.out, rc.first, rc.start, rc.rows)
	want := "rows_this_run=" + strconv.FormatInt(int64(rc.rows)-st.Checkpoint.Rows, 10)
	if !strings.Contains(logs.String(), "going on with a stopped export") || !strings.Contains(logs.String(), want) {
		t.Errorf("second run did not go on from the checkpoint (want %q in its logs):\n%s", want, logs.String())
	}
	for _, gone := range []string{cfg.out + ".checkpoint", cfg.out + ".partial"} {
		if _, err := os.Stat(gone); err == nil {
			t.Errorf("%s is left after the export completed", gone)
		}
	}
}

// TestResumeOnServer: stopped and run again against a deployment (a fake
// named by PARTNER_BASE_URL, which keeps its view between the runs).
func TestResumeOnServer(t *testing.T) {
	t.Parallel()
	srv := fake.NewServer(append(quick, fake.WithDemoData())...)
	defer srv.Close()
	env := map[string]string{"PARTNER_BASE_URL": srv.URL,
		"PARTNER_CLIENT_ID": fake.DefaultClientID, "PARTNER_CLIENT_SECRET": fake.DefaultClientSecret}
	testResume(t, config{getenv: func(k string) string { return env[k] }, reportID: demo.ReportPartners},
		resumeCase{pageSize: 4, stopAt: 10, first: "Partner ID", start: 1, rows: 25})
}

// TestResumeOnEmbeddedFake: the program's default, the demo report of
// 100,000 rows on the embedded fake, which a second run starts afresh, as
// after a kill.
func TestResumeOnEmbeddedFake(t *testing.T) {
	t.Parallel()
	testResume(t, config{getenv: func(string) string { return "" }, fakeOpts: quick},
		resumeCase{pageSize: 10000, stopAt: 30000, first: "Deal ID", start: 100000, rows: demo.ReportLargeRows})
}

// TestViewGoneStartsOver: a checkpoint whose view the service no longer
// has is dropped, and the export starts over.
func TestViewGoneStartsOver(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "partners.csv")
	writeStopped(t, out, staleRows, reports.Checkpoint{ViewID: 999, PageSize: 10, PageRows: 1, Rows: 1})
	var logs bytes.Buffer
	cfg := config{getenv: func(string) string { return "" }, fakeOpts: quick, reportID: demo.ReportPartners, out: out,
		log: slog.New(slog.NewTextHandler(&logs, nil))}
	if err := run(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	if n := strings.Count(string(b), "\n"); n != 26 || strings.Contains(string(b), "stale") {
		t.Errorf("file has %d lines, want a header and 25 rows, none of the stale ones:\n%s", n, b)
	}
	if !strings.Contains(logs.String(), "starting over") {
		t.Errorf("logs do not say the export started over:\n%s", logs.String())
	}
}

// staleRows is the partial file of a stopped export of
// demo.ReportPartners.
const staleRows = "Partner ID,Partner\n1,stale\n"

// writeStopped writes the partial file of a stopped export of
// demo.ReportPartners to out, holding partial, and its checkpoint at cp,
// as the program does.
func writeStopped(t *testing.T, out, partial string, cp reports.Checkpoint) {
	t.Helper()
	sum := sha256.Sum256([]byte(partial))
	b, err := json.Marshal(state{ReportID: demo.ReportPartners, Bytes: int64(len(partial)), SHA256: hex.EncodeToString(sum[:]), Checkpoint: cp})
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(os.WriteFile(out+".partial", []byte(partial), 0o644), os.WriteFile(out+".checkpoint", b, 0o644)); err != nil {
		t.Fatal(err)
	}
}

// TestRefusals: what cannot work is said before anything is written.
func TestRefusals(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "x.csv")
	os.WriteFile(out+".checkpoint", []byte(`{"report_id":101}`), 0o644)
	for _, tc := range []struct {
		cfg  config
		want string
	}{
		{config{getenv: func(k string) string { return map[string]string{"PARTNER_BASE_URL": "https://api.example.com"}[k] }},
			"PARTNER_CLIENT_ID is not set (nor is PARTNER_CLIENT_SECRET), but PARTNER_BASE_URL is"},
		{config{getenv: func(string) string { return "" }, reportID: demo.ReportPartners, out: out},
			"is a checkpoint of report 101, not 102"},
	} {
		tc.cfg.log = slog.New(slog.DiscardHandler)
		err := run(t.Context(), tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run: %v, want it to say %q", err, tc.want)
		}
	}
}

// exportPartners runs an export of the demo partners report (25 rows) on
// the embedded fake to out, and returns its logs and error.
func exportPartners(t *testing.T, out string) (string, error) {
	t.Helper()
	var logs bytes.Buffer
	cfg := config{getenv: func(string) string { return "" }, fakeOpts: quick, reportID: demo.ReportPartners, out: out,
		log: slog.New(slog.NewTextHandler(&logs, nil))}
	err := run(t.Context(), cfg)
	return logs.String(), err
}

// TestStartOverWithoutCheckpoint: a partial file with no checkpoint (a
// run killed before its first one) is dropped, and the run says so and
// why.
func TestStartOverWithoutCheckpoint(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "partners.csv")
	os.WriteFile(out+".partial", []byte("Partner ID,Partner\n1,stale\n"), 0o644)
	logs, err := exportPartners(t, out)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, out, "Partner ID", 1, 25)
	if !strings.Contains(logs, "starting over: the partial file has no checkpoint beside it (the run that wrote it stopped before its first checkpoint)") {
		t.Errorf("logs do not say the export started over and why:\n%s", logs)
	}
	// A first run, with no partial file, has nothing to say about it.
	out = filepath.Join(t.TempDir(), "partners.csv")
	if logs, err := exportPartners(t, out); err != nil || strings.Contains(logs, "starting over") {
		t.Errorf("first run: %v, logs:\n%s", err, logs)
	}
}

// plant makes a symbolic link at link to a new file holding "keep me",
// and returns a check that the file still holds it.
func plant(t *testing.T, link, to string) (untouched func() bool) {
	t.Helper()
	if to == "" {
		to = filepath.Join(t.TempDir(), "precious")
		os.WriteFile(to, []byte("keep me\n"), 0o644)
	}
	if err := os.Symlink(to, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	return func() bool {
		b, err := os.ReadFile(to)
		return err == nil && string(b) == "keep me\n"
	}
}

// TestPlantedLinksNotFollowed: a link planted where the program writes
// (FILE, FILE.partial, the checkpoint's old temporary name) is replaced,
// never written through; the export completes and the linked file is
// untouched.
func TestPlantedLinksNotFollowed(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "partners.csv")
	var checks []func() bool
	for _, name := range []string{out, out + ".partial", out + ".checkpoint.tmp"} {
		checks = append(checks, plant(t, name, ""))
	}
	if logs, err := exportPartners(t, out); err != nil {
		t.Fatalf("%v\nlogs:\n%s", err, logs)
	}
	for i, untouched := range checks {
		if !untouched() {
			t.Errorf("the file linked from the planted link %d was written to", i)
		}
	}
	checkRows(t, out, "Partner ID", 1, 25)
}

// TestBadCheckpointRefused: a checkpoint that is a link (to a file, or to
// /dev/zero, which would be read until memory runs out), too large to be
// one, not JSON or not of a position, and a partial file that is a link,
// each stop the run with an error naming the file, before anything is
// written; the files are left as they were.
func TestBadCheckpointRefused(t *testing.T) {
	t.Parallel()
	at1 := reports.Checkpoint{ViewID: 1, PageSize: 10, PageRows: 1, Rows: 1}
	stopped := func(partial string, cp reports.Checkpoint) func(t *testing.T, out string) func() bool {
		return func(t *testing.T, out string) func() bool {
			writeStopped(t, out, partial, cp)
			return func() bool { return true }
		}
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, out string) func() bool
		want  string
	}{
		{"a link to a file", func(t *testing.T, out string) func() bool { return plant(t, out+".checkpoint", "") }, "is a symbolic link"},
		{"a link to /dev/zero", func(t *testing.T, out string) func() bool {
			plant(t, out+".checkpoint", "/dev/zero")
			return func() bool { return true }
		}, "is a symbolic link"},
		{"too large", func(t *testing.T, out string) func() bool {
			writeStopped(t, out, staleRows, at1)
			b, _ := os.ReadFile(out + ".checkpoint")
			os.WriteFile(out+".checkpoint", append(b, strings.Repeat(" ", maxCheckpointSize)...), 0o644)
			return func() bool { return true }
		}, "is larger than 16384 bytes"},
		{"not JSON", func(t *testing.T, out string) func() bool {
			os.WriteFile(out+".checkpoint", []byte("garbage"), 0o644)
			return func() bool { return true }
		}, "is not a checkpoint: remove it to start over"},
		{"no position", func(t *testing.T, out string) func() bool {
			os.WriteFile(out+".checkpoint", []byte(`{"report_id":102,"bytes":-5}`), 0o644)
			return func() bool { return true }
		}, "is not a checkpoint this program wrote"},
		{"rows edited", stopped(staleRows, reports.Checkpoint{ViewID: 1, PageSize: 10, PageRows: 1, Rows: 1000000001}), "is not a checkpoint this program wrote"},
		{"next page edited", stopped(staleRows, reports.Checkpoint{ViewID: 1, PageSize: 10, NextPage: 1000, PageRows: 1, Rows: 1}), "is not a checkpoint this program wrote"},
		{"rows and page edited alike", stopped(staleRows, reports.Checkpoint{ViewID: 1, PageSize: 10, PageRows: 2, Rows: 2}),
			"does not hold a header and the 2 rows its checkpoint counts"},
		{"the partial file edited", func(t *testing.T, out string) func() bool {
			writeStopped(t, out, staleRows, at1)
			os.WriteFile(out+".partial", []byte(strings.Replace(staleRows, "stale", "STALE", 1)), 0o644)
			return func() bool { return true }
		}, "is not the file its checkpoint describes (its SHA-256 differs)"},
		{"the partial file cut short", func(t *testing.T, out string) func() bool {
			writeStopped(t, out, staleRows, at1)
			os.WriteFile(out+".partial", []byte(staleRows[:20]), 0o644)
			return func() bool { return true }
		}, "is shorter than its checkpoint says (20 bytes, not 27)"},
		{"a link as the partial file", func(t *testing.T, out string) func() bool {
			writeStopped(t, out, staleRows, at1)
			os.Remove(out + ".partial")
			return plant(t, out+".partial", "")
		}, "is a symbolic link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out := filepath.Join(dir, "partners.csv")
			untouched := tc.setup(t, out)
			before := listDir(t, dir)
			logs, err := exportPartners(t, out)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "partners.csv.") {
				t.Errorf("run: %v, want an error naming the file and saying %q\nlogs:\n%s", err, tc.want, logs)
			}
			if !untouched() {
				t.Error("the file a planted link points to was written to")
			}
			if after := listDir(t, dir); after != before {
				t.Errorf("the directory changed from %s to %s", before, after)
			}
		})
	}
}

// listDir returns the names and sizes in dir, as one string.
func listDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		fi, _ := os.Lstat(filepath.Join(dir, e.Name()))
		b.WriteString(e.Name() + ":" + strconv.FormatInt(fi.Size(), 10) + " ")
	}
	return b.String()
}

// TestUsage: -h prints the flags and the settings the program reads, and
// is not an error of the command line (main exits 0 on flag.ErrHelp).
func TestUsage(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	var cfg config
	if err := parseFlags(&cfg, []string{"-h"}, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("parseFlags(-h) = %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"Usage: nightly-export", "-report", "-out", "PARTNER_BASE_URL", "PARTNER_CLIENT_SECRET",
		"PARTNER_PORTAL_WORD", "PARTNER_SUBSCRIPTION_KEY", "Exit status"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, stderr.String())
		}
	}
	stderr.Reset()
	if err := parseFlags(&cfg, []string{"-report", "7", "extra"}, &stderr); err == nil || !strings.Contains(stderr.String(), `unexpected argument "extra"`) {
		t.Errorf("an extra argument: %v, stderr %q", err, stderr.String())
	}
}

// TestReachable: the positions an export reaches, in pages of 4: after
// full pages, inside a page, and after the last, short page; and
// positions it does not.
func TestReachable(t *testing.T) {
	t.Parallel()
	sum := strings.Repeat("0", 64)
	for _, tc := range []struct {
		next, pageRows, rows int64
		ok                   bool
	}{
		{1, 0, 4, true}, {2, 3, 11, true}, {7, 0, 25, true}, // after 6 full pages and a page of 1
		{0, 0, 0, false}, {2, 0, 9, false}, {7, 0, 24, false}, {2, 1, 8, false}, {1 << 60, 0, 4, false}, {-1, 0, 4, false},
	} {
		st := state{ReportID: 1, Bytes: 100, SHA256: sum, Checkpoint: reports.Checkpoint{ViewID: 1, PageSize: 4, NextPage: tc.next, PageRows: tc.pageRows, Rows: tc.rows}}
		if got := reachable(st); got != tc.ok {
			t.Errorf("next page %d, page rows %d, rows %d: reachable %v, want %v", tc.next, tc.pageRows, tc.rows, got, tc.ok)
		}
	}
}
