package fake

import (
	"net/http"
	"strings"
	"testing"
)

// TestRequestLoggedBeforeAnswer pins that a request is in the log by the
// time its answer reaches the client, so a test can count right after a call.
func TestRequestLoggedBeforeAnswer(t *testing.T) {
	srv := NewServer()
	defer srv.Close()
	for i := 0; i < 300; i++ {
		resp, err := http.Post(srv.URL+"/oauth/token", "application/json", strings.NewReader(`{"grant_type":"client_credentials","client_id":"partner-test-client","client_secret":"partner-test-secret"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if n := srv.CountRequests("POST", "/oauth/token"); n != i+1 {
			t.Fatalf("after %d requests the log holds %d", i+1, n)
		}
	}
}
