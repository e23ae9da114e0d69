package partner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"golang.org/x/oauth2"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/contract"
	"github.com/partnerapi/partner-go/oauth"
)

const base = "https://api.example.test"

func TestNewValidation(t *testing.T) {
	creds := WithClientCredentials("id", "secret")
	for _, tc := range []struct {
		name string
		opts []Option
		want string // in the error; "" means New succeeds
	}{
		{"ok", []Option{WithBaseURL(base), creds}, ""},
		{"no base URL", []Option{creds}, "no base URL"},
		{"relative", []Option{WithBaseURL("api.example.test"), creds}, "absolute http(s) URL"},
		{"ftp", []Option{WithBaseURL("ftp://api.example.test"), creds}, "absolute http(s) URL"},
		{"http remote", []Option{WithBaseURL("http://api.example.test"), creds}, "not HTTPS"},
		{"http remote allowed", []Option{WithBaseURL("http://api.example.test"), creds, WithInsecureHTTP()}, ""},
		{"http loopback v4", []Option{WithBaseURL("http://127.0.0.1:8080"), creds}, ""},
		{"http loopback v6", []Option{WithBaseURL("http://[::1]:8080"), creds}, ""},
		{"http localhost", []Option{WithBaseURL("http://localhost:8080"), creds}, ""},
		{"http LOCALHOST", []Option{WithBaseURL("HTTP://LocalHost:8080"), creds}, ""},
		{"http sub.localhost", []Option{WithBaseURL("http://api.localhost:8080"), creds}, "not HTTPS"},
		{"userinfo", []Option{WithBaseURL("https://u:p@api.example.test"), creds}, "must not carry credentials"},
		{"query", []Option{WithBaseURL(base + "?x=1"), creds}, "query or fragment"},
		{"no credentials", []Option{WithBaseURL(base)}, "no client credentials"},
		{"no secret", []Option{WithBaseURL(base), WithClientCredentials("id", "")}, "no client credentials"},
		{"token source instead", []Option{WithBaseURL(base), WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "x"}))}, ""},
		{"Authorization header", []Option{WithBaseURL(base), creds, WithHeader("authorization", "Bearer x")}, "cannot set Authorization"},
		{"Idempotency-Key header", []Option{WithBaseURL(base), creds, WithHeader("Idempotency-Key", "k")}, "send a write again after a broken connection"},
		{"x-idempotency-key header", []Option{WithBaseURL(base), creds, WithHeader("x-idempotency-key", "k")}, "send a write again after a broken connection"},
		{"negative retries", []Option{WithBaseURL(base), creds, WithMaxRetries(-1)}, "WithMaxRetries"},
		{"nil option", []Option{WithBaseURL(base), creds, nil}, ""},
	} {
		c, err := New(tc.opts...)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		case tc.want != "" && c != nil:
			t.Errorf("%s: a client came back with the error", tc.name)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "partner: ") {
			t.Errorf("%s: error %q lacks the partner: prefix", tc.name, err)
		}
	}
}

// mockClient builds a Client on its own httpmock transport.
func mockClient(t *testing.T, opts ...Option) (*Client, *httpmock.MockTransport) {
	t.Helper()
	mt := httpmock.NewMockTransport()
	c, err := New(append([]Option{
		WithBaseURL(base),
		WithClientCredentials("cid", "client-secret-XYZ"),
		WithHTTPClient(&http.Client{Transport: mt}),
		WithRetryWait(time.Microsecond, time.Microsecond),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c, mt
}

// tokenEndpoint answers POST /oauth/token with access tokens at-1, at-2...
// and refresh tokens rt-1, rt-2..., recording each request's grant.
type tokenEndpoint struct {
	mu     sync.Mutex
	n      int
	grants []string
}

func (e *tokenEndpoint) responder(req *http.Request) (*http.Response, error) {
	var body map[string]string
	json.NewDecoder(req.Body).Decode(&body)
	e.mu.Lock()
	e.n++
	n := e.n
	e.grants = append(e.grants, body["grant_type"])
	e.mu.Unlock()
	return httpmock.NewStringResponse(200, fmt.Sprintf(
		`{"access_token":"access-tok-%d","refresh_token":"refresh-tok-%d","token_type":"Bearer","expires_in":3600}`, n, n)), nil
}

func TestNewDoesNoIO(t *testing.T) {
	c, mt := mockClient(t)
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Fatalf("New made %d requests", n)
	}
	srv := fake.NewServer(fake.WithMiddleware(contract.Check(t)))
	defer srv.Close()
	if _, err := New(WithBaseURL(srv.URL), WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret)); err != nil {
		t.Fatal(err)
	}
	if len(srv.Requests()) != 0 {
		t.Fatalf("New reached the server: %v", srv.Requests())
	}
	_ = c
}

func TestUnauthorizedRefreshesAndRepeatsOnce(t *testing.T) {
	ctx := context.Background()
	t.Run("second token works", func(t *testing.T) {
		c, mt := mockClient(t)
		var te tokenEndpoint
		mt.RegisterResponder("POST", base+"/oauth/token", te.responder)
		var auths []string
		mt.RegisterResponder("GET", base+"/report/v1/x", func(req *http.Request) (*http.Response, error) {
			auths = append(auths, req.Header.Get("Authorization"))
			if req.Header.Get("Authorization") == "Bearer access-tok-1" {
				return httpmock.NewStringResponse(401, `{"error":"invalid_token","message":"expired"}`), nil
			}
			return httpmock.NewStringResponse(200, `{}`), nil
		})
		if err := c.t.Do(ctx, &core.Request{Method: "GET", Path: "/report/v1/x"}, nil); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(auths) != "[Bearer access-tok-1 Bearer access-tok-2]" {
			t.Fatalf("authorizations sent: %v", auths)
		}
		if fmt.Sprint(te.grants) != "[client_credentials refresh_token]" {
			t.Fatalf("grants: %v", te.grants)
		}
	})
	t.Run("only once", func(t *testing.T) {
		c, mt := mockClient(t)
		var te tokenEndpoint
		mt.RegisterResponder("POST", base+"/oauth/token", te.responder)
		mt.RegisterResponder("POST", base+"/report/v1/x", httpmock.NewStringResponder(401, `{"error":"invalid_token","message":"no"}`))
		err := c.t.Do(ctx, &core.Request{Method: "POST", Path: "/report/v1/x", JSON: map[string]int{"a": 1}}, nil)
		if !IsUnauthorized(err) {
			t.Fatalf("err = %v, want 401", err)
		}
		if n := mt.GetCallCountInfo()["POST "+base+"/report/v1/x"]; n != 2 || te.n != 2 {
			t.Fatalf("%d calls and %d token requests, want 2 and 2", n, te.n)
		}
	})
	t.Run("plain reader body", func(t *testing.T) {
		c, mt := mockClient(t)
		var te tokenEndpoint
		mt.RegisterResponder("POST", base+"/oauth/token", te.responder)
		mt.RegisterResponder("POST", base+"/bulk/v1/bulkload", func(req *http.Request) (*http.Response, error) {
			io.Copy(io.Discard, req.Body)
			return httpmock.NewStringResponse(401, `{}`), nil
		})
		body := struct{ io.Reader }{strings.NewReader("a,b\n1,2\n")}
		err := c.t.Do(ctx, &core.Request{Method: "POST", Path: "/bulk/v1/bulkload", Body: body, ContentType: "text/csv"}, nil)
		if !errors.Is(err, ErrBodyNotReplayable) || !IsUnauthorized(err) {
			t.Fatalf("err = %v, want a 401 marked ErrBodyNotReplayable", err)
		}
		// The bad token was still dropped: the next call fetches another.
		mt.RegisterResponder("GET", base+"/x", httpmock.NewStringResponder(200, `{}`))
		if err := c.t.Do(ctx, &core.Request{Method: "GET", Path: "/x"}, nil); err != nil || te.n != 2 {
			t.Fatalf("next call: %v after %d token requests, want 2", err, te.n)
		}
	})
}

func TestWithTokenSource(t *testing.T) {
	c, mt := mockClient(t, WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "external-tok"})))
	var auth string
	mt.RegisterResponder("GET", base+"/x", func(req *http.Request) (*http.Response, error) {
		auth = req.Header.Get("Authorization")
		return httpmock.NewStringResponse(200, `{}`), nil
	})
	ctx := context.Background()
	if err := c.t.Do(ctx, &core.Request{Method: "GET", Path: "/x"}, nil); err != nil {
		t.Fatal(err)
	}
	if auth != "Bearer external-tok" || mt.GetCallCountInfo()["POST "+base+"/oauth/token"] != 0 {
		t.Fatalf("Authorization %q, token endpoint called %d times", auth, mt.GetCallCountInfo()["POST "+base+"/oauth/token"])
	}
	// c.OAuth serves the active token source, not the unused credentials grant.
	if tok, err := c.OAuth.Token(ctx); err != nil || tok.AccessToken != "external-tok" {
		t.Fatalf("c.OAuth.Token = %v, %v; want the source's token", tok, err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := mt.GetCallCountInfo()["DELETE "+base+"/oauth/token"]; n != 0 {
		t.Fatalf("Close revoked the source's token (%d DELETE calls)", n)
	}
	if _, err := c.OAuth.Token(ctx); !errors.Is(err, oauth.ErrClosed) {
		t.Fatalf("c.OAuth.Token after Close: %v, want oauth.ErrClosed", err)
	}
	if err := c.t.Do(ctx, &core.Request{Method: "GET", Path: "/x"}, nil); !errors.Is(err, oauth.ErrClosed) {
		t.Fatalf("call after Close: %v, want oauth.ErrClosed", err)
	}
}

// countingSource returns ext-1, ext-2, ... valid for an hour.
type countingSource struct{ n atomic.Int32 }

func (c *countingSource) Token() (*oauth2.Token, error) {
	return &oauth2.Token{AccessToken: fmt.Sprintf("ext-%d", c.n.Add(1)), Expiry: time.Now().Add(time.Hour)}, nil
}

func TestWithTokenSourceRefreshAfter401(t *testing.T) {
	cs := &countingSource{}
	c, mt := mockClient(t, WithTokenSource(cs))
	var auths []string
	mt.RegisterResponder("GET", base+"/x", func(req *http.Request) (*http.Response, error) {
		auths = append(auths, req.Header.Get("Authorization"))
		if req.Header.Get("Authorization") == "Bearer ext-1" {
			return httpmock.NewStringResponse(401, `{}`), nil
		}
		return httpmock.NewStringResponse(200, `{}`), nil
	})
	ctx := context.Background()
	for range 3 {
		if err := c.t.Do(ctx, &core.Request{Method: "GET", Path: "/x"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(auths) != "[Bearer ext-1 Bearer ext-2 Bearer ext-2 Bearer ext-2]" || cs.n.Load() != 2 {
		t.Fatalf("authorizations %v, source asked %d times", auths, cs.n.Load())
	}
}

func TestHeaderOptions(t *testing.T) {
	c, mt := mockClient(t, WithEnvironment("sbx"), WithEnvironmentHeader("x-svc-env"), WithUserAgent("myapp/2"), WithHeader("X-Gateway-Key", "gk"), WithMaxRetries(0))
	var te tokenEndpoint
	var tokenHdr, callHdr http.Header
	mt.RegisterResponder("POST", base+"/oauth/token", func(req *http.Request) (*http.Response, error) {
		tokenHdr = req.Header.Clone()
		return te.responder(req)
	})
	mt.RegisterResponder("GET", base+"/x", func(req *http.Request) (*http.Response, error) {
		callHdr = req.Header.Clone()
		return httpmock.NewStringResponse(503, `{}`), nil
	})
	err := c.t.Do(context.Background(), &core.Request{Method: "GET", Path: "/x"}, nil)
	if !IsServerError(err) || mt.GetCallCountInfo()["GET "+base+"/x"] != 1 {
		t.Fatalf("WithMaxRetries(0): %v after %d calls", err, mt.GetCallCountInfo()["GET "+base+"/x"])
	}
	for _, h := range []http.Header{tokenHdr, callHdr} {
		if h.Get("x-svc-env") != "sbx" || h.Get("User-Agent") != "partner-go/"+Version+" myapp/2" || h.Get("X-Gateway-Key") != "gk" {
			t.Fatalf("headers %v", h)
		}
	}
	if tokenHdr.Get("Authorization") != "" || tokenHdr.Get("Content-Type") != "application/json" {
		t.Fatalf("token request headers %v", tokenHdr)
	}
}

func TestWithEnvironmentOnFake(t *testing.T) {
	srv := fake.NewServer(fake.WithMiddleware(contract.Check(t)))
	defer srv.Close()
	c, err := New(WithConnection(srv.Connection()), WithEnvironment("sandbox-eu"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.OAuth.Token(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests %+v, want the token request and the invalidation", reqs)
	}
	for _, r := range reqs {
		if r.Env != "sandbox-eu" || r.Status != 200 || r.Query != "x-svc-env=sandbox-eu" {
			t.Errorf("%s %s: env %q, query %q, status %d", r.Method, r.Path, r.Env, r.Query, r.Status)
		}
	}
	if _, err := c.OAuth.Token(ctx); !errors.Is(err, oauth.ErrClosed) {
		t.Fatalf("Token after Close: %v", err)
	}
}

// TestSecretsNeverLeak logs at debug level through a whole cycle (token,
// call, 401, refresh, 500 with retries, failed POST, refused token
// request, revocation) and checks that no secret reaches the log or an
// error string.
func TestSecretsNeverLeak(t *testing.T) {
	const secret = "client-secret-XYZ"
	var logBuf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, mt := mockClient(t, WithLogger(logger), WithMaxRetries(2))
	var te tokenEndpoint
	mt.RegisterResponder("POST", base+"/oauth/token", te.responder)
	var calls atomic.Int32
	mt.RegisterResponder("GET", base+"/report/v1/x", func(req *http.Request) (*http.Response, error) {
		if calls.Add(1) == 1 {
			return httpmock.NewStringResponse(401, `{"error":"invalid_token","message":"expired"}`), nil
		}
		return httpmock.NewStringResponse(500, `{"error":"internal","message":"boom"}`), nil
	})
	mt.RegisterResponder("POST", base+"/report/v1/x", httpmock.NewStringResponder(500, `{}`))
	mt.RegisterResponder("GET", base+"/net", httpmock.ConnectionFailure)
	mt.RegisterResponder("DELETE", base+"/oauth/token", httpmock.NewStringResponder(403, `{"error":"invalid_token","message":"unknown"}`))

	ctx := context.Background()
	var errs []error
	errs = append(errs, c.t.Do(ctx, &core.Request{Method: "GET", Path: "/report/v1/x"}, nil))
	errs = append(errs, c.t.Do(ctx, &core.Request{Method: "POST", Path: "/report/v1/x", JSON: map[string]string{"a": "b"}}, nil))
	errs = append(errs, c.t.Do(ctx, &core.Request{Method: "GET", Path: "/net"}, nil))
	tok, _ := c.OAuth.Token(ctx)
	errs = append(errs, c.OAuth.Revoke(ctx, tok.AccessToken))
	_, err := c.OAuth.Request(ctx, oauth.TokenParams{GrantType: oauth.GrantRefreshToken, RefreshToken: "refresh-tok-1"})
	errs = append(errs, err)

	// The reliability paths. A refused https→http redirect whose target
	// carries tokens in its query:
	mt.RegisterResponder("GET", base+"/redir", func(*http.Request) (*http.Response, error) {
		r := httpmock.NewStringResponse(307, "")
		r.Header.Set("Location", "http://api.example.test/plain?access_token=access-tok-9&sig=refresh-tok-9")
		return r, nil
	})
	err = c.t.Do(ctx, &core.Request{Method: "GET", Path: "/redir"}, nil)
	if !errors.Is(err, ErrInsecureRedirect) {
		t.Fatalf("redirect to http: %v, want ErrInsecureRedirect", err)
	}
	errs = append(errs, err)
	// A call refused by an empty retry budget, and a refresh that fails
	// after a 401 (logged, then the client credentials grant):
	c2, mt2 := mockClient(t, WithLogger(logger), WithRetryBudget(5), WithMaxRetries(3))
	var te2 tokenEndpoint
	var refreshes atomic.Int32
	mt2.RegisterResponder("POST", base+"/oauth/token", func(req *http.Request) (*http.Response, error) {
		resp, _ := te2.responder(req)
		te2.mu.Lock()
		refresh := te2.grants[len(te2.grants)-1] == "refresh_token"
		te2.mu.Unlock()
		if refresh {
			refreshes.Add(1)
			return httpmock.NewStringResponse(500, `{"error":"internal","message":"boom"}`), nil
		}
		return resp, nil
	})
	var calls2 atomic.Int32
	mt2.RegisterResponder("GET", base+"/busy", func(*http.Request) (*http.Response, error) {
		if calls2.Add(1) == 1 {
			return httpmock.NewStringResponse(401, `{"error":"invalid_token","message":"expired"}`), nil
		}
		return httpmock.NewStringResponse(503, `{"error":"busy","message":"later"}`), nil
	})
	err = c2.t.Do(ctx, &core.Request{Method: "GET", Path: "/busy"}, nil)
	if !errors.Is(err, ErrRetryBudgetExhausted) || refreshes.Load() != 1 {
		t.Fatalf("budget: %v after %d refreshes, want ErrRetryBudgetExhausted after one failed refresh", err, refreshes.Load())
	}
	errs = append(errs, err)
	if !strings.Contains(logBuf.String(), "refresh failed") {
		t.Fatalf("debug log lacks the failed refresh:\n%s", logBuf.String())
	}

	// A refused token request, against the fake this time.
	srv := fake.NewServer(fake.WithMiddleware(contract.Check(t)))
	defer srv.Close()
	bad, _ := New(WithBaseURL(srv.URL), WithClientCredentials(fake.DefaultClientID, secret), WithLogger(logger))
	_, err = bad.OAuth.Token(ctx)
	errs = append(errs, err)

	var all strings.Builder
	all.WriteString(logBuf.String())
	fmt.Fprintf(&all, "%+v\n", srv.Requests())
	for i, e := range errs[:3] {
		if e == nil {
			t.Fatalf("call %d did not fail", i)
		}
	}
	for _, e := range errs {
		fmt.Fprintf(&all, "%v\n%+v\n", e, e)
	}
	if !strings.Contains(logBuf.String(), "retrying") || !strings.Contains(logBuf.String(), "401") {
		t.Fatalf("debug log lacks the retries and the refresh:\n%s", logBuf.String())
	}
	for _, s := range []string{secret, "access-tok-", "refresh-tok-", "Authorization", "Bearer "} {
		if strings.Contains(all.String(), s) {
			t.Errorf("%q leaked:\n%s", s, all.String())
		}
	}
}

func TestErrorHelpers(t *testing.T) {
	wrap := func(code int) error {
		return fmt.Errorf("context: %w", &Error{StatusCode: code, Method: "GET", Path: "/x"})
	}
	checks := map[string]func(error) bool{
		"IsBadRequest": IsBadRequest, "IsUnauthorized": IsUnauthorized, "IsForbidden": IsForbidden,
		"IsNotFound": IsNotFound, "IsConflict": IsConflict, "IsRateLimited": IsRateLimited, "IsServerError": IsServerError,
	}
	want := map[int]string{400: "IsBadRequest", 401: "IsUnauthorized", 403: "IsForbidden", 404: "IsNotFound",
		409: "IsConflict", 429: "IsRateLimited", 500: "IsServerError", 503: "IsServerError"}
	for code, name := range want {
		for n, f := range checks {
			if got := f(wrap(code)); got != (n == name) {
				t.Errorf("%s(%d) = %v", n, code, got)
			}
		}
	}
	for n, f := range checks {
		if f(errors.New("plain")) || f(nil) {
			t.Errorf("%s true for a non-API error", n)
		}
	}
}

// TestOneConnectionPool: token requests and API calls share one pool of
// kept-alive connections (a JSON answer is drained after decoding).
func TestOneConnectionPool(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/oauth/token" {
			io.WriteString(w, `{"access_token":"a","token_type":"Bearer","expires_in":3600}`+"\n\n")
			return
		}
		io.WriteString(w, `{"ok":true}`+"\n\n")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := New(WithBaseURL(srv.URL), WithClientCredentials("id", "secret"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 3 {
		var out struct{ OK bool }
		if err := c.t.Do(ctx, &core.Request{Method: "GET", Path: "/x"}, &out); err != nil || !out.OK {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for a token request and 3 calls, want 1", n)
	}
	if !IsServerError(&Error{StatusCode: 599}) || IsServerError(&Error{StatusCode: 499}) {
		t.Fatal("IsServerError range")
	}
}
