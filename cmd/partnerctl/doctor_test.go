package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/testkit/contract"
)

// doctorArgs reach every check of the demo data but the view.
var doctorArgs = []string{"doctor", "--object", demo.Opportunity1, "--integration", demo.OpportunityIntegration,
	"--user", demo.UserEmail1, "--attribute", "region", "--namespace", "1"}

// doctorReport is the --json report.
type doctorReport struct {
	Checks []struct {
		Name, Operation, Status, Note string
		Divergences                   []struct{ Operation, Member, Fake, Deployment string }
	}
	Diverged bool
}

func parseDoctor(t *testing.T, out string) doctorReport {
	t.Helper()
	var r doctorReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	return r
}

// TestDoctorAgainstTheFake: against the fake, doctor exits 0 over more
// than ten read-only operations, its --json parses, and the fake's
// request log holds no write from it.
func TestDoctorAgainstTheFake(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData(), fake.WithViewDelay(0))
	defer srv.Close()
	c := newCLI(srv)
	res := c.must(t, doctorArgs...)
	if !strings.Contains(res.stdout, "0 diverged") {
		t.Errorf("stdout:\n%s", res.stdout)
	}
	r := parseDoctor(t, c.must(t, append(doctorArgs, "--json")...).stdout)
	ops := map[string]bool{}
	for _, ch := range r.Checks {
		if ch.Status == "passed" && ch.Operation != "" {
			ops[ch.Operation] = true
		}
		if ch.Status == "diverged" || ch.Status == "failed" {
			t.Errorf("%+v", ch)
		}
	}
	if len(ops) < 10 || r.Diverged {
		t.Errorf("passed over %d operations, diverged %v", len(ops), r.Diverged)
	}
	checker, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	writes := []string{"createUser", "updateUser", "prepareExport", "audit_object", "update_external_id", "bulkload",
		"bulkload_opportunities", "upload_url", "fake-upload", "fake-upload-put", "WebhookRegistration", "DeleteSubscriber"}
	for _, lr := range srv.Requests() {
		x, _ := checker.CheckRequest(&http.Request{Method: lr.Method, URL: &url.URL{Path: lr.Path}, Header: http.Header{}}, nil)
		if x == nil || slices.Contains(writes, x.Operation()) {
			t.Errorf("doctor sent %s %s: a write, or no operation", lr.Method, lr.Path)
		}
	}
}

// TestDoctorThroughARewritingProxy: through a proxy in front of the fake
// that renames, drops and retypes members, doctor exits 5 and names each
// change by operation and member, and nothing else.
func TestDoctorThroughARewritingProxy(t *testing.T) {
	t.Parallel()
	srv := fake.NewServer(fake.WithDemoData(), fake.WithViewDelay(0))
	defer srv.Close()
	target, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		var edit func(map[string]any)
		switch p := resp.Request.URL.Path; {
		case p == "/report/v1/list":
			edit = func(v map[string]any) {
				eachItem(v, "results", func(r map[string]any) { r["title"] = r["name"]; delete(r, "name") })
			}
		case p == "/event/v1/metadata/integration":
			edit = func(v map[string]any) {
				eachItem(v, "integrations", func(r map[string]any) { delete(r, "integration_type") })
			}
		case strings.HasSuffix(p, "/chart-data"):
			edit = func(v map[string]any) { v["reportVersion"] = "1" }
		default:
			return nil
		}
		var v map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			return err
		}
		resp.Body.Close()
		edit(v)
		b, _ := json.Marshal(v)
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	ps := httptest.NewServer(proxy)
	defer ps.Close()
	c := newCLI(srv)
	c.env["PARTNER_BASE_URL"] = ps.URL
	res := c.run(t, append(doctorArgs, "--json")...)
	if res.code != exitDataFailed {
		t.Fatalf("exit %d, want %d; stderr %s", res.code, exitDataFailed, res.stderr)
	}
	var got []string
	for _, ch := range parseDoctor(t, res.stdout).Checks {
		for _, d := range ch.Divergences {
			got = append(got, d.Operation+" "+d.Member)
		}
	}
	slices.Sort(got)
	want := []string{"GetIntegrationList /integrations/[]/integration_type", "getChartData /reportVersion",
		"getReports /results/[]/name", "getReports /results/[]/title"}
	if !slices.Equal(got, want) {
		t.Errorf("divergences %q, want %q", got, want)
	}
	text := c.run(t, doctorArgs...)
	if !strings.Contains(text.stderr, "in 4 places") {
		t.Errorf("stderr does not count the 4 divergences: %s", text.stderr)
	}
	for _, w := range []string{"/results/[]/title", "/reportVersion: the fake answers integer; the deployment answered string", "/integrations/[]/integration_type"} {
		if !strings.Contains(text.stdout, w) {
			t.Errorf("the text report does not say %q:\n%s", w, text.stdout)
		}
	}
}

func eachItem(v map[string]any, name string, f func(map[string]any)) {
	list, _ := v[name].([]any)
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			f(m)
		}
	}
}

// TestDoctorExitStatus: refused credentials exit 4, a deployment that
// cannot be reached 1, missing settings 2.
func TestDoctorExitStatus(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData())
	defer srv.Close()
	c := newCLI(srv)
	c.env["PARTNER_CLIENT_SECRET"] = "not-the-secret"
	if res := c.run(t, "doctor"); res.code != exitAuth || !strings.Contains(res.stderr, "refused the credentials") {
		t.Errorf("wrong secret: exit %d, stderr %q", res.code, res.stderr)
	}
	// A server that drops every connection: nothing can be read.
	dropping := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	}))
	defer dropping.Close()
	c = newCLI(srv)
	c.env["PARTNER_BASE_URL"] = dropping.URL
	if res := c.run(t, "doctor"); res.code != exitFail {
		t.Errorf("unreachable: exit %d, stderr %q", res.code, res.stderr)
	}
	c.env["PARTNER_BASE_URL"] = ""
	if res := c.run(t, "doctor"); res.code != exitUsage {
		t.Errorf("no base URL: exit %d, stderr %q", res.code, res.stderr)
	}
	// A read asked for by half is refused before anything is sent, not
	// quietly skipped.
	c = newCLI(srv)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--user", demo.UserEmail1}, "--user and --attribute go together"},
		{[]string{"--attribute", "region"}, "--user and --attribute go together"},
		{[]string{"--execution", "exe_1"}, "--execution needs --integration"},
		{[]string{"--max-pages", "0"}, "--max-pages 0: at least 1"},
	} {
		srv.ResetRequests()
		res := c.run(t, append([]string{"doctor"}, tc.args...)...)
		if res.code != exitUsage || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, res.code, res.stderr, exitUsage, tc.want)
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("%q: %d requests sent", tc.args, n)
		}
	}
}
