// Package mocktest is the module's one helper for wire tests: a
// partner.Client on its own jarcoal/httpmock transport (never
// httpmock.Activate, so tests can run in parallel) and responders that
// check a request's JSON body against literal JSON; a client of a
// package fake server for integration tests (FakeClient); and, for
// per-call benchmarks, a canned loopback server and the
// sdk-versus-hand-written loop (CannedServer, LoopbackClient, CallBench).
// Only tests import it.
package mocktest

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"

	partner "github.com/partnerapi/partner-go"
)

const (
	// BaseURL is the base URL of the clients New builds.
	BaseURL = "https://api.example.com"
	// AccessToken is the token the mock token endpoint hands out: calls
	// carry "Authorization: Bearer " + AccessToken.
	AccessToken = "at-1"
	// RefreshToken comes with AccessToken.
	RefreshToken = "rt-1"
)

// TokenResponse is the mock token endpoint's answer.
const TokenResponse = `{"access_token":"` + AccessToken + `","refresh_token":"` + RefreshToken +
	`","token_type":"Bearer","expires_in":3600}`

// SpecUser is a SCIM user as section 2 of the interface describes it,
// as the service sends it (indented over several lines).
const SpecUser = `{
  "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
  "id": "2819c223-7f76-453a-919d-413861904646",
  "userName": "bjensen@example.com",
  "name": {"givenName": "Barbara", "familyName": "Jensen"},
  "emails": [{"primary": true, "value": "bjensen@example.com", "type": "work"}],
  "displayName": "Babs Jensen",
  "meta": {"resourceType": "User"},
  "active": true,
  "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"department": "Tour Operations"}
}`

// New returns a client on BaseURL whose requests go to its own mock
// transport, which already answers POST /oauth/token with TokenResponse.
// Retries are off (a wire test pins one exchange) and retry waits are a
// millisecond; opts come after these defaults, so a test about retries
// passes partner.WithMaxRetries.
func New(t testing.TB, opts ...partner.Option) (*partner.Client, *httpmock.MockTransport) {
	t.Helper()
	mt := httpmock.NewMockTransport()
	mt.RegisterResponder(http.MethodPost, BaseURL+"/oauth/token", httpmock.NewStringResponder(200, TokenResponse))
	c, err := partner.New(append([]partner.Option{
		partner.WithBaseURL(BaseURL),
		partner.WithClientCredentials("client", "secret"),
		partner.WithHTTPClient(&http.Client{Transport: mt}),
		partner.WithMaxRetries(0),
		partner.WithRetryWait(time.Millisecond, time.Millisecond),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c, mt
}

// JSONResponder answers status with body after checking the request: the
// bearer token is AccessToken, and the JSON body equals wantBody as a JSON
// value, sent as application/json ("" means the request has no body).
// The answer's Content-Type is application/json, the only one the
// gateway export shows (SCIM included).
func JSONResponder(t testing.TB, wantBody string, status int, body string) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		t.Helper()
		if got := req.Header.Get("Authorization"); got != "Bearer "+AccessToken {
			t.Errorf("%s %s: Authorization %q", req.Method, req.URL.Path, got)
		}
		var got []byte
		if req.Body != nil {
			got, _ = io.ReadAll(req.Body)
		}
		switch {
		case wantBody == "" && len(got) > 0:
			t.Errorf("%s %s: unexpected body %s", req.Method, req.URL.Path, got)
		case wantBody != "":
			if ct := req.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s %s: Content-Type %q", req.Method, req.URL.Path, ct)
			}
			JSONEqual(t, got, wantBody)
		}
		resp := httpmock.NewStringResponse(status, body)
		resp.Header.Set("Content-Type", "application/json")
		return resp, nil
	}
}

// JSONEqual fails t unless got and want are equal as JSON values (member
// order and spacing aside).
func JSONEqual(t testing.TB, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("the test's JSON %s: %v", want, err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("body is not JSON: %v\n%s", err, got)
		return
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON\n%s\nwant\n%s", got, want)
	}
}
