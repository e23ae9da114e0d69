package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/fake"
)

// noWaits returns fake options under which the walk-through waits for
// nothing on the real clock: report views are ready at once, and a manual
// clock moves on by half of fake.DefaultBulkDelay after every bulk status
// read (an execution shows running at its first two reads and is done at
// the third).
func noWaits() []fake.Option {
	clock := fake.NewManualClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	return []fake.Option{fake.WithViewDelay(0), fake.WithClock(clock), fake.WithMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r)
			if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/bulk/v1/status/") {
				clock.Advance(fake.DefaultBulkDelay / 2)
			}
		})
	})}
}

// TestUsage: -h prints the usage and every setting, and is not an error
// of the command line (main exits 0 on flag.ErrHelp, without running);
// an argument is refused.
func TestUsage(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	if err := parseFlags([]string{"-h"}, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("parseFlags(-h) = %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"Usage: quickstart", "PARTNER_BASE_URL", "PARTNER_CLIENT_ID", "PARTNER_CLIENT_SECRET",
		"PARTNER_ENV\n", "PARTNER_ENV_HEADER", "PARTNER_PORTAL_WORD", "PARTNER_SUBSCRIPTION_KEY", "Exit status"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, stderr.String())
		}
	}
	stderr.Reset()
	if err := parseFlags([]string{"now"}, &stderr); err == nil || !strings.Contains(stderr.String(), `unexpected argument "now"`) {
		t.Errorf("an argument: %v, stderr %q", err, stderr.String())
	}
}

// TestQuickstart runs the whole walk-through against the embedded fake,
// without waits (noWaits).
func TestQuickstart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out, func(string) string { return "" }, noWaits()...); err != nil {
		t.Fatalf("quickstart failed: %v\noutput:\n%s", err, out.String())
	}
	for _, want := range []string{"auth: got a Bearer token", "auth: invalidated the access token",
		"scim: provisioned user quickstart-", "scim: suspended quickstart-", "scim: listed 1 user(s) with filter userName eq", "users: ada.lovelace@example.com holds role [partner_admin]",
		"bulk: execution completed, 4 records received", "bulk: 4 received, 3 loaded, 1 failed, 0 skipped", `bulk: error in record "" (intended): Missing value of key field`,
		"one row has no key on purpose",
		"reports: exported report 102 through a view as CSV, 25 rows", "reports:   Partner ID,Partner,Region,Tier,Active", "reports: chart \"Partners by region\"",
		"events: received an update of \"Acme renewal\": partner_portal.integration_status = SCHEDULED", "events: unsubscribed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// One line per state of the execution, however many polls (two
	// here show it running).
	if n := strings.Count(out.String(), "bulk: execution running"); n != 1 {
		t.Errorf("%d lines for the running execution, want 1:\n%s", n, out.String())
	}
	const last = "quickstart: every step passed (auth, scim, users, objects, bulk, reports, events)\n"
	if !strings.HasSuffix(out.String(), last) {
		t.Errorf("output does not end with %q:\n%s", last, out.String())
	}
}

// TestQuickstartOnServer runs the walk-through against a server named by
// PARTNER_BASE_URL: a fake server with the demo data, without waits
// (noWaits).
func TestQuickstartOnServer(t *testing.T) {
	t.Parallel()
	srv := fake.NewServer(append(noWaits(), fake.WithDemoData())...)
	defer srv.Close()
	env := map[string]string{"PARTNER_BASE_URL": srv.URL,
		"PARTNER_CLIENT_ID": fake.DefaultClientID, "PARTNER_CLIENT_SECRET": fake.DefaultClientSecret,
		"PARTNER_PORTAL_WORD": srv.Connection().Words.PortalWord}
	var out bytes.Buffer
	if err := run(t.Context(), &out, func(k string) string { return env[k] }); err != nil {
		t.Fatalf("quickstart failed: %v\noutput:\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "embedded fake") || !strings.HasSuffix(out.String(), "every step passed (auth, scim, users, objects, bulk, reports, events)\n") {
		t.Errorf("output:\n%s", out.String())
	}
}

// TestQuickstartEnvProblems: an incomplete or wrong server configuration
// is reported in terms of the PARTNER_* variables, never Go options, and
// nothing runs.
func TestQuickstartEnvProblems(t *testing.T) {
	t.Parallel()
	cases := []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{"PARTNER_BASE_URL": "https://api.example.com"},
			[]string{"PARTNER_CLIENT_ID is not set (nor is PARTNER_CLIENT_SECRET), but PARTNER_BASE_URL is", "or none"}},
		{map[string]string{"PARTNER_CLIENT_ID": "id", "PARTNER_CLIENT_SECRET": "s3cr3t"},
			[]string{"PARTNER_BASE_URL is not set, but PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET are"}},
		{map[string]string{"PARTNER_BASE_URL": "http://api.example.com", "PARTNER_CLIENT_ID": "id", "PARTNER_CLIENT_SECRET": "s3cr3t"},
			[]string{`PARTNER_BASE_URL "http://api.example.com" must be an https URL`}},
		{map[string]string{"PARTNER_BASE_URL": "http://api.localhost:8080", "PARTNER_CLIENT_ID": "id", "PARTNER_CLIENT_SECRET": "s3cr3t"},
			[]string{`PARTNER_BASE_URL "http://api.localhost:8080" must be an https URL`}},
		{map[string]string{"PARTNER_BASE_URL": "api.example.com", "PARTNER_CLIENT_ID": "id", "PARTNER_CLIENT_SECRET": "s3cr3t"},
			[]string{`PARTNER_BASE_URL "api.example.com" is not an absolute http(s) URL`}},
		{map[string]string{"PARTNER_BASE_URL": "https://u:p@api.example.com", "PARTNER_CLIENT_ID": "id", "PARTNER_CLIENT_SECRET": "s3cr3t"},
			[]string{"PARTNER_BASE_URL must not carry credentials"}},
		// A deployment's words, against the embedded fake or a server.
		{map[string]string{"PARTNER_ENV_HEADER": "x env"},
			[]string{`PARTNER_ENV_HEADER "x env" is not a header name`}},
		{map[string]string{"PARTNER_ENV_HEADER": "x-env:", "PARTNER_BASE_URL": "https://api.example.com", "PARTNER_CLIENT_ID": "id", "PARTNER_CLIENT_SECRET": "s3cr3t"},
			[]string{`PARTNER_ENV_HEADER "x-env:" is not a header name`}},
		{map[string]string{"PARTNER_ENV_HEADER": "authorization"},
			[]string{"PARTNER_ENV_HEADER must not name Authorization"}},
		{map[string]string{"PARTNER_ENV": "sbx\r\nX-Evil: 1"},
			[]string{`PARTNER_ENV "sbx\r\nX-Evil: 1" is not a host name`}},
		{map[string]string{"PARTNER_ENV": "https://sandbox.example.com"},
			[]string{`PARTNER_ENV "https://sandbox.example.com" is not a host name`}},
		{map[string]string{"PARTNER_ENV": "sandbox.example.com", "PARTNER_BASE_URL": "https://api.example.com", "PARTNER_CLIENT_ID": "id", "PARTNER_CLIENT_SECRET": "s3cr3t"},
			[]string{"PARTNER_ENV_HEADER is not set, but PARTNER_ENV is"}},
		// Toward this machine too: a server on a loopback address may be a
		// proxy to a deployment.
		{map[string]string{"PARTNER_ENV": "sandbox.example.com", "PARTNER_BASE_URL": "http://LOCALHOST:8080", "PARTNER_CLIENT_ID": "id", "PARTNER_CLIENT_SECRET": "s3cr3t"},
			[]string{"PARTNER_ENV_HEADER is not set, but PARTNER_ENV is"}},
		{map[string]string{"PARTNER_SUBSCRIPTION_KEY": "s3cr3t\nX-Evil: 1"},
			[]string{"PARTNER_SUBSCRIPTION_KEY contains a line break"}},
		// No stand-in audit field toward a deployment: its portal word.
		{map[string]string{"PARTNER_BASE_URL": "https://api.example.com", "PARTNER_CLIENT_ID": "id", "PARTNER_CLIENT_SECRET": "s3cr3t"},
			[]string{"PARTNER_PORTAL_WORD is not set"}},
	}
	for _, tc := range cases {
		var out bytes.Buffer
		err := run(context.Background(), &out, func(k string) string { return tc.env[k] })
		if err == nil {
			t.Errorf("%v: ran", tc.env)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v\nwant it to say %q", tc.env, err, w)
			}
		}
		if strings.Contains(err.Error(), "With") || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%v: %v names a Go option or the secret", tc.env, err)
		}
		if out.Len() != 0 {
			t.Errorf("%v: printed %q", tc.env, out.String())
		}
	}
}

// TestQuickstartDeploymentWords: a deployment's words and gateway key
// reach the client, and the embedded fake takes the same ones.
func TestQuickstartDeploymentWords(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env := map[string]string{"PARTNER_PORTAL_WORD": "acme_portal", "PARTNER_ENV_HEADER": "x-acme-env",
		"PARTNER_ENV": "sbx", "PARTNER_SUBSCRIPTION_KEY": "quickstart-key-1"}
	var out bytes.Buffer
	if err := run(ctx, &out, func(k string) string { return env[k] }, noWaits()...); err != nil {
		t.Fatalf("quickstart failed: %v\noutput:\n%s", err, out.String())
	}
	for _, want := range []string{"objects: audit acme_portal.integration_status = LINKED",
		"events: received an update of \"Acme renewal\": acme_portal.integration_status = SCHEDULED"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "quickstart-key-1") {
		t.Errorf("the subscription key was printed:\n%s", out.String())
	}
}
