package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/version"
)

// TestServeAndShutdown starts the server on a free port, gets a token from
// it over HTTP and checks that cancelling the context shuts it down.
func TestServeAndShutdown(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-client-id", "cid", "-client-secret", "csecret"}, pw)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatal("no output")
	}
	line := sc.Text()
	url := line[strings.LastIndex(line, " ")+1:]
	var banner strings.Builder
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "try:") {
		banner.WriteString(sc.Text() + "\n")
	}
	// The quickstart refuses to run without the portal word: the line
	// that suggests it names the fake's.
	if try := sc.Text(); !strings.Contains(try, "PARTNER_PORTAL_WORD=partner_portal ") || !strings.Contains(try, "PARTNER_BASE_URL="+url+" ") {
		t.Errorf("the try line does not give the quickstart what it needs: %q", try)
	}
	if strings.Contains(banner.String(), "csecret") || !strings.Contains(banner.String(), "client id:     cid") {
		t.Errorf("banner shows a client secret given with -client-secret, or not the id:\n%s", banner.String())
	}
	// Each integration with what the service's listing does not show: the
	// object type and the key field of its bulk loads.
	if !regexp.MustCompile(demo.AccountIntegration+` +object type account +key field account_info\.external_account_id\n`).MatchString(banner.String()) ||
		!regexp.MustCompile(demo.OpportunityIntegration+` +object type opportunity +key field sales_details\.crm_opportunity_id\n`).MatchString(banner.String()) {
		t.Errorf("banner lacks the integrations' object types and key fields:\n%s", banner.String())
	}
	go io.Copy(io.Discard, pr)

	resp, err := http.Post(url+"/oauth/token", "application/json",
		strings.NewReader(`{"grant_type":"client_credentials","client_id":"cid","client_secret":"csecret"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("token request: status %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server did not shut down")
	}
}

// start runs partnerfake with args and returns its URL and a stop function
// that shuts it down and returns run's error.
func start(t *testing.T, args ...string) (string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), pw)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		cancel()
		t.Fatalf("no output: %v", <-done)
	}
	line := sc.Text()
	go io.Copy(io.Discard, pr)
	var once sync.Once
	var err error
	return line[strings.LastIndex(line, " ")+1:], func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// defaultToken gets an access token of the fake's default client.
func defaultToken(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Post(url+"/oauth/token", "application/json",
		strings.NewReader(`{"grant_type":"client_credentials","client_id":"partner-test-client","client_secret":"partner-test-secret"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	json.NewDecoder(resp.Body).Decode(&tok)
	return tok.AccessToken
}

// TestSeedEmptyManualClock starts the server empty with a seed file and
// a manual clock, and checks both through the admin API and the service.
func TestSeedEmptyManualClock(t *testing.T) {
	t.Parallel()
	seed := filepath.Join(t.TempDir(), "seed.json")
	os.WriteFile(seed, []byte(`{"users":[{"user_name":"ada@example.com"}],
		"reports":[{"id":7,"name":"Only","columns":[{"id":"0","name":"A"}],"rows":[["x"]]}]}`), 0o600)
	url, stop := start(t, "-demo=false", "-seed", seed, "-manual-clock", "-latency", "20ms")
	defer stop()

	req, _ := http.NewRequest("POST", url+"/report/v1/list", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+defaultToken(t, url))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"name":"Only"`) || strings.Contains(string(b), "Pipeline") {
		t.Fatalf("reports of an empty fake with a seed: %s", b)
	}
	_, clock := get(t, url+"/_fake/clock")
	if !strings.Contains(clock, `"manual":true`) {
		t.Fatalf("clock: %s", clock)
	}
	resp, err = http.Post(url+"/_fake/clock/advance", "application/json", strings.NewReader(`{"by":"1h"}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("advance: %v %v", err, resp.Status)
	}
	resp.Body.Close()
	// A reset keeps the seed but drops what happened since.
	resp, _ = http.Post(url+"/_fake/reset", "", nil)
	resp.Body.Close()
	if _, reqs := get(t, url+"/_fake/requests"); strings.TrimSpace(reqs) != "[]" {
		t.Fatalf("requests after reset: %s", reqs)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestViewDelayFlag: on the manual clock a view is PENDING after prepare;
// with -view-delay 0 it is SUCCESS at once.
func TestViewDelayFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "PENDING"},
		{[]string{"-view-delay", "0"}, "SUCCESS"},
	} {
		url, stop := start(t, append([]string{"-manual-clock"}, tc.args...)...)
		token := defaultToken(t, url)
		call := func(method, path string) string {
			req, _ := http.NewRequest(method, url+path, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%v: %s %s: %s %s", tc.args, method, path, resp.Status, b)
			}
			return string(b)
		}
		var v struct{ ViewID int64 }
		json.Unmarshal([]byte(call("POST", fmt.Sprintf("/report/v1/view/%d/prepare_export", demo.ReportPipeline))), &v)
		var st struct{ ViewStatus string }
		json.Unmarshal([]byte(call("GET", fmt.Sprintf("/report/v1/view/%d/status", v.ViewID))), &st)
		if st.ViewStatus != tc.want {
			t.Errorf("%v: view status %q right after prepare, want %q", tc.args, st.ViewStatus, tc.want)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBadSeed checks that a seed file with an inconsistent report is an
// error naming the file, not a panic.
func TestBadSeed(t *testing.T) {
	t.Parallel()
	seed := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(seed, []byte(`{"reports":[{"name":"R","columns":[{"id":"0"}],"rows":[[1,2]]}]}`), 0o600)
	err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-seed", seed}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "bad.json") || !strings.Contains(err.Error(), "row 0") {
		t.Fatalf("run with a bad seed: %v", err)
	}
}

// TestFullSCIMFilterFlag: by default the fake takes only userName eq
// filters, as the deployed service documents; -full-scim-filter takes the
// rest of RFC 7644.
func TestFullSCIMFilterFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, http.StatusBadRequest},
		{[]string{"-full-scim-filter"}, http.StatusOK},
	} {
		url, stop := start(t, tc.args...)
		req, _ := http.NewRequest("GET", url+"/api/scim/v2/Users?filter=active+eq+false", nil)
		req.Header.Set("Authorization", "Bearer "+defaultToken(t, url))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%v: active eq false answered %d, want %d", tc.args, resp.StatusCode, tc.want)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDeploymentFlags: the deployment's portal word and gateway key reach
// the served fake.
func TestDeploymentFlags(t *testing.T) {
	t.Parallel()
	url, stop := start(t, "-portal-word", "acme", "-subscription-key", "k-1")
	defer stop()
	call := func(method, path, key, bearer, body string) (int, string) {
		req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Ocp-Apim-Subscription-Key", key)
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const creds = `{"grant_type":"client_credentials","client_id":"partner-test-client","client_secret":"partner-test-secret"}`
	if st, _ := call("POST", "/oauth/token", "", "", creds); st != http.StatusUnauthorized {
		t.Fatalf("token without the key: %d", st)
	}
	st, body := call("POST", "/oauth/token", "k-1", "", creds)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if json.Unmarshal([]byte(body), &tok); st != http.StatusOK || tok.AccessToken == "" {
		t.Fatalf("token with the key: %d %s", st, body)
	}
	if st, body := call("GET", "/event/v1/metadata/event", "k-1", tok.AccessToken, ""); st != http.StatusOK || !strings.Contains(body, `"object.acme_referral_submit"`) {
		t.Fatalf("event kinds: %d %s", st, body)
	}
}

// TestLatency starts the server with a base latency far longer than a
// client waits: service requests time out, the admin API still answers.
func TestLatency(t *testing.T) {
	t.Parallel()
	url, stop := start(t, "-latency", "1h")
	defer stop()
	// An hour's latency never ends within the timeout; a fake that
	// ignored it would answer in a millisecond.
	client := &http.Client{Timeout: 50 * time.Millisecond}
	if resp, err := client.Get(url + "/event/v1/metadata/event"); err == nil {
		resp.Body.Close()
		t.Fatalf("a service request answered despite the latency: %s", resp.Status)
	}
	if st, body := get(t, url+"/_fake/health"); st != 200 {
		t.Fatalf("admin health: %d %s", st, body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestVersion: -version prints the line partnerctl --version prints, with
// partnerfake's name (the version from one source, internal/version), and
// starts nothing. A test binary's main module is not stamped with a
// version: the SDK's stands in.
func TestVersion(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	if err := run(context.Background(), []string{"-version", "-addr", "127.0.0.1:1"}, &out); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("partnerfake v%s (%s %s/%s)\n", version.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if out.String() != want || version.Line("partnerfake")+"\n" != want {
		t.Errorf("-version printed %q, version.Line %q, want %q", out.String(), version.Line("partnerfake"), want)
	}
}

// TestExitCodes: -h exits 0, a bad flag or argument 2, a bad seed 1.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	seed := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(seed, []byte(`{"usres":[]}`), 0o600)
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"-h"}, 0},
		{[]string{"-no-such-flag"}, 2},
		{[]string{"-latency", "soon"}, 2},
		{[]string{"extra"}, 2},
		{[]string{"-addr", "127.0.0.1:0", "-seed", seed}, 1},
	} {
		err := run(context.Background(), tc.args, io.Discard)
		if got := exitCode(err); got != tc.code {
			t.Errorf("partnerfake %q: %v, exit %d, want %d", tc.args, err, got, tc.code)
		}
	}
}

// TestLoopbackRefusesForeignHost: listening on a loopback address,
// partnerfake answers a request whose Host is another name (a page whose
// DNS name was rebound to 127.0.0.1) with 403 on every route, service and
// admin: no token, no data. -allow-host admits a name.
func TestLoopbackRefusesForeignHost(t *testing.T) {
	base, stop := start(t, "-allow-host", "fake.internal")
	defer stop()
	port := base[strings.LastIndex(base, ":")+1:]
	send := func(method, path, host, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for k := range resp.Header {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("%s %s, Host %s: CORS header %s", method, path, host, k)
			}
		}
		return resp.StatusCode, string(b)
	}
	tokenBody := `{"grant_type":"client_credentials","client_id":"partner-test-client","client_secret":"partner-test-secret"}`
	foreign := "rebind.attacker.example:" + port
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/oauth/token", tokenBody},
		{"GET", "/_fake/health", ""},
		{"GET", "/_fake/requests", ""},
	} {
		if status, body := send(r.method, r.path, foreign, r.body); status != http.StatusForbidden || strings.Contains(body, "access_token") || strings.Contains(body, "oauth") {
			t.Errorf("%s %s, Host %s: %d %.200s, want 403 and nothing else", r.method, r.path, foreign, status, body)
		}
	}
	if status, body := send("POST", "/oauth/token", "fake.internal:"+port, tokenBody); status != 200 || !strings.Contains(body, "access_token") {
		t.Errorf("token with an allowed Host: %d %s", status, body)
	}
	if status, body := send("GET", "/_fake/requests", "localhost:"+port, ""); status != 200 || !strings.Contains(body, "/oauth/token") {
		t.Errorf("request log with a loopback Host: %d %.200s", status, body)
	}
}
