package contract_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/contract"
)

// TestConnectorTour drives the fake as the deployed service's low-code
// connector does, under the contract's check (and the reference's): its
// sign-in (connectorSignIn) and its webhook trigger (connectorTrigger).
// Every operation the SDK sends nothing to (x-no-sdk) must have been
// exercised.
func TestConnectorTour(t *testing.T) {
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	record := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			probe := r.Clone(r.Context())
			probe.Body = http.NoBody
			if x, _ := c.CheckRequest(probe, nil); x != nil {
				mu.Lock()
				seen[x.Operation()] = true
				mu.Unlock()
			}
			next.ServeHTTP(w, r)
		})
	}
	srv := fake.NewServer(fake.WithRedirectURIs(fake.DefaultClientID, connectorRedirect), fake.WithMiddleware(record), fake.WithMiddleware(c.Middleware(contract.Fail(t))),
		fake.WithMiddleware(contract.Differential(t)))
	defer srv.Close()
	connectorTrigger(t, srv, connectorSignIn(t, srv))
	for _, op := range operations(t) {
		if op.noSDK != "" && !seen[op.id] {
			t.Errorf("the connector's tour did not exercise %s (%s %s)", op.id, op.method, op.path)
		}
	}
}

// sendNoRedirect sends req without following a redirect and returns the
// answer with its body read.
func sendNoRedirect(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// connectorRedirect is the redirect URI of the connector's sign-in,
// registered for the fake's client.
const connectorRedirect = "https://consent.example.com/redirect"

// connectorSignIn signs in as the connector does and returns the access
// token: GET /oauth/authorize answered 302 to the redirect URI with a code
// and the caller's state, the code then posted to the token endpoint with
// the client credentials grant in the connector's token and refresh bodies
// (apiProperties.json: tokenBodyTemplate, refreshBodyTemplate).
func connectorSignIn(t *testing.T, srv *fake.Server) string {
	t.Helper()
	const redirect = connectorRedirect
	q := url.Values{"response_type": {"code"}, "client_id": {fake.DefaultClientID}, "redirect_uri": {redirect},
		"scope": {"read write"}, "state": {"st-42"}}
	req, _ := http.NewRequest("GET", srv.URL+"/oauth/authorize?"+q.Encode(), nil)
	resp, body := sendNoRedirect(t, req)
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || loc.Scheme+"://"+loc.Host+loc.Path != redirect || loc.Query().Get("state") != "st-42" {
		t.Fatalf("authorize: %d Location %q %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	code := loc.Query().Get("code")
	if code == "" {
		t.Fatalf("authorize: no code in %s", loc)
	}
	var token string
	for _, operation := range []string{"token", "refresh"} {
		form := url.Values{"client_id": {fake.DefaultClientID}, "code": {code}, "redirect_uri": {redirect}, "grant_type": {"client_credentials"},
			"client_secret": {fake.DefaultClientSecret}, "refresh_token_type": {"dummy"}, "operation": {operation}}
		req, _ := http.NewRequest("POST", srv.URL+"/oauth/token?x-svc-env=sandbox.example.com", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, body := sendNoRedirect(t, req)
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		if err := json.Unmarshal(body, &tok); resp.StatusCode != http.StatusOK || err != nil || tok.AccessToken == "" {
			t.Fatalf("token (%s) with the code: %d %s", operation, resp.StatusCode, body)
		}
		token = tok.AccessToken
	}
	return token
}

// connectorTrigger subscribes as the connector's webhook trigger does and
// unsubscribes through the Location of the subscribe answer.
func connectorTrigger(t *testing.T, srv *fake.Server, token string) {
	t.Helper()
	sub := `{"subscriber_type": "webhook", "event": "object.all", "name": "flow", "webhook_settings": {"callback_url": "https://flows.example.com/hook"}}`
	req, _ := http.NewRequest("POST", srv.URL+"/event/v1/subscriber", strings.NewReader(sub))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, body := sendNoRedirect(t, req)
	var created struct {
		ID string `json:"subscriber_id"`
	}
	if err := json.Unmarshal(body, &created); resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("subscribe: %d %s", resp.StatusCode, body)
	}
	where, err := req.URL.Parse(resp.Header.Get("Location"))
	if err != nil || where.Path != "/event/v1/subscriber/"+created.ID {
		t.Fatalf("subscribe's Location %q, want the subscriber %s", resp.Header.Get("Location"), created.ID)
	}
	req, _ = http.NewRequest("DELETE", where.String(), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, body := sendNoRedirect(t, req); resp.StatusCode != http.StatusOK || len(srv.Subscribers()) != 0 {
		t.Fatalf("DELETE the Location: %d %s, subscribers %v", resp.StatusCode, body, srv.Subscribers())
	}
}
