package fake_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake"
)

// TestAuthorize: GET /oauth/authorize, the connector's sign-in, answers
// 302 to redirect_uri (its own query kept) with a code and the caller's
// state; without a usable client_id or redirect_uri it answers 400 and
// does not redirect; with another response_type than code it redirects
// with the error and the state (RFC 6749 4.1.2.1). Under the contract's
// check.
func TestAuthorize(t *testing.T) {
	const cb = "https://consent.example.com/redirect?tenant=7"
	w := newWire(t, fake.WithRedirectURIs(fake.DefaultClientID, cb), fake.WithClient(fake.DefaultClientID, fake.DefaultClientSecret), fake.WithClient("other", "other-secret-1"))
	w.token = ""
	for _, tc := range []struct {
		name  string
		query url.Values
		// status 302: the redirect's query must hold these (a "*" value:
		// any that is not empty) and not code unless named; 400: the
		// OAuth error.
		status int
		want   map[string]string
	}{
		{"a code", url.Values{"response_type": {"code"}, "client_id": {fake.DefaultClientID}, "redirect_uri": {cb}, "state": {"s 1"}, "scope": {"read write"}},
			302, map[string]string{"code": "*", "state": "s 1", "tenant": "7"}},
		{"a code, no state", url.Values{"response_type": {"code"}, "client_id": {fake.DefaultClientID}, "redirect_uri": {cb}},
			302, map[string]string{"code": "*", "tenant": "7"}},
		{"a loopback URI, not registered", url.Values{"response_type": {"code"}, "client_id": {"other"}, "redirect_uri": {"http://127.0.0.1:8400/cb"}, "state": {"s"}},
			302, map[string]string{"code": "*", "state": "s"}},
		{"localhost", url.Values{"response_type": {"code"}, "client_id": {fake.DefaultClientID}, "redirect_uri": {"http://localhost:53682/"}},
			302, map[string]string{"code": "*"}},
		{"another response_type", url.Values{"response_type": {"token"}, "client_id": {fake.DefaultClientID}, "redirect_uri": {cb}, "state": {"s"}},
			302, map[string]string{"error": "unsupported_response_type", "state": "s"}},
		{"no response_type", url.Values{"client_id": {fake.DefaultClientID}, "redirect_uri": {cb}, "state": {"s"}},
			302, map[string]string{"error": "invalid_request", "state": "s"}},
		{"no client_id", url.Values{"response_type": {"code"}, "redirect_uri": {cb}}, 400, map[string]string{"error": "invalid_request"}},
		{"an unknown client_id", url.Values{"response_type": {"code"}, "client_id": {"nobody"}, "redirect_uri": {cb}}, 400, map[string]string{"error": "invalid_client"}},
		{"no redirect_uri", url.Values{"response_type": {"code"}, "client_id": {fake.DefaultClientID}}, 400, map[string]string{"error": "invalid_request"}},
		{"a relative redirect_uri", url.Values{"response_type": {"code"}, "client_id": {fake.DefaultClientID}, "redirect_uri": {"/cb"}}, 400, map[string]string{"error": "invalid_request"}},
		{"a redirect_uri with a fragment", url.Values{"response_type": {"code"}, "client_id": {fake.DefaultClientID}, "redirect_uri": {"https://a.example.com/cb#x"}}, 400, map[string]string{"error": "invalid_request"}},
		{"a redirect_uri of another scheme", url.Values{"response_type": {"code"}, "client_id": {fake.DefaultClientID}, "redirect_uri": {"javascript://a.example.com/x"}}, 400, map[string]string{"error": "invalid_request"}},
		// Not an open redirect: only a registered URI, as registered, or a
		// loopback one.
		{"a redirect_uri not registered", url.Values{"response_type": {"code"}, "client_id": {fake.DefaultClientID}, "redirect_uri": {"https://attacker.example/phish"}, "state": {"s"}}, 400, map[string]string{"error": "invalid_request"}},
		{"a registered URI with another query", url.Values{"response_type": {"code"}, "client_id": {fake.DefaultClientID}, "redirect_uri": {"https://consent.example.com/redirect?tenant=8"}}, 400, map[string]string{"error": "invalid_request"}},
		{"another client's URI", url.Values{"response_type": {"code"}, "client_id": {"other"}, "redirect_uri": {cb}}, 400, map[string]string{"error": "invalid_request"}},
		{"an unregistered response_type refusal", url.Values{"response_type": {"token"}, "client_id": {fake.DefaultClientID}, "redirect_uri": {"https://attacker.example/"}}, 400, map[string]string{"error": "invalid_request"}},
		{"a name under .localhost", url.Values{"response_type": {"code"}, "client_id": {fake.DefaultClientID}, "redirect_uri": {"http://app.localhost:8400/cb"}}, 400, map[string]string{"error": "invalid_request"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, header := w.do("GET", "/oauth/authorize?"+tc.query.Encode(), "")
			if status != tc.status {
				t.Fatalf("%d %s (Location %q), want %d", status, body, header.Get("Location"), tc.status)
			}
			if status == http.StatusBadRequest {
				if header.Get("Location") != "" || !strings.Contains(string(body), `"error":"`+tc.want["error"]+`"`) {
					t.Fatalf("400 %s, Location %q: want the error %s and no redirect", body, header.Get("Location"), tc.want["error"])
				}
				return
			}
			loc, err := url.Parse(header.Get("Location"))
			want, _ := url.Parse(tc.query.Get("redirect_uri"))
			if err != nil || loc.Host != want.Host || loc.Path != want.Path {
				t.Fatalf("Location %q, want the redirect_uri", header.Get("Location"))
			}
			got := loc.Query()
			for k, v := range tc.want {
				if g := got.Get(k); g == "" || v != "*" && g != v {
					t.Errorf("redirect's %s = %q, want %q", k, g, v)
				}
			}
			if _, ok := tc.want["code"]; !ok && got.Has("code") {
				t.Errorf("a code in a refusal: %s", loc)
			}
		})
	}
}

// TestTokenTakesTheCode: the token endpoint takes the code of the sign-in
// with the client credentials grant, as the connector sends it (JSON too);
// the client credentials decide.
func TestTokenTakesTheCode(t *testing.T) {
	w := newWire(t)
	w.token = ""
	for _, tc := range []struct {
		body   string
		status int
	}{
		{`{"grant_type": "client_credentials", "client_id": "` + fake.DefaultClientID + `", "client_secret": "` + fake.DefaultClientSecret + `", "code": "code_1", "redirect_uri": "https://a.example.com/cb"}`, 200},
		{`{"grant_type": "client_credentials", "client_id": "` + fake.DefaultClientID + `", "client_secret": "wrong", "code": "code_1"}`, 400},
		{`{"grant_type": "authorization_code", "client_id": "` + fake.DefaultClientID + `", "client_secret": "` + fake.DefaultClientSecret + `", "code": "code_1"}`, 400},
	} {
		if status, body, _ := w.do("POST", "/oauth/token", tc.body); status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.body, status, body, tc.status)
		}
	}
	// A code in the query is masked in the request log, as the other
	// credentials are.
	w.do("POST", "/oauth/token?code=code_in_the_query", `{"grant_type": "client_credentials"}`)
	for _, e := range w.srv.Requests() {
		if strings.Contains(e.Query, "code_in_the_query") {
			t.Errorf("the request log holds the code: %+v", e)
		}
	}
}
