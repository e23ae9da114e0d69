package main

import (
	"bytes"
	"context"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)

// result is what one run of the command printed and returned.
type result struct {
	code           int
	stdout, stderr string
}

// syncBuffer is a bytes.Buffer safe for a command writing while a test
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// cli runs the command line against the fake at base (no settings when
// base is ""), with stderr a terminal when tty is set.
type cli struct {
	base string
	tty  bool
	env  map[string]string
}

func newCLI(srv *fake.Server) *cli {
	return &cli{base: srv.URL, env: map[string]string{
		"PARTNER_BASE_URL":      srv.URL,
		"PARTNER_CLIENT_ID":     fake.DefaultClientID,
		"PARTNER_CLIENT_SECRET": fake.DefaultClientSecret,
	}}
}

func (c *cli) runCtx(ctx context.Context, t *testing.T, stdout, stderr io.Writer, args ...string) int {
	t.Helper()
	a := &app{stdin: strings.NewReader(""), stdout: stdout, stderr: stderr,
		getenv: func(k string) string { return c.env[k] }, isTerminal: func(io.Writer) bool { return c.tty },
		// Retries as the command makes them, after waits of milliseconds
		// rather than the default back-off (Retry-After still applies).
		clientOpts: []partner.Option{partner.WithRetryWait(time.Millisecond, 5*time.Millisecond)}}
	return a.execute(ctx, args)
}

func (c *cli) run(t *testing.T, args ...string) result {
	t.Helper()
	var out, errw syncBuffer
	code := c.runCtx(context.Background(), t, &out, &errw, args...)
	r := result{code: code, stdout: out.String(), stderr: errw.String()}
	for _, s := range []string{r.stdout, r.stderr} {
		if strings.Contains(s, fake.DefaultClientSecret) {
			t.Errorf("partner %s printed the client secret", strings.Join(args, " "))
		}
	}
	return r
}

// must runs the command and fails the test unless it exits 0.
func (c *cli) must(t *testing.T, args ...string) result {
	t.Helper()
	r := c.run(t, args...)
	if r.code != 0 {
		t.Fatalf("partner %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

func TestUsageErrorsExitTwo(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData())
	defer srv.Close()
	c := newCLI(srv)
	for _, args := range [][]string{
		{},
		{"nonsense"},
		{"reports"},
		{"reports", "export"},
		{"reports", "export", "abc"},
		{"reports", "export", "101", "--format", "pdf"},
		{"reports", "list", "--no-such-flag"},
		{"reports", "list", "extra"},
		{"bulk", "load", "x.csv"},
		{"users", "create"},
		{"users", "suspend"},
		{"events", "listen"},
		{"events", "listen", "--local", "--events", "object.update", "--forward", "not a url"},
	} {
		r := c.run(t, args...)
		if r.code != exitUsage {
			t.Errorf("partner %s: exit %d, want 2 (stderr %q)", strings.Join(args, " "), r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "--help") {
			t.Errorf("partner %s: stderr %q does not point at --help", strings.Join(args, " "), r.stderr)
		}
	}
	unset := &cli{env: map[string]string{}}
	if r := unset.run(t, "reports", "list"); r.code != exitUsage || !strings.Contains(r.stderr, "PARTNER_BASE_URL") {
		t.Errorf("without settings: exit %d, stderr %q", r.code, r.stderr)
	}
	// A flag stands in for its variable: the base URL given, the
	// credentials are what is missing.
	if r := unset.run(t, "reports", "list", "--base-url", "https://api.example.com", "--client-id", "me"); r.code != exitUsage ||
		!strings.Contains(r.stderr, "no client credentials: set --client-id and --client-secret") {
		t.Errorf("without a client secret: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestHelpEverywhere runs --help on every command: each exits 0, shows
// an example, and shows boolean flags without [=true|false].
func TestHelpEverywhere(t *testing.T) {
	t.Parallel()
	c := &cli{env: map[string]string{}}
	a := &app{getenv: func(string) string { return "" }}
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			walk(sub)
		}
		args := append(strings.Fields(strings.TrimPrefix(cmd.CommandPath(), "partnerctl")), "--help")
		r := c.run(t, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
			t.Errorf("partner %s: exit %d, stdout %q", strings.Join(args, " "), r.code, r.stdout)
		}
		// pflag v1.1.0 shows every boolean flag so (--json[=true|false]).
		if strings.Contains(r.stdout, "[=true|false]") {
			t.Errorf("partner %s: a boolean flag shows [=true|false]:\n%s", strings.Join(args, " "), r.stdout)
		}
		if cmd.Example == "" || !strings.Contains(r.stdout, "Examples:") {
			t.Errorf("%s has no example", cmd.CommandPath())
		}
	}
	walk(a.rootCmd())
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	c := &cli{env: map[string]string{}}
	r := c.run(t, "completion", "bash")
	if r.code != 0 || !strings.Contains(r.stdout, "bash completion") {
		t.Fatalf("completion bash: exit %d, %.100q", r.code, r.stdout)
	}
}

func TestFlagsOverrideVariables(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData())
	defer srv.Close()
	c := newCLI(srv)
	c.env["PARTNER_BASE_URL"] = "http://127.0.0.1:1" // nothing listens there
	c.env["PARTNER_ENV"] = "from-variable"
	c.env["PARTNER_ENV_HEADER"] = srv.Connection().Words.EnvHeader // named toward the fake too
	c.must(t, "reports", "list", "--base-url", srv.URL, "--env", "from-flag")
	reqs := srv.Requests()
	if last := reqs[len(reqs)-1]; last.Env != "from-flag" {
		t.Fatalf("env header %q, want from-flag", last.Env)
	}

	secret := t.TempDir() + "/secret"
	writeFile(t, secret, fake.DefaultClientSecret+"\n")
	c = &cli{env: map[string]string{}}
	c.must(t, "reports", "list", "--base-url", srv.URL, "--client-id", fake.DefaultClientID, "--client-secret-file", secret)
	if r := c.run(t, "reports", "list", "--client-secret", "x", "--client-secret-file", secret); r.code != exitUsage {
		t.Fatalf("both secrets: exit %d, want 2", r.code)
	}
	if r := c.run(t, "reports", "list", "--base-url", srv.URL, "--client-id", fake.DefaultClientID, "--client-secret", "wrong"); r.code != exitAuth {
		t.Fatalf("wrong secret: exit %d, want 1", r.code)
	}
}

// TestDeploymentWords points the CLI at a fake configured with a
// deployment's own words: another environment header and a gateway
// subscription key, given as flags or variables.
func TestDeploymentWords(t *testing.T) {
	t.Parallel()
	const key = "sk-cli-test-0123"
	srv := newFake(t, fake.WithDemoData(), fake.WithWords(deployment.Words{EnvHeader: "x-operator-env"}), fake.WithDeployment(fake.Deployment{SubscriptionKey: key}))
	defer srv.Close()
	c := newCLI(srv)
	if r := c.run(t, "reports", "list"); r.code != exitAuth {
		t.Fatalf("without the subscription key: exit %d, want 4", r.code)
	}
	r := c.must(t, "reports", "list", "--subscription-key", key, "--env-header", "x-operator-env", "--env", "prod")
	if strings.Contains(r.stdout+r.stderr, key) {
		t.Fatal("the subscription key was printed")
	}
	reqs := srv.Requests()
	if last := reqs[len(reqs)-1]; last.Env != "prod" || last.Status != 200 {
		t.Fatalf("last request: %+v", last)
	}
	c.env["PARTNER_SUBSCRIPTION_KEY"] = key
	c.env["PARTNER_ENV_HEADER"] = "x-operator-env"
	c.env["PARTNER_ENV"] = "staging"
	c.must(t, "users", "list")
	reqs = srv.Requests()
	if last := reqs[len(reqs)-1]; last.Env != "staging" {
		t.Fatalf("last request: %+v", last)
	}
}

// TestReadmeCommandLine parses every partner line of the README's "Command
// line" section with the real command tree (--help appended, so nothing
// runs): a renamed command or flag fails here.
func TestReadmeCommandLine(t *testing.T) {
	t.Parallel()
	md, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(md), "\n")
	start := slices.Index(lines, "## Command line")
	if start < 0 {
		t.Fatal(`README.md has no "## Command line" section`)
	}
	c := &cli{env: map[string]string{}}
	n := 0
	for i := start + 1; i < len(lines) && !strings.HasPrefix(lines[i], "## "); i++ {
		line, _, _ := strings.Cut(lines[i], "#")
		args := strings.Fields(line)
		if len(args) == 0 || args[0] != "partnerctl" {
			continue
		}
		n++
		if r := c.run(t, append(args[1:], "--help")...); r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
			t.Errorf("README.md:%d: %s: exit %d, stderr %q", i+1, strings.TrimSpace(line), r.code, r.stderr)
		}
	}
	if n == 0 {
		t.Fatal("no partner line in the README's Command line section")
	}
}

// TestSettingsErrorsNameTheFlagOrVariable: a bad setting is a usage error
// (partner.New's check) naming the flag or variable the operator wrote,
// never an SDK option, and never showing a secret.
func TestSettingsErrorsNameTheFlagOrVariable(t *testing.T) {
	t.Parallel()
	const key = "sk-never-shown-4711"
	empty := t.TempDir() + "/empty"
	writeFile(t, empty, "\n")
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--env-header", "bad header"}, nil, `--env-header "bad header" is not a header name`},
		{nil, map[string]string{"PARTNER_ENV_HEADER": "x:y"}, `PARTNER_ENV_HEADER "x:y" is not a header name`},
		{[]string{"--env-header", "authorization"}, nil, "--env-header must not name Authorization"},
		{[]string{"--subscription-key-header", "a b"}, nil, `--subscription-key-header "a b" is not a header name`},
		{nil, map[string]string{"PARTNER_SUBSCRIPTION_KEY_HEADER": "Authorization"}, "PARTNER_SUBSCRIPTION_KEY_HEADER must not name Authorization"},
		{[]string{"--subscription-key", key + "\n"}, nil, "--subscription-key contains a line break"},
		{[]string{"--env", "prod\r\nX: y"}, nil, `--env "prod\r\nX: y" is not a host name`},
		{[]string{"--env", "https://sandbox.example.com"}, nil, `--env "https://sandbox.example.com" is not a host name`},
		{[]string{"--env", "sandbox.example.com", "--base-url", "https://api.example.com"}, nil, "--env-header (or PARTNER_ENV_HEADER) is not set, but --env is"},
		{nil, map[string]string{"PARTNER_ENV": "sandbox.example.com", "PARTNER_BASE_URL": "https://api.example.com"}, "--env-header (or PARTNER_ENV_HEADER) is not set, but PARTNER_ENV is"},
		{[]string{"--base-url", "ftp://example.com"}, nil, `--base-url "ftp://example.com" is not an absolute http(s) URL`},
		{[]string{"--base-url", "api.example.com"}, nil, `--base-url "api.example.com" has no scheme: add http:// or https://`},
		{nil, map[string]string{"PARTNER_BASE_URL": "localhost:8080"}, `PARTNER_BASE_URL "localhost:8080" has no scheme: add http:// or https://`},
		{nil, map[string]string{"PARTNER_BASE_URL": "http://api.example.com"}, `PARTNER_BASE_URL "http://api.example.com" must be an https URL`},
		{[]string{"--base-url", "https://me:" + key + "@api.example.com"}, nil, "--base-url must not carry credentials"},
		{nil, map[string]string{"PARTNER_BASE_URL": "https://api.example.com/?subscription-key=" + key}, "PARTNER_BASE_URL must not have a query"},
		{[]string{"--client-secret-file", empty}, nil, "--client-secret-file: " + empty + " is empty"},
	} {
		c := &cli{env: map[string]string{"PARTNER_BASE_URL": "http://127.0.0.1:1", "PARTNER_CLIENT_ID": "id", "PARTNER_CLIENT_SECRET": "secret"}}
		maps.Copy(c.env, tc.env)
		r := c.run(t, append([]string{"reports", "list"}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q %v: exit %d, stderr %q; want 2 and %q", tc.args, tc.env, r.code, r.stderr, tc.want)
		}
		if strings.Contains(r.stderr, "With") || strings.Contains(r.stderr, key) || strings.Contains(r.stderr, "partnerctl: partnerctl:") {
			t.Errorf("%q %v: stderr %q names an SDK option, shows the key, or repeats partner:", tc.args, tc.env, r.stderr)
		}
	}
}

// TestInterruptExits130: a command that Ctrl-C (the cancelled context)
// stops exits 130, as shells report a command ended by SIGINT.
func TestInterruptExits130(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData())
	defer srv.Close()
	c := newCLI(srv)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errw syncBuffer
	if code := c.runCtx(ctx, t, &out, &errw, "reports", "list"); code != exitInterrupted || !strings.Contains(errw.String(), "partnerctl: interrupted") {
		t.Fatalf("exit %d, stderr %q", code, errw.String())
	}
}

// newFake starts a fake with opts whose every exchange is checked against
// the contract (mocktest.ContractCheck): a request of the command line
// that the contract does not publish, or an answer outside it, fails t.
func newFake(t testing.TB, opts ...fake.Option) *fake.Server {
	t.Helper()
	return fake.NewServer(append(opts, mocktest.ContractCheck(t))...)
}
