package partner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/jarcoal/httpmock"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/testkit/contract"
	"github.com/partnerapi/partner-go/oauth"
	"github.com/partnerapi/partner-go/objects"
)

// headerLog records one header of every request a mock transport sees.
type headerLog struct {
	mu    sync.Mutex
	seen  []string // "METHOD path name=value", then "?query" when query is set
	query bool
}

func (l *headerLog) wrap(names []string, r httpmock.Responder) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		l.mu.Lock()
		var line strings.Builder
		line.WriteString(req.Method + " " + req.URL.Path)
		for _, n := range names {
			line.WriteString(fmt.Sprintf(" %s=%s", n, req.Header.Get(n)))
		}
		if l.query {
			line.WriteString(" ?" + req.URL.RawQuery)
		}
		l.seen = append(l.seen, line.String())
		l.mu.Unlock()
		return r(req)
	}
}

// TestEnvironmentHeaderName: WithEnvironmentHeader renames the header on
// every request, the token calls (get, refresh, revoke) included, and the
// interface's stand-in name is not sent. The token calls carry the
// environment also as a query parameter of the header's name, as the
// deployed service's connector sends it; other calls do not.
func TestEnvironmentHeaderName(t *testing.T) {
	c, mt := mockClient(t, WithEnvironment("sandbox-3.example.com"), WithEnvironmentHeader("x-acme-env"))
	var te tokenEndpoint
	log := headerLog{query: true}
	names := []string{"x-acme-env", "x-svc-env"}
	mt.RegisterResponder("POST", base+"/oauth/token", log.wrap(names, te.responder))
	mt.RegisterResponder("DELETE", base+"/oauth/token", log.wrap(names, httpmock.NewStringResponder(200, "")))
	mt.RegisterResponder("GET", base+"/event/v1/subscriber", log.wrap(names, httpmock.NewStringResponder(200, `{"items":[]}`)))

	ctx := context.Background()
	for _, err := range c.Events.Subscribers(ctx) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.OAuth.Request(ctx, oauth.TokenParams{GrantType: oauth.GrantRefreshToken, RefreshToken: "refresh-tok-1"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"POST /oauth/token x-acme-env=sandbox-3.example.com x-svc-env= ?x-acme-env=sandbox-3.example.com",
		"GET /event/v1/subscriber x-acme-env=sandbox-3.example.com x-svc-env= ?",
		"POST /oauth/token x-acme-env=sandbox-3.example.com x-svc-env= ?x-acme-env=sandbox-3.example.com",
		"DELETE /oauth/token x-acme-env=sandbox-3.example.com x-svc-env= ?x-acme-env=sandbox-3.example.com",
	}
	if got := strings.Join(log.seen, "\n"); got != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// TestEnvironmentNeedsHeaderName: New refuses an environment without a
// header name, saying what to set, toward any host: a deployment ignores
// the stand-in header and would write to production, and a test against
// the fake (or a client behind a sidecar proxy on 127.0.0.1) takes the path
// production takes. An environment that is not a host name is refused too.
// The header's name comes from WithEnvironmentHeader, WithWords or
// WithConnection.
func TestEnvironmentNeedsHeaderName(t *testing.T) {
	creds := WithClientCredentials("id", "secret")
	for _, b := range []string{"https://api.example.com", "http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080"} {
		_, err := New(WithBaseURL(b), creds, WithEnvironment("sandbox.example.com"))
		host := strings.TrimPrefix(strings.TrimPrefix(b, "https://"), "http://")
		host = strings.Trim(strings.TrimSuffix(host, ":8080"), "[]")
		if err == nil || !strings.HasPrefix(err.Error(), "partner: ") || !strings.Contains(err.Error(), "WithEnvironmentHeader") ||
			!strings.Contains(err.Error(), host) || !strings.Contains(err.Error(), "production") {
			t.Errorf("environment without a header name toward %s: %v", b, err)
		}
	}
	for _, env := range []string{"https://sandbox.example.com", "sandbox.example.com/x", "sand box", "a\nb"} {
		_, err := New(WithBaseURL("https://api.example.com"), creds, WithEnvironment(env), WithEnvironmentHeader("x-acme-env"))
		if err == nil || !strings.Contains(err.Error(), "not a host name") {
			t.Errorf("environment %q: %v", env, err)
		}
	}
	for _, opts := range [][]Option{
		{WithBaseURL("https://api.example.com"), WithEnvironment("sandbox.example.com"), WithEnvironmentHeader("x-acme-env")},
		{WithBaseURL("https://api.example.com"), WithEnvironment("sandbox.example.com"), WithEnvironmentHeader("x-svc-env")},
		{WithBaseURL("https://api.example.com"), WithEnvironment("sandbox.example.com"), WithWords(deployment.Words{EnvHeader: "x-acme-env"})},
		{WithBaseURL("https://api.example.com")},
		{WithBaseURL("http://127.0.0.1:8080"), WithEnvironment("sandbox.example.com"), WithEnvironmentHeader("x-svc-env")},
		{WithConnection(deployment.Connection{BaseURL: "http://localhost:8080", ClientID: "id", ClientSecret: "s", Words: deployment.Words{EnvHeader: "x-svc-env"}}), WithEnvironment("sandbox")},
	} {
		if _, err := New(append(opts, creds)...); err != nil {
			t.Errorf("New: %v", err)
		}
	}
	_, err := New(WithBaseURL("https://api.example.com"), creds, WithWords(deployment.Words{PortalWord: "acme.portal"}))
	if err == nil || !strings.Contains(err.Error(), "portal word") {
		t.Errorf("a portal word with a dot: %v", err)
	}
}

// TestConnectionFromEnv: a Connection read from the PARTNER_* variables
// (deployment.FromEnv) makes a client through WithConnection alone: its
// URL, credentials, key, words and environment all travel.
func TestConnectionFromEnv(t *testing.T) {
	srv := fake.NewServer(fake.WithWords(deployment.Words{EnvHeader: "x-acme-env"}), fake.WithDeployment(fake.Deployment{SubscriptionKey: "gw-key"}))
	defer srv.Close()
	fc := srv.Connection()
	vars := map[string]string{
		"PARTNER_BASE_URL": fc.BaseURL, "PARTNER_CLIENT_ID": fc.ClientID, "PARTNER_CLIENT_SECRET": fc.ClientSecret,
		"PARTNER_SUBSCRIPTION_KEY": "gw-key", "PARTNER_ENV_HEADER": "x-acme-env", "PARTNER_ENV": "sandbox-7.example.com",
	}
	conn, err := deployment.FromEnv(func(name string) string { return vars[name] })
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(WithConnection(conn))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, err := range c.Events.Subscribers(ctx) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the fake")
	}
	for _, r := range reqs {
		if r.Env != "sandbox-7.example.com" {
			t.Errorf("%s %s: environment %q, want sandbox-7.example.com", r.Method, r.Path, r.Env)
		}
	}
}

// TestFromEnvPlainHTTPAsNew: deployment.FromEnv, which applies the same
// rule (internal/check), refuses a plain-http PARTNER_BASE_URL exactly where New refuses
// the base URL without WithInsecureHTTP, so that a program that passes
// FromEnv's check is not refused by New in terms of Go options.
func TestFromEnvPlainHTTPAsNew(t *testing.T) {
	for _, b := range []string{"http://127.0.0.1", "http://127.8.9.10:80", "http://localhost:8080", "http://LOCALHOST",
		"http://[::1]:8080", "http://[::ffff:127.0.0.1]", "http://localhost.:8080", "http://app.localhost",
		"http://0.0.0.0", "http://10.0.0.1", "http://api.example.com", "https://api.example.com"} {
		vars := map[string]string{"PARTNER_BASE_URL": b, "PARTNER_CLIENT_ID": "id", "PARTNER_CLIENT_SECRET": "s"}
		conn, envErr := deployment.FromEnv(func(name string) string { return vars[name] })
		_, newErr := New(WithBaseURL(b), WithClientCredentials("id", "s"))
		if (envErr == nil) != (newErr == nil) {
			t.Errorf("%s: FromEnv says %v, New says %v", b, envErr, newErr)
		}
		if envErr == nil {
			if _, err := New(WithConnection(conn)); err != nil {
				t.Errorf("%s: New(WithConnection(FromEnv)): %v", b, err)
			}
		}
	}
}

// TestSubscriptionKey: the gateway key goes in Ocp-Apim-Subscription-Key
// (or the header named) on every request to the service, token calls
// included, never to a signed upload URL on another host, and never into
// a log or an error.
func TestSubscriptionKey(t *testing.T) {
	const key = "sub-key-7f3a9c"
	for _, tc := range []struct {
		name   string
		opts   []Option
		header string
	}{
		{"default header", []Option{WithSubscriptionKey(key)}, "Ocp-Apim-Subscription-Key"},
		{"named header", []Option{WithSubscriptionKey(key), WithSubscriptionKeyHeader("X-Gateway-Key")}, "X-Gateway-Key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logBuf bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			c, mt := mockClient(t, append(tc.opts, WithLogger(logger), WithMaxRetries(1))...)
			var te tokenEndpoint
			var log headerLog
			names := []string{tc.header}
			mt.RegisterResponder("POST", base+"/oauth/token", log.wrap(names, te.responder))
			mt.RegisterResponder("DELETE", base+"/oauth/token", log.wrap(names, httpmock.NewStringResponder(200, "")))
			mt.RegisterResponder("GET", base+"/event/v1/subscriber", log.wrap(names, httpmock.NewStringResponder(500, `{"message":"boom"}`)))
			mt.RegisterResponder("POST", "https://storage.example.test/upload", log.wrap(names, httpmock.NewStringResponder(200, "")))

			ctx := context.Background()
			var errs []error
			for _, err := range c.Events.Subscribers(ctx) {
				errs = append(errs, err)
			}
			if _, err := c.OAuth.Request(ctx, oauth.TokenParams{GrantType: oauth.GrantRefreshToken, RefreshToken: "refresh-tok-1"}); err != nil {
				t.Fatal(err)
			}
			if err := c.t.Do(ctx, &core.Request{Method: "POST", URL: "https://storage.example.test/upload", Body: strings.NewReader("x")}, nil); err != nil {
				t.Fatal(err)
			}
			if err := c.Close(ctx); err != nil {
				t.Fatal(err)
			}
			want := []string{
				"POST /oauth/token " + tc.header + "=" + key,
				"GET /event/v1/subscriber " + tc.header + "=" + key,
				"GET /event/v1/subscriber " + tc.header + "=" + key,
				"POST /oauth/token " + tc.header + "=" + key,
				"POST /upload " + tc.header + "=",
				"DELETE /oauth/token " + tc.header + "=" + key,
			}
			if got := strings.Join(log.seen, "\n"); got != strings.Join(want, "\n") {
				t.Fatalf("requests:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
			}
			if len(errs) != 1 || errs[0] == nil {
				t.Fatalf("errors %v, want the 500", errs)
			}
			all := fmt.Sprintf("%s\n%v\n%+v\n%#v", logBuf.String(), errs[0], errs[0], errs[0])
			if !strings.Contains(logBuf.String(), "retrying") {
				t.Fatalf("debug log is empty, the test proves nothing:\n%s", logBuf.String())
			}
			if strings.Contains(all, key) {
				t.Fatalf("subscription key leaked:\n%s", all)
			}
		})
	}
}

func TestDeploymentOptionValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  Option
		want string
	}{
		{"env header with space", WithEnvironmentHeader("x env"), "not a valid header name"},
		{"env header Authorization", WithEnvironmentHeader("authorization"), "cannot name Authorization"},
		{"key header with colon", WithSubscriptionKeyHeader("k:"), "not a valid header name"},
		{"key with newline", WithSubscriptionKey("k\r\nX-Evil: 1"), "line break"},
	} {
		_, err := New(WithBaseURL(base), WithClientCredentials("id", "s"), tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "X-Evil") {
			t.Errorf("%s: the key is in the error: %v", tc.name, err)
		}
	}
}

// TestDeploymentWordsOnFake runs a client configured with a deployment's
// own words and gateway key against a fake configured the same way.
func TestDeploymentWordsOnFake(t *testing.T) {
	const key = "gw-key-5d1e0b"
	srv := fake.NewServer(fake.WithDemoData(), fake.WithWords(deployment.Words{EnvHeader: "x-acme-env", PortalWord: "acme_portal"}), fake.WithDeployment(fake.Deployment{SubscriptionKey: key}), fake.WithMiddleware(contract.Check(t)))
	defer srv.Close()
	newClient := func(opts ...Option) *Client {
		c, err := New(append([]Option{WithBaseURL(srv.URL),
			WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret),
			WithEnvironment("sandbox-eu"), WithEnvironmentHeader("x-acme-env")}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx := context.Background()

	// Without the key the gateway refuses, the token request first.
	_, err := newClient().Objects.ExternalIDs(ctx, demo.Opportunity1)
	if !IsUnauthorized(err) || !strings.Contains(err.Error(), "subscription key") {
		t.Fatalf("without the key: %v", err)
	}
	_, err = newClient(WithSubscriptionKey("wrong-key")).Objects.ExternalIDs(ctx, demo.Opportunity1)
	if !IsUnauthorized(err) || !strings.Contains(err.Error(), "invalid subscription key") {
		t.Fatalf("with a wrong key: %v", err)
	}

	c := newClient(WithSubscriptionKey(key))
	res, err := c.Objects.Audit(ctx, demo.Opportunity1, objects.AuditParams{
		FieldName: "acme_portal.integration_status", StatusCode: objects.StatusLinked, Message: "linked",
	})
	if err != nil || res.FieldName != "acme_portal.integration_status" || res.StatusCode != objects.StatusLinked {
		t.Fatalf("audit with the deployment's field: %+v, %v", res, err)
	}
	// The fake refuses what the deployment refuses: the stand-in word.
	_, err = c.Objects.Audit(ctx, demo.Opportunity1, objects.AuditParams{FieldName: objects.FieldIntegrationStatus, StatusCode: objects.StatusLinked, Message: "m"})
	if !IsBadRequest(err) || !strings.Contains(err.Error(), "acme_portal.integration_status") {
		t.Fatalf("audit with the interface's word on a renamed fake: %v", err)
	}
	// Without a field name and without words the client refuses, toward
	// the fake as toward a deployment; with the fake's words (its
	// Connection, key included) it writes the deployment's field.
	_, err = c.Objects.Audit(ctx, demo.Opportunity1, objects.AuditParams{StatusCode: objects.StatusLinked, Message: "m"})
	if err == nil || !strings.Contains(err.Error(), "AuditParams.FieldName") {
		t.Fatalf("audit without a field name or words: %v", err)
	}
	cc, err := New(WithConnection(srv.Connection()), WithEnvironment("sandbox-eu"))
	if err != nil {
		t.Fatal(err)
	}
	res, err = cc.Objects.Audit(ctx, demo.Opportunity1, objects.AuditParams{StatusCode: objects.StatusLinked, Message: "m"})
	if err != nil || res.FieldName != "acme_portal.integration_status" {
		t.Fatalf("audit with the fake's words: %+v, %v", res, err)
	}
	if err := cc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Objects.ConnectExternalID(ctx, demo.Opportunity1, objects.ConnectExternalIDParams{FieldName: "acme_portal.referral_id", ExternalID: "REF-9"}); err != nil {
		t.Fatal(err)
	}
	ids, err := c.Objects.ExternalIDs(ctx, demo.Opportunity1)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := ids.Get("acme_portal.referral_id"); !ok || v != "REF-9" {
		t.Fatalf("external ids %+v", ids)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}

	reqs := srv.Requests()
	dump := fmt.Sprintf("%+v", reqs)
	if strings.Contains(dump, key) || strings.Contains(dump, "wrong-key") {
		t.Fatalf("the fake's request log holds the key: %s", dump)
	}
	envs := 0
	for _, r := range reqs {
		if r.Env == "sandbox-eu" {
			envs++
		}
	}
	if envs != len(reqs) {
		t.Fatalf("%d of %d requests logged the environment: %s", envs, len(reqs), dump)
	}
}

// TestDeploymentHeadersStayOnTheServiceHost: a redirect to another host
// carries neither the subscription key nor the renamed environment header;
// one on the service's host keeps both.
func TestDeploymentHeadersStayOnTheServiceHost(t *testing.T) {
	c, mt := mockClient(t, WithSubscriptionKey("sk-redirect"), WithEnvironment("sbx"), WithEnvironmentHeader("x-acme-env"))
	var te tokenEndpoint
	mt.RegisterResponder("POST", base+"/oauth/token", te.responder)
	redirect := func(to string) httpmock.Responder {
		return func(*http.Request) (*http.Response, error) {
			r := httpmock.NewStringResponse(307, "")
			r.Header.Set("Location", to)
			return r, nil
		}
	}
	var log headerLog
	names := []string{"Ocp-Apim-Subscription-Key", "x-acme-env"}
	mt.RegisterResponder("GET", base+"/away", redirect("https://files.example.test/x"))
	mt.RegisterResponder("GET", "https://files.example.test/x", log.wrap(names, httpmock.NewStringResponder(200, "{}")))
	mt.RegisterResponder("GET", base+"/near", redirect(base+"/y"))
	mt.RegisterResponder("GET", base+"/y", log.wrap(names, httpmock.NewStringResponder(200, "{}")))
	for _, p := range []string{"/away", "/near"} {
		if err := c.t.Do(context.Background(), &core.Request{Method: "GET", Path: p}, nil); err != nil {
			t.Fatal(err)
		}
	}
	want := "GET /x Ocp-Apim-Subscription-Key= x-acme-env=\nGET /y Ocp-Apim-Subscription-Key=sk-redirect x-acme-env=sbx"
	if got := strings.Join(log.seen, "\n"); got != want {
		t.Fatalf("after redirects:\n%s\nwant:\n%s", got, want)
	}
}

// recordingTransport records every request it carries as one line
// (method, path, query, the deployment's headers, the body), then hands it
// to next.
type recordingTransport struct {
	mu    sync.Mutex
	lines []string
	words deployment.Words
	next  http.RoundTripper
}

func (rt *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body.Close()
		body = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	auth := req.Header.Get("Authorization")
	if strings.HasPrefix(auth, "Bearer ") {
		auth = "Bearer <token>" // tokens differ between servers
	}
	line := fmt.Sprintf("%s %s?%s %s=%q %s=%q %s=%q content-type=%q authorization=%q body=%s",
		req.Method, req.URL.Path, req.URL.RawQuery,
		rt.words.EnvHeader, req.Header.Get(rt.words.EnvHeader), core.EnvHeader, req.Header.Get(core.EnvHeader),
		core.SubscriptionKeyHeader, req.Header.Get(core.SubscriptionKeyHeader),
		req.Header.Get("Content-Type"), auth, body)
	rt.mu.Lock()
	rt.lines = append(rt.lines, line)
	rt.mu.Unlock()
	return rt.next.RoundTrip(req)
}

// deploymentShaped answers as a deployment whose words are acme's does,
// with the published answers' shapes; it is reached through a
// transport, at a host that is not a loopback address.
func deploymentShaped(t *testing.T) http.RoundTripper {
	mt := httpmock.NewMockTransport()
	const host = "https://api.acme.example"
	mt.RegisterResponder("POST", host+"/oauth/token", httpmock.NewStringResponder(200,
		`{"access_token":"acme-tok","token_type":"Bearer","expires_in":3600,"refresh_token":"acme-refresh"}`))
	mt.RegisterResponder("DELETE", host+"/oauth/token", httpmock.NewStringResponder(200, ""))
	mt.RegisterResponder("PATCH", host+"/app/v1/object/"+demo.Opportunity1+"/audit", httpmock.NewStringResponder(200,
		`{"object_id":"`+demo.Opportunity1+`","field_name":"acme_portal.integration_status","status_code":"LINKED"}`))
	mt.RegisterResponder("PATCH", host+"/app/v1/object/"+demo.Opportunity1+"/external_id", httpmock.NewStringResponder(200,
		`{"object_id":"`+demo.Opportunity1+`","external_id":"REF-9","field_name":"acme_portal.referral_id"}`))
	mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		t.Errorf("the deployment has no answer to %s %s", req.Method, req.URL)
		return httpmock.NewStringResponse(404, `{"message":"no such route"}`), nil
	})
	return mt
}

// TestSameRequestsToFakeAndDeployment runs one client configuration (a
// deployment's words, environment and gateway key, from the fake's
// Connection) against the fake, on a loopback address, and against a
// deployment-shaped server at another host: the requests are the same,
// but for the base URL. Before, toward the loopback address the client
// would have sent the stand-in header and the stand-in audit field.
func TestSameRequestsToFakeAndDeployment(t *testing.T) {
	const key = "gw-key-same-path"
	words := deployment.Words{EnvHeader: "x-acme-env", PortalWord: "acme_portal"}
	srv := fake.NewServer(fake.WithDemoData(), fake.WithMiddleware(contract.Check(t)),
		fake.WithWords(words), fake.WithDeployment(fake.Deployment{SubscriptionKey: key}))
	defer srv.Close()

	run := func(conn deployment.Connection, next http.RoundTripper) []string {
		t.Helper()
		rt := &recordingTransport{words: words, next: next}
		c, err := New(WithConnection(conn), WithEnvironment("sandbox-eu"), WithRequestIDHeader(""),
			WithHTTPClient(&http.Client{Transport: rt}))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		res, err := c.Objects.Audit(ctx, demo.Opportunity1, objects.AuditParams{StatusCode: objects.StatusLinked, Message: "linked"})
		if err != nil || res.FieldName != objects.FieldName(words.AuditField()) {
			t.Fatalf("audit toward %s: %+v, %v", conn.BaseURL, res, err)
		}
		if _, err := c.Objects.ConnectExternalID(ctx, demo.Opportunity1, objects.ConnectExternalIDParams{FieldName: words.ReferralField(), ExternalID: "REF-9"}); err != nil {
			t.Fatalf("connect toward %s: %v", conn.BaseURL, err)
		}
		if err := c.Close(ctx); err != nil {
			t.Fatal(err)
		}
		return rt.lines
	}

	conn := srv.Connection()
	if conn.Words.EnvHeader != words.EnvHeader || conn.Words.PortalWord != words.PortalWord || conn.SubscriptionKey != key {
		t.Fatalf("the fake's connection %v does not carry its words and key", conn)
	}
	toFake := run(conn, http.DefaultTransport)
	conn.BaseURL = "https://api.acme.example"
	toDeployment := run(conn, deploymentShaped(t))

	if len(toFake) != 4 {
		t.Fatalf("requests to the fake:\n%s\nwant the token, audit, external id and revocation", strings.Join(toFake, "\n"))
	}
	if got, want := strings.Join(toFake, "\n"), strings.Join(toDeployment, "\n"); got != want {
		t.Fatalf("requests to the fake:\n%s\nto the deployment:\n%s", got, want)
	}
	for _, line := range toFake {
		if !strings.Contains(line, `x-acme-env="sandbox-eu"`) || !strings.Contains(line, `x-svc-env=""`) {
			t.Errorf("not in the deployment's environment header alone: %s", line)
		}
	}
	if !strings.Contains(toFake[1], `"field_name":"acme_portal.integration_status"`) {
		t.Errorf("audit did not name the deployment's field: %s", toFake[1])
	}
}
