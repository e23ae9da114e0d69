package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/version"
)

// notData are the commands without --json: their output is not a
// document (reports export writes the report in its --format, events
// listen prints deliveries as they come, events delete says it deleted).
var notData = []string{"partnerctl reports export", "partnerctl events listen", "partnerctl events delete"}

// TestEveryDataCommandTakesJSON: every command that prints data has
// --json.
func TestEveryDataCommandTakesJSON(t *testing.T) {
	t.Parallel()
	a := &app{getenv: func(string) string { return "" }}
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			if sub.Name() != "help" && sub.Name() != "completion" {
				walk(sub)
			}
		}
		if cmd.HasSubCommands() || slices.Contains(notData, cmd.CommandPath()) {
			return
		}
		if cmd.Flags().Lookup("json") == nil {
			t.Errorf("%s has no --json", cmd.CommandPath())
		}
	}
	walk(a.rootCmd())
}

// TestJSONShapes runs the commands --json was added to and reads their
// output in the shape their help documents; messages go to stderr.
func TestJSONShapes(t *testing.T) {
	t.Parallel()
	srv, _ := reportServer(t)
	c := newCLI(srv)
	decode := func(r result, v any) {
		t.Helper()
		if r.code != exitOK && r.code != exitDataFailed {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
		if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
			t.Fatalf("stdout is not the JSON documented: %v\n%s", err, r.stdout)
		}
	}

	var charts []struct {
		ID      int64            `json:"id"`
		Name    string           `json:"name"`
		Results []map[string]any `json:"results"`
	}
	decode(c.run(t, "reports", "charts", "7", "--json"), &charts)
	if len(charts) != 1 || charts[0].Name != "By zone" || len(charts[0].Results) != 2 || charts[0].Results[0]["Zone"] != "APAC" {
		t.Errorf("charts --json: %+v", charts)
	}

	var kinds []struct{ Name, Description string }
	decode(c.run(t, "events", "kinds", "--json"), &kinds)
	if len(kinds) == 0 || kinds[0].Name == "" {
		t.Errorf("events kinds --json: %+v", kinds)
	}

	var user struct {
		ID       string `json:"id"`
		UserName string `json:"userName"`
		Active   *bool  `json:"active"`
	}
	decode(c.run(t, "users", "create", "--user-name", "json@example.com", "--json"), &user)
	if user.ID == "" || user.UserName != "json@example.com" {
		t.Fatalf("users create --json: %+v", user)
	}
	id := user.ID
	for _, tc := range []struct {
		verb   string
		active bool
	}{{"suspend", false}, {"reactivate", true}} {
		user.Active = nil
		decode(c.run(t, "users", tc.verb, "json@example.com", "--json"), &user)
		if user.ID != id || user.Active == nil || *user.Active != tc.active {
			t.Errorf("users %s --json: %+v", tc.verb, user)
		}
		if u, _ := srv.User(id); u.IsActive() != tc.active {
			t.Errorf("users %s: the fake's user is active=%v", tc.verb, u.IsActive())
		}
	}

	people := filepath.Join(t.TempDir(), "people.csv")
	writeFile(t, people, "userName,active\njson@example.com,false\n,true\n")
	var imp importJSON
	r := c.run(t, "users", "import", people, "--json")
	decode(r, &imp)
	if r.code != exitDataFailed || len(imp.Rows) != 2 || imp.Rows[0].Outcome != importUpdated || imp.Rows[0].ID != id ||
		imp.Rows[1].Outcome != importFailed || imp.Rows[1].Error == "" || imp.Failed != 1 || imp.Updated != 1 {
		t.Errorf("users import --json: exit %d, %+v", r.code, imp)
	}

	c = newCLI(bulkServer(t))
	in := filepath.Join(t.TempDir(), "accounts.csv")
	writeFile(t, in, accountsCSV)
	var ack ackJSON
	decode(c.run(t, "bulk", "load", in, "--integration", demo.AccountIntegration, "--json"), &ack)
	if ack.ExecutionID == "" || ack.IntegrationID != demo.AccountIntegration {
		t.Fatalf("bulk load --json: %+v", ack)
	}
	var ex executionJSON
	r = c.run(t, "bulk", "status", ack.ExecutionID, "--integration", demo.AccountIntegration, "--wait", "--json")
	decode(r, &ex)
	if ex.ExecutionID != ack.ExecutionID || ex.Status != "completed" || !ex.Done || ex.ErrorCount != 1 || len(ex.Errors) != 1 ||
		ex.Errors[0].Row["employees"] != "many" {
		t.Errorf("bulk status --json: %+v", ex)
	}
	if !strings.Contains(r.stderr, "execution "+ack.ExecutionID+": completed") {
		t.Errorf("bulk status --json: the states are not on stderr: %q", r.stderr)
	}
}

// TestExitCodes: each documented exit status, from a command that meets
// its case. 3 (outcome unknown) is TestBulkLoadUnderFaults's and
// TestCLIFaultsThroughAdminAPI's; 130 (interrupted) TestInterruptExits130's.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	srv := bulkServer(t)
	c := newCLI(srv)
	allFail := filepath.Join(t.TempDir(), "wrong-key.csv")
	writeFile(t, allFail, "id,name\n1,Initech\n")
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want int
	}{
		{"success", nil, []string{"reports", "list"}, exitOK},
		{"failure: no such user", nil, []string{"users", "suspend", "usr-nobody"}, exitFail},
		{"usage", nil, []string{"reports", "export", "abc"}, exitUsage},
		{"authentication", map[string]string{"PARTNER_CLIENT_SECRET": "wrong"}, []string{"reports", "list"}, exitAuth},
		{"the data says it failed", nil, []string{"bulk", "load", allFail, "--integration", demo.AccountIntegration, "--wait"}, exitDataFailed},
	} {
		cc := &cli{base: c.base, env: map[string]string{}}
		maps.Copy(cc.env, c.env)
		maps.Copy(cc.env, tc.env)
		if r := cc.run(t, tc.args...); r.code != tc.want {
			t.Errorf("%s: %q exits %d, want %d (stderr %q)", tc.name, tc.args, r.code, tc.want, r.stderr)
		}
	}
	// The codes are documented where an operator looks.
	r := (&cli{env: map[string]string{}}).must(t, "--help")
	for _, code := range []string{"  0 ", "  1 ", "  2 ", "  3 ", "  4 ", "  5 ", "  130 "} {
		if !strings.Contains(r.stdout, code) {
			t.Errorf("--help does not document exit status %q", strings.TrimSpace(code))
		}
	}
}

// TestVersion: --version and version print the module's version, the Go
// release and the platform; the User-Agent names partnerctl's version.
func TestVersion(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var agents []string
	srv := newFake(t, fake.WithDemoData(), fake.WithMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			agents = append(agents, r.UserAgent())
			mu.Unlock()
			next.ServeHTTP(w, r)
		})
	}))
	defer srv.Close()
	c := newCLI(srv)
	want := fmt.Sprintf("partnerctl %s (%s %s/%s)\n", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if want != version.Line("partnerctl")+"\n" {
		t.Errorf("partnerctl's version line %q is not version's %q, which partnerfake -version prints", want, version.Line("partnerctl"))
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		if r := c.must(t, args...); r.stdout != want {
			t.Errorf("%q: %q, want %q", args, r.stdout, want)
		}
	}
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+`).MatchString(buildVersion()) {
		t.Errorf("version %q is not a module version", buildVersion())
	}
	var v versionInfo
	if err := json.Unmarshal([]byte(c.must(t, "version", "--json").stdout), &v); err != nil || v != currentVersion() {
		t.Errorf("version --json: %+v, %v", v, err)
	}
	c.must(t, "reports", "list")
	mu.Lock()
	defer mu.Unlock()
	if len(agents) == 0 {
		t.Fatal("no request seen")
	}
	for _, ua := range agents {
		if !strings.Contains(ua, "partnerctl/"+buildVersion()) || !strings.HasPrefix(ua, "partner-go/") {
			t.Errorf("User-Agent %q does not name partnerctl/%s after the SDK", ua, buildVersion())
		}
	}
}

// TestDebugLogsRequests: PARTNER_DEBUG=1 (or --debug) writes one log
// line on stderr per request of users list, with its method, path,
// status, attempt and request id (the one the request carried), and no
// secret; without it, nothing.
func TestDebugLogsRequests(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	ids := map[string]string{} // request id: path
	srv := newFake(t, fake.WithDemoData(), fake.WithMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if id := r.Header.Get("X-Request-Id"); id != "" && strings.HasPrefix(r.URL.Path, "/api/scim/") {
				mu.Lock()
				ids[id] = r.URL.Path
				mu.Unlock()
			}
			next.ServeHTTP(w, r)
		})
	}))
	defer srv.Close()
	c := newCLI(srv)
	if r := c.must(t, "users", "list"); strings.Contains(r.stderr, "request_id") {
		t.Errorf("without PARTNER_DEBUG: stderr %q", r.stderr)
	}
	clear(ids)
	c.env["PARTNER_DEBUG"] = "1"
	r := c.must(t, "users", "list")
	var done []string
	for line := range strings.SplitSeq(strings.TrimSpace(r.stderr), "\n") {
		if strings.Contains(line, "request done") && strings.Contains(line, "path=/api/scim/") {
			done = append(done, line)
		}
	}
	mu.Lock()
	seen := maps.Clone(ids)
	mu.Unlock()
	if len(seen) == 0 || len(done) != len(seen) {
		t.Fatalf("%d SCIM requests, %d log lines of one:\n%s", len(seen), len(done), r.stderr)
	}
	for id := range seen {
		n := 0
		for _, line := range done {
			if strings.Contains(line, "request_id="+id) && strings.Contains(line, "method=GET") && strings.Contains(line, "status=200") &&
				strings.Contains(line, "attempt=1") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("request %s is on %d log lines", id, n)
		}
	}
	for _, secret := range []string{fake.DefaultClientSecret, "Bearer "} {
		if strings.Contains(r.stderr, secret) {
			t.Errorf("the log shows %q", secret)
		}
	}
	delete(c.env, "PARTNER_DEBUG")
	if r := c.must(t, "users", "list", "--debug"); !strings.Contains(r.stderr, "request done") {
		t.Errorf("--debug: stderr %q", r.stderr)
	}
}

// TestBulkExecutionFailedExitsFive: an execution that ends failed (a
// status_msg, a *bulk.ExecutionError) was followed to its end: the data
// says it failed, exit 5, and --json prints it.
func TestBulkExecutionFailedExitsFive(t *testing.T) {
	t.Parallel()
	srv := bulkServer(t, fake.WithMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.URL.Path, "/bulk/v1/status/") {
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{
				"integration_id": strings.TrimPrefix(r.URL.Path, "/bulk/v1/status/"), "execution_id": r.URL.Query().Get("execution_id"),
				"status": "completed", "status_msg": "the file could not be read", "input_count": 0, "success_count": 0,
				"error_count": 0, "skip_count": 0, "started_at": "2026-03-01T09:00:00Z", "completed_at": "2026-03-01T09:00:01Z",
				"include_errors": true,
			})
		})
	}))
	c := newCLI(srv)
	in := filepath.Join(t.TempDir(), "accounts.csv")
	writeFile(t, in, accountsCSV)
	r := c.run(t, "bulk", "load", in, "--integration", demo.AccountIntegration, "--wait", "--json")
	var ex executionJSON
	if r.code != exitDataFailed || !strings.Contains(r.stderr, "the file could not be read") ||
		json.Unmarshal([]byte(r.stdout), &ex) != nil || ex.StatusMessage != "the file could not be read" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 5 and the execution as JSON", r.code, r.stdout, r.stderr)
	}
}
