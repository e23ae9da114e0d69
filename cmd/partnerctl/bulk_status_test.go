package main

import (
	"context"
	"encoding/csv"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
)

// cancelOn is a writer that cancels a context once what was written
// contains a string: Ctrl-C at a known point of a command's output.
type cancelOn struct {
	syncBuffer
	when   string
	cancel context.CancelFunc
	once   sync.Once
}

func (w *cancelOn) Write(p []byte) (int, error) {
	n, err := w.syncBuffer.Write(p)
	if strings.Contains(w.String(), w.when) {
		w.once.Do(w.cancel)
	}
	return n, err
}

// TestBulkLoadInterruptedGoesOnWithStatus: a load whose --wait is
// interrupted (Ctrl-C while the execution runs) exits 130 and prints the
// bulk status command that goes on; that command, run as printed, shows
// the running execution without --wait, and with it follows the execution
// to its end and writes the failed rows.
func TestBulkLoadInterruptedGoesOnWithStatus(t *testing.T) {
	t.Parallel()
	clock := fake.NewManualClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	srv := newFake(t, fake.WithDemoData(), fake.WithClock(clock), fake.WithBulkDelay(time.Minute))
	defer srv.Close()
	c := newCLI(srv)
	dir := t.TempDir()
	in := filepath.Join(dir, "accounts.csv")
	writeFile(t, in, accountsCSV)
	errs := filepath.Join(dir, "failed rows.csv")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &cancelOn{when: ": running\n", cancel: cancel}
	var stderr syncBuffer
	code := c.runCtx(ctx, t, out, &stderr, "bulk", "load", in, "--integration", demo.AccountIntegration, "--errors-out", errs)
	exe := srv.BulkExecutions()
	if len(exe) != 1 {
		t.Fatalf("executions: %+v", exe)
	}
	want := "to go on: partnerctl bulk status " + exe[0].ID + " --integration " + demo.AccountIntegration +
		" --wait --errors-out '" + errs + "'\n"
	if code != exitInterrupted || !strings.HasSuffix(stderr.String(), want) || !strings.Contains(stderr.String(), "still running") {
		t.Fatalf("exit %d, stderr %q; want 130 and ending %q", code, stderr.String(), want)
	}
	// The printed command, as the shell splits it.
	goOn := []string{"bulk", "status", exe[0].ID, "--integration", demo.AccountIntegration, "--wait", "--errors-out", errs}

	r := c.must(t, goOn[:5]...) // without --wait: one read
	if !strings.Contains(r.stdout, exe[0].ID+": running\n") || !strings.Contains(r.stdout, "follow it with: partnerctl bulk status "+exe[0].ID) {
		t.Fatalf("status of the running execution:\n%s", r.stdout)
	}

	clock.Advance(time.Minute)
	r = c.run(t, goOn...) // one row of three is refused: exit 5
	if r.code != exitDataFailed || !strings.Contains(r.stdout, "completed: 3 records, 2 succeeded, 1 failed, 0 skipped") ||
		!strings.Contains(r.stdout, "failed rows written to "+errs) {
		t.Fatalf("going on:\n%s", r.stdout)
	}
	recs, err := csv.NewReader(strings.NewReader(readFile(t, errs))).ReadAll()
	if err != nil || len(recs) != 2 || recs[1][0] != "X-2" || !strings.Contains(recs[1][len(recs[1])-1], "employees") {
		t.Fatalf("errors file: %v %q", err, recs)
	}
	if loads := srv.CountRequests("POST", "/bulk/v1/bulkload"); loads != 1 {
		t.Fatalf("the load was sent %d times", loads)
	}
}

// TestBulkLoadPrintsReasons: a load with failed rows, run without
// --errors-out, prints the first reasons (key, message, row) and names
// the flag that writes them all, having asked the service for that many.
func TestBulkLoadPrintsReasons(t *testing.T) {
	t.Parallel()
	srv := bulkServer(t)
	c := newCLI(srv)
	in := filepath.Join(t.TempDir(), "accounts.csv")
	writeFile(t, in, accountsCSV+"X-4,Acme,lots\nX-5,Globex,few\nX-6,Stark,some\n")
	r := c.run(t, "bulk", "load", in, "--integration", demo.AccountIntegration, "--wait")
	if r.code != exitDataFailed {
		t.Fatalf("4 rows of 6 refused: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{
		"completed: 6 records, 2 succeeded, 4 failed, 0 skipped\n",
		"failed rows, 3 of 4 shown (--errors-out FILE writes them all as CSV):\n",
		"  key X-2: ", `"many" is not a number`,
		// The row's columns in the file's order.
		"    row: account_info.external_account_id=X-2, name=Hooli, employees=many\n",
		"  key X-5: ",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "key X-6") {
		t.Errorf("more than 3 reasons:\n%s", r.stdout)
	}
	for _, req := range srv.Requests() {
		if strings.HasPrefix(req.Path, "/bulk/v1/status/") && (!strings.Contains(req.Query, "include_errors=true") || !strings.Contains(req.Query, "max_errors=3")) {
			t.Errorf("status read %s?%s does not ask for the reasons shown", req.Path, req.Query)
		}
	}

	all := filepath.Join(t.TempDir(), "wrong-key.csv")
	writeFile(t, all, "id,name\n1,Initech\n")
	r = c.run(t, "bulk", "load", all, "--integration", demo.AccountIntegration, "--wait")
	// The command did its work; the data says the records failed: 5.
	if r.code != exitDataFailed || !strings.Contains(r.stdout, "failed rows, 1 of 1 shown") || !strings.Contains(r.stderr, "no record succeeded: all 1 failed") {
		t.Fatalf("all failed: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// TestBulkStatusUsage: bulk status checks its arguments before sending,
// and an unknown execution exits 1 naming it.
func TestBulkStatusUsage(t *testing.T) {
	t.Parallel()
	srv := bulkServer(t)
	c := newCLI(srv)
	for _, args := range [][]string{
		{"bulk", "status"},
		{"bulk", "status", "exe_1"},
		{"bulk", "status", "exe_1", "--integration", "i", "--max-errors", "-1"},
		{"bulk", "status", "exe_1", "--integration", "i", "--errors-out", t.TempDir()},
	} {
		if r := c.run(t, args...); r.code != exitUsage {
			t.Errorf("%q: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests sent for usage errors", n)
	}
	r := c.run(t, "bulk", "status", "exe_nope", "--integration", demo.AccountIntegration)
	if r.code != exitFail || !strings.Contains(r.stderr, "exe_nope") {
		t.Fatalf("unknown execution: exit %d, stderr %q", r.code, r.stderr)
	}
}
