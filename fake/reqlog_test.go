package fake

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/deployment"
)

// TestRequestLoggedBeforeAnswer pins that a request is in the log by the
// time its answer reaches the client, so a test can count right after a
// call: for answers the server sends when the handler returns, and for
// answers of a known length sent as they are written, which the client
// can read to their end before the handler returns (a dribbled answer
// here, as report pages are sent).
func TestRequestLoggedBeforeAnswer(t *testing.T) {
	t.Parallel()
	srv := NewServer()
	defer srv.Close()
	for i := range 300 {
		if i == 200 {
			srv.InjectFault(Fault{Method: "POST", Path: "/oauth/token", Dribble: time.Nanosecond})
		}
		resp, err := http.Post(srv.URL+"/oauth/token", "application/json", strings.NewReader(`{"grant_type":"client_credentials","client_id":"partner-test-client","client_secret":"partner-test-secret"}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body) // read to the end, so that the connection is reused
		resp.Body.Close()
		if n := srv.CountRequests("POST", "/oauth/token"); n != i+1 {
			t.Fatalf("after %d requests the log holds %d", i+1, n)
		}
	}
}

// TestTokenEnvironmentQuery: a token request may name the environment as
// a query parameter of the environment header's name, as the deployed
// service's connector sends it; the fake accepts it and logs it as the
// request's environment, unmasked (it is not a secret). The header wins
// when both are sent; other routes read only the header.
func TestTokenEnvironmentQuery(t *testing.T) {
	srv := NewServer(WithWords(deployment.Words{EnvHeader: "x-acme-env"}))
	defer srv.Close()
	post := func(query, header string) {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+"/oauth/token"+query, strings.NewReader(
			`{"grant_type":"client_credentials","client_id":"partner-test-client","client_secret":"partner-test-secret"}`))
		req.Header.Set("Content-Type", "application/json")
		if header != "" {
			req.Header.Set("x-acme-env", header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("token request %s: %d", query, resp.StatusCode)
		}
	}
	post("?x-acme-env=sandbox.example.com", "")
	post("?x-acme-env=from-query", "from-header")
	resp, err := http.Get(srv.URL + "/event/v1/subscriber?x-acme-env=ignored")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[0].Env != "sandbox.example.com" || reqs[0].Query != "x-acme-env=sandbox.example.com" ||
		reqs[1].Env != "from-header" || reqs[2].Env != "" {
		t.Fatalf("logged %+v", reqs)
	}
}
