package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/fakeserver/fakeadmin"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/reports"
)

// exportWant is the CSV export of reportServer's report 7.
const exportWant = "Zone,Amount,Account\nEMEA,1200,\"Acme, Inc.\"\nAPAC,30.5,Globex\nEMEA,7,\n"

// TestReportsExportUnderFaults runs reports export -o against the fake
// with faults on its data pages: a fault the retries get past gives the
// whole file; one they do not exits 1 naming the failure and leaves no
// file, no temporary file, and an earlier file as it was. A fault for
// some requests is on page 0, the page that holds the rows, whatever
// order the export's requests (page 0, a probe, a page past the end)
// arrive in, and the test checks that the export met every use of it.
// The 429's Retry-After asks for no wait: the client's handling of the
// waits it asks for is tested in package core.
func TestReportsExportUnderFaults(t *testing.T) {
	t.Parallel()
	const pages = "/report/v1/view/*/data"
	const size = reports.DefaultExportPageSize // the export's pages; PageNumber 0: page 0
	for _, tc := range []struct {
		name  string
		fault fake.Fault
		fails string // "" when the export succeeds; else what stderr says
	}{
		{"503 twice on page 0", fake.Fault{Status: http.StatusServiceUnavailable, PageSize: size, Times: 2}, ""},
		{"429 with Retry-After on page 0", fake.Fault{Status: http.StatusTooManyRequests, RetryAfter: "0", PageSize: size, Times: 1}, ""},
		{"page 0 dropped after processing", fake.Fault{DropAfter: true, PageSize: size, Times: 1}, ""},
		{"page 0 cut short twice", fake.Fault{Truncate: true, PageSize: size, Times: 2}, ""},
		{"page 0 slow", fake.Fault{Dribble: time.Millisecond, PageSize: size, Times: 1}, ""},
		{"503 throughout", fake.Fault{Status: http.StatusServiceUnavailable}, "503"},
		{"cut short throughout", fake.Fault{Truncate: true}, "reading response: unexpected EOF"},
		{"dropped throughout", fake.Fault{Drop: true}, "EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := reportServer(t)
			c := newCLI(srv)
			dir := t.TempDir()
			out := filepath.Join(dir, "deals.csv")
			writeFile(t, out, "earlier export\n")
			ft := tc.fault
			ft.Method, ft.Path = http.MethodPost, pages
			srv.InjectFault(ft)
			r := c.run(t, "reports", "export", "7", "-o", out, "--force")
			if left := srv.Faults(); ft.Times > 0 && len(left) != 0 {
				t.Errorf("the fault was left with %d of its %d uses: the export did not meet it on page 0", left[0].Times, ft.Times)
			}
			if n := faultsMet(srv.Fake, pages); ft.Times == 0 && n == 0 {
				t.Error("no data request met the fault")
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("files in the directory: %v, want %s alone", entries, out)
			}
			if tc.fails == "" {
				if r.code != exitOK || readFile(t, out) != exportWant {
					t.Fatalf("exit %d, stderr %q, file %q", r.code, r.stderr, readFile(t, out))
				}
				return
			}
			t.Logf("stderr: %s", r.stderr)
			if r.code != exitFail || !strings.Contains(r.stderr, "report 7") || !strings.Contains(r.stderr, tc.fails) {
				t.Errorf("exit %d, stderr %q; want 1 and %q", r.code, r.stderr, tc.fails)
			}
			if got := readFile(t, out); got != "earlier export\n" {
				t.Errorf("the failed export changed the file: %q", got)
			}
		})
	}
}

// faultsMet counts the requests to paths matching pattern that met an
// injected fault, as the fake's request log tells.
func faultsMet(f *fake.Fake, pattern string) int {
	n := 0
	for _, r := range f.Requests() {
		if ok, _ := path.Match(pattern, r.Path); ok && r.Fault != "" {
			n++
		}
	}
	return n
}

// TestBulkLoadUnderFaults runs bulk load --wait against the fake with
// faults on the load request: one the service certainly did not take (a
// 429) is sent again; one after which it may have started the load (its
// answer dropped, a 5xx, an answer cut short, a connection that closed
// after the request went out) is sent once and exits 3 saying so. Faults
// on the status reads that follow are retried. The 429's Retry-After
// asks for no wait, as in TestReportsExportUnderFaults.
func TestBulkLoadUnderFaults(t *testing.T) {
	t.Parallel()
	const load = "/bulk/v1/bulkload"
	for _, tc := range []struct {
		name  string
		fault fake.Fault
		sent  int // load requests the fake saw
	}{
		{"429 with Retry-After", fake.Fault{Status: http.StatusTooManyRequests, RetryAfter: "0", Times: 1}, 2},
		{"slow answer", fake.Fault{Dribble: time.Millisecond, Times: 1}, 1},
		{"dropped after processing", fake.Fault{DropAfter: true, Times: 1}, 1},
		{"500", fake.Fault{Status: http.StatusInternalServerError, Times: 1}, 1},
		{"answer cut short", fake.Fault{Truncate: true, Times: 1}, 1},
		{"dropped unanswered", fake.Fault{Drop: true, Times: 1}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := bulkServer(t)
			c := newCLI(srv)
			in := filepath.Join(t.TempDir(), "accounts.csv")
			writeFile(t, in, accountsCSV)
			ft := tc.fault
			ft.Method, ft.Path = http.MethodPost, load
			srv.InjectFault(ft)
			srv.InjectFault(fake.Fault{Method: http.MethodGet, Path: "/bulk/v1/status/*", Status: http.StatusBadGateway, Times: 1})
			r := c.run(t, "bulk", "load", in, "--integration", demo.AccountIntegration, "--wait")
			if n := srv.CountRequests(http.MethodPost, load); n != tc.sent {
				t.Errorf("the fake saw %d load requests, want %d", n, tc.sent)
			}
			left := srv.Faults()
			if slices.ContainsFunc(left, func(f fake.Fault) bool { return f.Path == load }) {
				t.Error("the load request did not meet its fault")
			}
			if tc.sent == 2 || tc.fault.Dribble > 0 {
				if r.code != exitDataFailed || !strings.Contains(r.stdout, "completed: 3 records, 2 succeeded, 1 failed") {
					t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
				}
				if len(left) != 0 {
					t.Error("no status read met the 502")
				}
				return
			}
			t.Logf("stderr: %s", r.stderr)
			if r.code != exitUnknown || !strings.Contains(r.stderr, "the service may have started it, so it was not sent again") ||
				!strings.Contains(r.stderr, "before loading again") || strings.Contains(r.stdout, "started") {
				t.Errorf("exit %d, stdout %q, stderr %q; want 3 and the outcome unknown", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestCLIFaultsThroughAdminAPI sets the faults as a user of partnerfake
// does, through the admin API's POST /_fake/faults: an export whose data
// pages are cut short every time exits 1 and leaves no file; one whose
// page 0 meets two 503s writes the whole file; a load whose answer is dropped
// after the fake took it exits 3, saying so, and is sent once.
func TestCLIFaultsThroughAdminAPI(t *testing.T) {
	t.Parallel()
	admin := fakeadmin.New(func() *fake.Fake {
		return fake.New(append(mocktest.NoWaits(), mocktest.ContractCheck(t), fake.WithDemoData(), fake.WithBulkDelay(0))...)
	})
	ts := httptest.NewServer(admin)
	admin.SetURL(ts.URL)
	defer func() { ts.Close(); admin.Close() }()
	c := &cli{base: ts.URL, env: map[string]string{"PARTNER_BASE_URL": ts.URL,
		"PARTNER_CLIENT_ID": fake.DefaultClientID, "PARTNER_CLIENT_SECRET": fake.DefaultClientSecret}}
	fault := func(body string) {
		t.Helper()
		resp, err := http.Post(ts.URL+"/_fake/"+"faults", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST /_fake/faults %s: %s", body, resp.Status)
		}
	}
	clearFaults := func() {
		t.Helper()
		req, _ := http.NewRequest(http.MethodDelete, ts.URL+"/_fake/"+"faults", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "pipeline.csv")
	report := strconv.FormatInt(demo.ReportPipeline, 10)

	fault(`{"method":"post","path":"/report/v1/view/*/data","truncate":true}`)
	r := c.run(t, "reports", "export", report, "-o", out)
	if entries, _ := os.ReadDir(dir); r.code != exitFail || len(entries) != 0 || !strings.Contains(r.stderr, "unexpected EOF") {
		t.Errorf("export cut short throughout: exit %d, stderr %q, files %v; want 1 and no file", r.code, r.stderr, entries)
	}
	clearFaults()
	fault(`{"method":"POST","path":"/report/v1/view/*/data","status":503,"times":2,"page":{"number":0,"size":` +
		strconv.Itoa(reports.DefaultExportPageSize) + `}}`)
	r = c.run(t, "reports", "export", report, "-o", out)
	if r.code != exitOK || strings.Count(readFile(t, out), "\n") < 2 {
		t.Errorf("export after two 503s: exit %d, stderr %q", r.code, r.stderr)
	}
	if left := admin.Fake().Faults(); len(left) != 0 {
		t.Errorf("page 0 met %d of the two 503s", 2-left[0].Times)
	}

	in := filepath.Join(dir, "accounts.csv")
	writeFile(t, in, accountsCSV)
	fault(`{"method":"POST","path":"/bulk/v1/bulkload","drop_after":true,"times":1}`)
	r = c.run(t, "bulk", "load", in, "--integration", demo.AccountIntegration, "--wait")
	if n := admin.Fake().CountRequests(http.MethodPost, "/bulk/v1/bulkload"); n != 1 {
		t.Errorf("the fake saw %d load requests, want 1", n)
	}
	if r.code != exitUnknown || !strings.Contains(r.stderr, "so it was not sent again") {
		t.Errorf("load dropped after processing: exit %d, stderr %q; want 3 and the outcome unknown", r.code, r.stderr)
	}
}
