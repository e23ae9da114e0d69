package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)

// stoppedExport is a fake whose report export stops after two pages
// (pageCutter), and the files a stopped export to out left.
type stoppedExport struct {
	srv          *fake.Server
	cut          *pageCutter
	c            *cli
	report       string
	other        string // a second report, with a view of its own
	otherView    int64
	dir, out     string
	partial, cp  string
	partialBytes string
	cpBytes      string
}

// stopExport runs an export of 25,000 rows to deals.csv that stops after
// 20,000 (two pages), and keeps what it left.
func stopExport(t *testing.T) *stoppedExport {
	t.Helper()
	s := &stoppedExport{cut: &pageCutter{}}
	s.srv = fake.NewServer(append([]fake.Option{mocktest.ContractCheck(t), fake.WithMiddleware(s.cut.middleware)}, mocktest.NoWaits()...)...)
	t.Cleanup(s.srv.Close)
	gen := func(i int) []any { return []any{i, fmt.Sprintf("row, %d", i)} }
	cols := []fake.Column{{ID: "n", Name: "N", Type: "NUMBER"}, {ID: "l", Name: "Label"}}
	s.report = strconv.FormatInt(s.srv.AddReport(fake.Report{Name: "big", Columns: cols, RowCount: 25_000, Generate: gen}), 10)
	other := s.srv.AddReport(fake.Report{Name: "other", Columns: cols, RowCount: 25_000, Generate: gen})
	s.other = strconv.FormatInt(other, 10)
	s.c = newCLI(s.srv)
	s.dir = t.TempDir()
	s.out = filepath.Join(s.dir, "deals.csv")
	s.partial, s.cp = resumeFiles(s.out)
	s.cut.on.Store(true)
	if r := s.c.run(t, "reports", "export", s.report, "-o", s.out); r.code != exitFail || !strings.Contains(r.stderr, "--resume") {
		t.Fatalf("stopped export: exit %d, stderr %q", r.code, r.stderr)
	}
	s.cut.on.Store(false)
	s.partialBytes, s.cpBytes = readFile(t, s.partial), readFile(t, s.cp)
	// A view of the other report, for a checkpoint that names it.
	var st exportState
	json.Unmarshal([]byte(s.cpBytes), &st)
	s.otherView = st.Checkpoint.ViewID + 1
	return s
}

// restore puts the stopped export's files back as it left them.
func (s *stoppedExport) restore(t *testing.T) {
	t.Helper()
	for _, f := range []string{s.partial, s.cp, s.out} {
		os.Remove(f)
	}
	writeFile(t, s.partial, s.partialBytes)
	writeFile(t, s.cp, s.cpBytes)
}

// editCheckpoint rewrites the checkpoint with edit applied to its JSON
// object.
func (s *stoppedExport) editCheckpoint(t *testing.T, edit func(m map[string]any)) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s.cpBytes), &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, _ := json.Marshal(m)
	os.Remove(s.cp)
	writeFile(t, s.cp, string(b))
}

// TestExportResumeRefusesForeignCheckpoints: a checkpoint that does not
// match the command, the report or the partial file, or that is not a
// small regular file of this user's, is refused with a usage error that
// says how to start over, before anything is written: the partial file
// keeps every byte, no data page is asked for, and -o is not created.
func TestExportResumeRefusesForeignCheckpoints(t *testing.T) {
	t.Parallel()
	s := stopExport(t)
	// The other report's view, prepared: a checkpoint naming it would
	// append the other report's rows.
	if r := s.c.run(t, "reports", "export", s.other, "--format", "jsonl"); r.code != 0 {
		t.Fatalf("export of the other report: exit %d, %s", r.code, r.stderr)
	}
	elsewhere := filepath.Join(t.TempDir(), "saved.checkpoint")
	writeFile(t, elsewhere, s.cpBytes)
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T)
		args  []string
		want  string
	}{
		{"another report", nil, []string{"reports", "export", s.other, "-o", s.out, "--resume"}, "is of report " + s.report + ", not " + s.other},
		{"another format", nil, []string{"reports", "export", s.report, "-o", s.out, "--format", "jsonl", "--resume"}, "is csv, not jsonl"},
		{"--raw-csv not kept", nil, []string{"reports", "export", s.report, "-o", s.out, "--raw-csv", "--resume"}, "written without --raw-csv"},
		{"another output", func(t *testing.T) {
			s.editCheckpoint(t, func(m map[string]any) { m["output"] = "other.csv" })
		}, nil, "of an export to other.csv, not deals.csv"},
		{"tampered length", func(t *testing.T) {
			s.editCheckpoint(t, func(m map[string]any) { m["bytes"] = m["bytes"].(float64) - 10 })
		}, nil, "is not the file its checkpoint describes"},
		{"longer than the file", func(t *testing.T) {
			s.editCheckpoint(t, func(m map[string]any) { m["bytes"] = m["bytes"].(float64) + 10 })
		}, nil, "is shorter than its checkpoint says"},
		{"tampered partial file", func(t *testing.T) {
			os.Remove(s.partial)
			writeFile(t, s.partial, strings.Replace(s.partialBytes, "row, 5", "row, 6", 1))
		}, nil, "is not the file its checkpoint describes"},
		// A checkpoint's position must be where its rows end, and those
		// rows the partial file's: a hand-edited one would skip rows, or
		// count rows nobody wrote.
		{"a page skipped", func(t *testing.T) {
			s.editCheckpoint(t, func(m map[string]any) { m["checkpoint"].(map[string]any)["next_page"] = 3.0 })
		}, nil, "is at page 3, 0 rows into it, of pages of 10000 rows: not where 20,000 rows end"},
		{"rows inflated", func(t *testing.T) {
			s.editCheckpoint(t, func(m map[string]any) { m["checkpoint"].(map[string]any)["rows"] = 1_000_089_999.0 })
		}, nil, "not where 1,000,089,999 rows end"},
		{"rows and page moved together", func(t *testing.T) {
			s.editCheckpoint(t, func(m map[string]any) {
				cp := m["checkpoint"].(map[string]any)
				cp["rows"], cp["next_page"] = 30_000.0, 3.0
			})
		}, nil, "holds 20,000 whole rows, its checkpoint says 30,000"},
		{"a row added, its hash made anew", func(t *testing.T) {
			grown := s.partialBytes + "20000,\"row, 20000\"\n"
			os.Remove(s.partial)
			writeFile(t, s.partial, grown)
			s.editCheckpoint(t, func(m map[string]any) {
				sum := sha256.Sum256([]byte(grown))
				m["bytes"], m["sha256"] = float64(len(grown)), hex.EncodeToString(sum[:])
			})
		}, nil, "holds 20,001 whole rows, its checkpoint says 20,000"},
		{"a row cut in two", func(t *testing.T) {
			cut := s.partialBytes[:len(s.partialBytes)-3]
			os.Remove(s.partial)
			writeFile(t, s.partial, cut)
			s.editCheckpoint(t, func(m map[string]any) {
				sum := sha256.Sum256([]byte(cut))
				m["bytes"], m["sha256"] = float64(len(cut)), hex.EncodeToString(sum[:])
			})
		}, nil, "holds 19,999 whole rows, its checkpoint says 20,000"},
		{"another report's view", func(t *testing.T) {
			s.editCheckpoint(t, func(m map[string]any) { m["checkpoint"].(map[string]any)["view_id"] = s.otherView })
		}, nil, fmt.Sprintf("names view %d, of report %s, not %s", s.otherView, s.other, s.report)},
		{"an older checkpoint", func(t *testing.T) {
			s.editCheckpoint(t, func(m map[string]any) { delete(m, "version"); delete(m, "sha256") })
		}, nil, "is not a checkpoint this partnerctl wrote"},
		{"not JSON", func(t *testing.T) { os.Remove(s.cp); writeFile(t, s.cp, "garbage") }, nil, "is not a checkpoint"},
		{"too large", func(t *testing.T) {
			os.Remove(s.cp)
			writeFile(t, s.cp, s.cpBytes+strings.Repeat(" ", maxCheckpointSize))
		}, nil, "is larger than 16384 bytes"},
		{"a link to a checkpoint", func(t *testing.T) { os.Remove(s.cp); symlink(t, elsewhere, s.cp) }, nil, "is a symbolic link"},
		{"a link to /dev/zero", func(t *testing.T) { os.Remove(s.cp); symlink(t, "/dev/zero", s.cp) }, nil, "is a symbolic link"},
		{"a link as the partial file", func(t *testing.T) {
			target := filepath.Join(s.dir, "precious")
			writeFile(t, target, s.partialBytes)
			os.Remove(s.partial)
			symlink(t, target, s.partial)
		}, nil, "is a symbolic link"},
		{"a directory", func(t *testing.T) { os.Remove(s.cp); os.Mkdir(s.cp, 0o700) }, nil, "is not a regular file"},
	} {
		s.restore(t)
		args := tc.args
		if args == nil {
			args = []string{"reports", "export", s.report, "-o", s.out, "--resume"}
		}
		if tc.plant != nil {
			tc.plant(t)
		}
		partialBefore, _ := os.ReadFile(s.partial)
		s.cut.take()
		r := s.c.run(t, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "export without --resume") {
			t.Errorf("%s: exit %d, stderr %q; want 2, %q and how to start over", tc.name, r.code, r.stderr, tc.want)
		}
		if after, _ := os.ReadFile(s.partial); string(after) != string(partialBefore) {
			t.Errorf("%s: the partial file was written", tc.name)
		}
		if pages := s.cut.take(); len(pages) != 0 {
			t.Errorf("%s: pages %v asked for", tc.name, pages)
		}
		if _, err := os.Lstat(s.out); err == nil {
			t.Errorf("%s: %s was created", tc.name, s.out)
		}
		os.Remove(s.cp) // a directory, in one case
		if tc.name == "a link as the partial file" {
			if got := readFile(t, filepath.Join(s.dir, "precious")); got != s.partialBytes {
				t.Errorf("%s: the link's target was written", tc.name)
			}
		}
	}

	// A view the service no longer has: the resume says to start over.
	s.restore(t)
	s.editCheckpoint(t, func(m map[string]any) { m["checkpoint"].(map[string]any)["view_id"] = 999_999 })
	r := s.c.run(t, "reports", "export", s.report, "-o", s.out, "--resume")
	if r.code != exitFail || !strings.Contains(r.stderr, "view 999999 is gone") || !strings.Contains(r.stderr, "export without --resume") {
		t.Errorf("gone view: exit %d, stderr %q", r.code, r.stderr)
	}
	if got := readFile(t, s.partial); got != s.partialBytes {
		t.Error("gone view: the partial file was written")
	}

	// The files left as they were, the same command goes on.
	s.restore(t)
	s.c.must(t, "reports", "export", s.report, "-o", s.out, "--resume")
	if got := readFile(t, s.out); got != bigExport("csv", 25_000) {
		t.Errorf("after the refusals, the resumed export differs from the whole (%d bytes)", len(got))
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
}

// TestExportFilesNeverWrittenThroughLinks: links planted at
// .F.checkpoint.tmp, .F.partial and .F.checkpoint before an export that
// stops and saves its checkpoint, and before its resume's new
// checkpoints, are never written through: their targets keep their
// content, and the export's own files are regular files.
func TestExportFilesNeverWrittenThroughLinks(t *testing.T) {
	t.Parallel()
	s := stopExport(t)
	targets := map[string]string{}
	plant := func(t *testing.T) {
		for _, name := range []string{s.cp + ".tmp", s.partial, s.cp} {
			target := filepath.Join(s.dir, "precious-"+filepath.Base(name))
			writeFile(t, target, "keep me\n")
			os.Remove(name)
			symlink(t, target, name)
			targets[name] = target
		}
	}
	check := func(t *testing.T, when string) {
		t.Helper()
		for name, target := range targets {
			if got := readFile(t, target); got != "keep me\n" {
				t.Errorf("%s: the target of the link at %s was written: %.40q", when, filepath.Base(name), got)
			}
		}
	}

	// A new export over planted links: stops after two pages, having
	// saved checkpoints.
	os.Remove(s.partial)
	os.Remove(s.cp)
	plant(t)
	s.cut.on.Store(true)
	if r := s.c.run(t, "reports", "export", s.report, "-o", s.out); r.code != exitFail || !strings.Contains(r.stderr, "20,000 rows kept") {
		t.Fatalf("stopped export over links: exit %d, stderr %q", r.code, r.stderr)
	}
	s.cut.on.Store(false)
	check(t, "new export")
	for _, name := range []string{s.partial, s.cp} {
		if fi, err := os.Lstat(name); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s after the stopped export: %v, %v; want a regular file", filepath.Base(name), fi, err)
		}
	}

	// Its resume, with a link planted again at .F.checkpoint.tmp, saves
	// new checkpoints and completes.
	os.Remove(s.cp + ".tmp")
	symlink(t, targets[s.cp+".tmp"], s.cp+".tmp")
	s.c.must(t, "reports", "export", s.report, "-o", s.out, "--resume")
	check(t, "resumed export")
	if got := readFile(t, s.out); got != bigExport("csv", 25_000) {
		t.Errorf("the resumed export differs from the whole (%d bytes)", len(got))
	}
	entries, _ := os.ReadDir(s.dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// deals.csv, the three targets and the planted .tmp link; no
	// temporary checkpoint left.
	if len(names) != 5 {
		t.Errorf("directory holds %q, want deals.csv, the link targets and the planted link", names)
	}
	if n := s.srv.CountRequests(http.MethodPost, "/report/v1/view/"+s.report+"/prepare_export"); n != 2 {
		t.Errorf("%d views prepared, want 2 (the first export, the one over links; none for the resume)", n)
	}
}
