package oauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/oauth2"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/oauth"
)

// tokenCall is what the recorder saw of one POST /oauth/token.
type tokenCall struct {
	contentType, grant, refresh, state, scope string
}

// env is a fake behind a recorder that notes each token request's style
// and grant before the fake answers it.
type env struct {
	fake *fake.Fake
	srv  *httptest.Server
	clk  *fake.ManualClock

	mu       sync.Mutex
	calls    []tokenCall
	received chan struct{} // gets a value per token request, if set
	hold     chan struct{} // the next token answer waits until it is closed, if set
}

func newEnv(t *testing.T, opts ...fake.Option) *env {
	t.Helper()
	e := &env{clk: fake.NewManualClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))}
	e.fake = fake.New(append([]fake.Option{fake.WithClock(e.clk), mocktest.ContractCheck(t)}, opts...)...)
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" && r.URL.Path == "/oauth/token" {
			// The request takes the hold before record tells the test it
			// arrived: the held request is the one the test saw arrive,
			// not a later one that got here while this handler waited for
			// a CPU (it would be held for good, and Close would wait on it).
			e.mu.Lock()
			hold := e.hold
			e.hold = nil // one request only
			e.mu.Unlock()
			e.record(r)
			if hold != nil {
				rec := httptest.NewRecorder()
				e.fake.ServeHTTP(rec, r)
				select {
				case <-hold:
				case <-r.Context().Done():
					return
				}
				maps.Copy(w.Header(), rec.Header())
				w.WriteHeader(rec.Code)
				w.Write(rec.Body.Bytes())
				return
			}
		}
		e.fake.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		e.srv.Close()
		e.fake.Close()
	})
	return e
}

func (e *env) record(r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	c := tokenCall{contentType: mt}
	if mt == "application/x-www-form-urlencoded" {
		v, _ := url.ParseQuery(string(body))
		c.grant, c.refresh, c.state, c.scope = v.Get("grant_type"), v.Get("refresh_token"), v.Get("state"), v.Get("scope")
	} else {
		var v struct{ GrantType, RefreshToken, State, Scope string }
		var m map[string]string
		json.Unmarshal(body, &m)
		v.GrantType, v.RefreshToken, v.State, v.Scope = m["grant_type"], m["refresh_token"], m["state"], m["scope"]
		c.grant, c.refresh, c.state, c.scope = v.GrantType, v.RefreshToken, v.State, v.Scope
	}
	e.mu.Lock()
	e.calls = append(e.calls, c)
	ch := e.received
	e.mu.Unlock()
	if ch != nil {
		ch <- struct{}{}
	}
}

func (e *env) grants() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var g []string
	for _, c := range e.calls {
		g = append(g, c.grant)
	}
	return g
}

// service returns an OAuth service of the env's server that does not
// retry; cfg defaults to the fake's client and the env's clock.
func (e *env) service(cfg oauth.Options) *oauth.Service {
	return e.serviceWith(core.Config{Retry: core.RetryPolicy{NoRetries: true}}, cfg)
}

// serviceWith is service with the pipeline's retry policy and logger
// from tc; its base URL and HTTP client are the env's server's.
func (e *env) serviceWith(tc core.Config, cfg oauth.Options) *oauth.Service {
	if cfg.ClientID == "" {
		cfg.ClientID, cfg.ClientSecret = fake.DefaultClientID, fake.DefaultClientSecret
	}
	tc.BaseURL, _ = url.Parse(e.srv.URL)
	tc.HTTPClient = e.srv.Client()
	return oauth.NewWithClock(core.New(tc), cfg, e.clk.Now)
}

func TestClientCredentials(t *testing.T) {
	for _, form := range []bool{false, true} {
		t.Run(fmt.Sprint("form=", form), func(t *testing.T) {
			e := newEnv(t)
			s := e.service(oauth.Options{FormEncoded: form, Scopes: []string{"reports", "scim"}})
			ctx := context.Background()
			tok, err := s.Token(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tok.AccessToken == "" || tok.RefreshToken == "" || tok.TokenType != "Bearer" {
				t.Fatalf("token %+v", tok)
			}
			if want := e.clk.Now().Add(time.Hour); !tok.Expiry.Equal(want) {
				t.Fatalf("expiry %v, want %v", tok.Expiry, want)
			}
			again, err := s.Token(ctx)
			if err != nil || again.AccessToken != tok.AccessToken {
				t.Fatalf("second Token: %v, same=%v", err, again != nil && again.AccessToken == tok.AccessToken)
			}
			wantCT := "application/json"
			if form {
				wantCT = "application/x-www-form-urlencoded"
			}
			if len(e.calls) != 1 || e.calls[0].contentType != wantCT || e.calls[0].grant != "client_credentials" || e.calls[0].scope != "reports scim" {
				t.Fatalf("token requests %+v, want one %s client_credentials request with scope", e.calls, wantCT)
			}
			if n := e.fake.TokensIssued(); n != 1 {
				t.Fatalf("fake issued %d tokens, want 1", n)
			}
		})
	}
}

func TestRefreshGrantAndRotation(t *testing.T) {
	e := newEnv(t)
	s := e.service(oauth.Options{})
	ctx := context.Background()
	t1, err := s.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A token is refreshed shortly before it runs out, not after.
	e.clk.Advance(58 * time.Minute)
	if tok, _ := s.Token(ctx); tok.AccessToken != t1.AccessToken {
		t.Fatal("refreshed too early")
	}
	e.clk.Advance(time.Minute + time.Second)
	t2, err := s.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if t2.AccessToken == t1.AccessToken || t2.RefreshToken == t1.RefreshToken {
		t.Fatal("refresh did not give new tokens")
	}
	if g := e.grants(); len(g) != 2 || g[1] != "refresh_token" || e.calls[1].refresh != t1.RefreshToken {
		t.Fatalf("grants %v, want client_credentials then refresh_token with the held refresh token", g)
	}
	// Rotation: the old refresh token is spent.
	_, err = s.Request(ctx, oauth.TokenParams{GrantType: oauth.GrantRefreshToken, RefreshToken: t1.RefreshToken})
	var te *core.Error
	if !errors.As(err, &te) || te.StatusCode != 400 || te.Code != "invalid_grant" {
		t.Fatalf("reusing a rotated refresh token: %v, want 400 invalid_grant", err)
	}
}

func TestFallbackToClientCredentials(t *testing.T) {
	e := newEnv(t)
	s := e.service(oauth.Options{})
	ctx := context.Background()
	t1, err := s.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Someone else spends the held refresh token.
	if _, err := s.Request(ctx, oauth.TokenParams{GrantType: oauth.GrantRefreshToken, RefreshToken: t1.RefreshToken}); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(2 * time.Hour)
	t2, err := s.Token(ctx)
	if err != nil {
		t.Fatalf("Token after a refused refresh: %v", err)
	}
	if t2.AccessToken == t1.AccessToken {
		t.Fatal("got the expired token back")
	}
	want := []string{"client_credentials", "refresh_token", "refresh_token", "client_credentials"}
	if g := e.grants(); fmt.Sprint(g) != fmt.Sprint(want) {
		t.Fatalf("grants %v, want %v", g, want)
	}
}

func TestState(t *testing.T) {
	e := newEnv(t)
	s := e.service(oauth.Options{State: "st-42"})
	if _, err := s.Token(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.calls[0].state != "st-42" {
		t.Fatalf("state sent %q", e.calls[0].state)
	}

	// The published token answer (gateway export, post-token 200
	// example) has no state: accepted. Its own state echoed: accepted.
	// Another state: refused.
	const published = "{\r\n  \"access_token\": \"2YotnFZFEjr1zCsicMWpAA\",\r\n  \"token_type\": \"Bearer\",\r\n  \"expires_in\": 3600,\r\n  \"refresh_token\": \"FZFEicMWpA\"\r\n}"
	for _, tc := range []struct {
		answer   string
		mismatch bool
	}{
		{published, false},
		{`{"state":"st-42","access_token":"at","token_type":"Bearer","expires_in":3600}`, false},
		{`{"state":"forged","access_token":"at","token_type":"Bearer","expires_in":3600}`, true},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, tc.answer)
		}))
		u, _ := url.Parse(srv.URL)
		s := oauth.New(core.New(core.Config{BaseURL: u}), oauth.Options{ClientID: "c", ClientSecret: "s", State: "st-42"})
		tok, err := s.Token(context.Background())
		srv.Close()
		switch {
		case tc.mismatch && !errors.Is(err, oauth.ErrStateMismatch):
			t.Errorf("answer %s: err = %v, want ErrStateMismatch", tc.answer, err)
		case !tc.mismatch && err != nil:
			t.Errorf("answer %s: %v", tc.answer, err)
		case !tc.mismatch && tok.AccessToken == "":
			t.Errorf("answer %s: no access token read", tc.answer)
		}
	}
}

func TestOAuthErrorsTyped(t *testing.T) {
	e := newEnv(t)
	s := e.service(oauth.Options{ClientID: fake.DefaultClientID, ClientSecret: "wrong-secret-value"})
	_, err := s.Token(context.Background())
	var te *core.Error
	if !errors.As(err, &te) || te.StatusCode != 400 || te.Code != "invalid_client" || te.Message == "" {
		t.Fatalf("err = %#v, want 400 invalid_client with a description", err)
	}
	if strings.Contains(err.Error(), "wrong-secret-value") {
		t.Fatal("error string holds the secret")
	}
	// The interface defines no scopes: the fake checks them only when
	// told to.
	e = newEnv(t, fake.WithScopeChecks())
	s = e.service(oauth.Options{Scopes: []string{"nope"}})
	if _, err := s.Token(context.Background()); !errors.As(err, &te) || te.Code != "unauthorized_client" {
		t.Fatalf("unknown scope: %v", err)
	}
}

func TestRequestValidation(t *testing.T) {
	s := newEnv(t).service(oauth.Options{})
	ctx := context.Background()
	for _, req := range []oauth.TokenParams{
		{GrantType: "password"},
		{GrantType: oauth.GrantClientCredentials},
		{GrantType: oauth.GrantRefreshToken},
	} {
		if _, err := s.Request(ctx, req); err == nil {
			t.Errorf("%v accepted", req)
		}
	}
}

func TestInvalidateAndRevoke(t *testing.T) {
	e := newEnv(t)
	s := e.service(oauth.Options{})
	ctx := context.Background()
	t1, _ := s.Token(ctx)
	s.Invalidate(&oauth2.Token{AccessToken: "not-the-cached-one"})
	if tok, _ := s.Token(ctx); tok.AccessToken != t1.AccessToken {
		t.Fatal("a stale token's invalidation dropped the cached one")
	}
	s.Invalidate(t1)
	t2, err := s.Token(ctx)
	if err != nil || t2.AccessToken == t1.AccessToken {
		t.Fatalf("Token after Invalidate: %v", err)
	}
	if g := e.grants(); len(g) != 2 || g[1] != "refresh_token" {
		t.Fatalf("grants %v: Invalidate should keep the refresh token", g)
	}

	if err := s.Revoke(ctx, t1.AccessToken); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	err = s.Revoke(ctx, t1.AccessToken)
	var te *core.Error
	if !errors.As(err, &te) || te.StatusCode != http.StatusForbidden {
		t.Fatalf("second Revoke: %v, want a 403 *Error", err)
	}
	if err := s.Revoke(ctx, "at_unknown"); !core.HasStatus(err, 403) {
		t.Fatalf("Revoke of an unknown token: %v, want 403", err)
	}
	if err := s.Revoke(ctx, ""); err == nil {
		t.Fatal("Revoke of an empty token accepted")
	}
}

func TestClose(t *testing.T) {
	e := newEnv(t)
	s := e.service(oauth.Options{})
	ctx := context.Background()
	tok, _ := s.Token(ctx)
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.Token(ctx); !errors.Is(err, oauth.ErrClosed) {
		t.Fatalf("Token after Close: %v, want ErrClosed", err)
	}
	if err := s.Revoke(ctx, tok.AccessToken); !core.HasStatus(err, 403) {
		t.Fatalf("token still valid after Close: %v", err)
	}
	if n := e.fake.CountRequests("DELETE", "/oauth/token"); n != 2 {
		t.Fatalf("%d DELETE requests, want 2 (Close once, the check once)", n)
	}
	// Closing a service that never fetched a token does no I/O.
	s2 := e.service(oauth.Options{})
	if err := s2.Close(ctx); err != nil || e.fake.CountRequests("DELETE", "/oauth/token") != 2 {
		t.Fatalf("Close without a token: %v", err)
	}
}

func TestCloseDuringFetchRevokes(t *testing.T) {
	e := newEnv(t)
	e.received = make(chan struct{}, 1)
	hold := make(chan struct{})
	e.hold = hold
	s := e.service(oauth.Options{})
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() { _, err := s.Token(ctx); errc <- err }()
	<-e.received
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	close(hold)
	if err := <-errc; !errors.Is(err, oauth.ErrClosed) {
		t.Fatalf("fetch that finished after Close: %v, want ErrClosed", err)
	}
	var revoked int
	for _, r := range e.fake.Requests() {
		if r.Method == "DELETE" && r.Status == 200 {
			revoked++
		}
	}
	if revoked != 1 {
		t.Fatalf("%d tokens revoked, want the one fetched during Close", revoked)
	}
}

// TestConcurrentTokenSingleRequest: a hundred callers ask for a token
// while the first token request is held at the server (its answer waits
// on a channel until every other caller waits for it), and one request
// serves them all.
func TestConcurrentTokenSingleRequest(t *testing.T) {
	e := newEnv(t)
	e.received = make(chan struct{}, 1)
	hold := make(chan struct{})
	e.hold = hold
	s := e.service(oauth.Options{})
	waiting := make(chan struct{}, 100)
	oauth.OnWait(s, func() { waiting <- struct{}{} })
	var wg sync.WaitGroup
	toks := make([]string, 100)
	errs := make([]error, 100)
	call := func(i int) {
		defer wg.Done()
		tok, err := s.Token(context.Background())
		errs[i] = err
		if tok != nil {
			toks[i] = tok.AccessToken
		}
	}
	wg.Add(1)
	go call(0)
	<-e.received // the leader's request is at the server, held there
	for i := 1; i < 100; i++ {
		wg.Add(1)
		go call(i)
		<-waiting
	}
	close(hold)
	wg.Wait()
	for i := range 100 {
		if errs[i] != nil || toks[i] != toks[0] {
			t.Fatalf("goroutine %d: %v, token shared=%v", i, errs[i], toks[i] == toks[0])
		}
	}
	if n := e.fake.CountRequests("POST", "/oauth/token"); n != 1 || e.fake.TokensIssued() != 1 {
		t.Fatalf("%d token requests, %d tokens issued; want 1", n, e.fake.TokensIssued())
	}
}

// TestEarlyRefreshFailureKeepsToken: when the early refresh fails (the
// token endpoint answers 503, both grants), Token returns the cached token,
// which is still valid, logs the failure and does not ask again for 30s;
// concurrent callers never see the failure; only once the token has
// expired does Token fail.
func TestEarlyRefreshFailureKeepsToken(t *testing.T) {
	e := newEnv(t)
	var logs bytes.Buffer
	s := e.serviceWith(core.Config{Retry: core.RetryPolicy{NoRetries: true},
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))}, oauth.Options{})
	ctx := context.Background()
	t1, err := s.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.fake.InjectFault(fake.Fault{Method: "POST", Path: "/oauth/token", Status: 503})
	e.clk.Advance(59*time.Minute + 30*time.Second) // within the last minute
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if tok, err := s.Token(ctx); err != nil || tok.AccessToken != t1.AccessToken {
				t.Errorf("Token during a failed early refresh: %v", err)
			}
		})
	}
	wg.Wait()
	if n := e.fake.CountRequests("POST", "/oauth/token"); n != 3 {
		t.Fatalf("%d token requests, want 3 (the first, one refresh, one client credentials fallback)", n)
	}
	if !strings.Contains(logs.String(), "early token refresh failed") || strings.Contains(logs.String(), t1.AccessToken) ||
		strings.Contains(logs.String(), t1.RefreshToken) || strings.Contains(logs.String(), fake.DefaultClientSecret) {
		t.Fatalf("log = %q, want the failure without the tokens or the client secret", logs.String())
	}
	e.clk.Advance(10 * time.Second) // spaced: no new attempt yet
	if _, err := s.Token(ctx); err != nil || e.fake.CountRequests("POST", "/oauth/token") != 3 {
		t.Fatalf("Token 10s after a failed refresh: %v, %d requests", err, e.fake.CountRequests("POST", "/oauth/token"))
	}
	e.clk.Advance(11 * time.Second) // half the time left has passed: try again
	if _, err := s.Token(ctx); err != nil || e.fake.CountRequests("POST", "/oauth/token") != 5 {
		t.Fatalf("Token after the spacing: %v, %d requests, want 5", err, e.fake.CountRequests("POST", "/oauth/token"))
	}
	e.clk.Advance(10 * time.Second) // expired
	if _, err := s.Token(ctx); !core.HasStatus(err, 503) {
		t.Fatalf("Token once expired: %v, want the 503", err)
	}
	e.fake.ClearFaults()
	if tok, err := s.Token(ctx); err != nil || tok.AccessToken == t1.AccessToken {
		t.Fatalf("Token once the endpoint is back: %v", err)
	}
}

// TestRefreshFailureFallsBack: a refresh that fails for any reason (a 500,
// a dropped connection after the server answered) falls back to the
// client credentials grant, which is retried like a read.
func TestRefreshFailureFallsBack(t *testing.T) {
	for _, ft := range []fake.Fault{{Status: 500}, {DropAfter: true}} {
		e := newEnv(t)
		s := e.serviceWith(core.Config{
			Retry: core.RetryPolicy{MaxRetries: 2, MinWait: time.Microsecond, MaxWait: time.Microsecond}}, oauth.Options{})
		ctx := context.Background()
		t1, err := s.Token(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The refresh and the first client credentials request fail.
		ft.Method, ft.Path, ft.Times = "POST", "/oauth/token", 2
		e.fake.InjectFault(ft)
		e.clk.Advance(2 * time.Hour)
		t2, err := s.Token(ctx)
		if err != nil || t2.AccessToken == t1.AccessToken {
			t.Fatalf("%+v: Token after a failed refresh: %v", ft, err)
		}
		want := []string{"client_credentials", "refresh_token", "client_credentials", "client_credentials"}
		if g := e.grants(); fmt.Sprint(g) != fmt.Sprint(want) {
			t.Fatalf("%+v: grants %v, want %v", ft, g, want)
		}
	}
}

// TestWaiterCancelled: a caller waiting for another's fetch returns as soon
// as its own context ends; when the fetching caller gives up, a waiter
// with a live context fetches itself; no goroutine is left behind.
func TestWaiterCancelled(t *testing.T) {
	// Registered first, so it runs after newEnv's cleanup closed the server.
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	e := newEnv(t)
	e.received = make(chan struct{}, 4)
	e.hold = make(chan struct{}) // never closed: the leader waits until it gives up
	s := e.service(oauth.Options{})
	waiting := make(chan struct{}, 4)
	oauth.OnWait(s, func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	})

	leaderCtx, cancelLeader := context.WithCancel(context.Background())
	leader := make(chan error, 1)
	go func() { _, err := s.Token(leaderCtx); leader <- err }()
	<-e.received // the leader's request is at the server

	waiterCtx, cancelWaiter := context.WithCancel(context.Background())
	waiter := make(chan error, 1)
	go func() { _, err := s.Token(waiterCtx); waiter <- err }()
	patient := make(chan error, 1)
	go func() { _, err := s.Token(context.Background()); patient <- err }()
	<-waiting // both wait for the leader's fetch
	<-waiting

	cancelWaiter()
	if err := wait(t, waiter); !errors.Is(err, context.Canceled) {
		t.Fatalf("waiter: %v, want context.Canceled", err)
	}
	cancelLeader()
	if err := wait(t, leader); !errors.Is(err, context.Canceled) {
		t.Fatalf("leader: %v, want context.Canceled", err)
	}
	if err := wait(t, patient); err != nil {
		t.Fatalf("patient waiter: %v, want a token of its own fetch", err)
	}
	if g := e.grants(); len(g) != 2 {
		t.Fatalf("grants %v, want the leader's and the patient waiter's", g)
	}
	e.srv.Client().CloseIdleConnections()
}

func wait(t *testing.T, c chan error) error {
	t.Helper()
	select {
	case err := <-c:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("call did not return")
		return nil
	}
}

func TestSecretsRedacted(t *testing.T) {
	req := oauth.TokenParams{GrantType: "refresh_token", ClientID: "cid", ClientSecret: "S3CRET-client", RefreshToken: "S3CRET-refresh", State: "st"}
	resp := oauth.TokenResult{AccessToken: "S3CRET-access", RefreshToken: "S3CRET-refresh2", TokenType: "Bearer", ExpiresIn: 60}
	out := fmt.Sprintf("%v %+v %s %#v %v %+v %#v %v", req, resp, req, req, &req, &resp, resp, []any{req, resp})
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "req", req, "resp", resp)
	out += buf.String()
	if strings.Contains(out, "S3CRET") {
		t.Fatalf("secret in %s", out)
	}
	if !strings.Contains(out, "cid") || !strings.Contains(out, "[redacted]") {
		t.Fatalf("output lost the useful parts: %s", out)
	}
}

func TestTokenSourceAdapter(t *testing.T) {
	e := newEnv(t)
	s := e.service(oauth.Options{})
	tok, err := s.TokenSource(context.Background()).Token()
	if err != nil || tok.AccessToken == "" {
		t.Fatalf("TokenSource: %v", err)
	}
}
