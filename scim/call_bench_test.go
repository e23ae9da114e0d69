package scim_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)

// cannedUserServer answers GET /api/scim/v2/Users/{id} with the spec's
// user, to the bearer token at-1.
func cannedUserServer() *httptest.Server {
	user := []byte(strings.ReplaceAll(specUser, "\n", ""))
	return mocktest.CannedServer(func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasPrefix(r.URL.Path, "/api/scim/v2/Users/") || r.Header.Get("Authorization") != "Bearer at-1" {
			return false
		}
		w.Header().Set("Content-Type", "application/scim+json")
		w.Write(user)
		return true
	})
}

// BenchmarkGet: one SCIM.Get against a canned server over loopback,
// against the hand-written call (net/http, the Authorization header,
// encoding/json into a plain struct of the same members). Ratios of
// ns/op and allocs/op are the per-call overhead of the SDK; the server's
// own allocations (the same for both) are in both figures.
func BenchmarkGet(b *testing.B) {
	srv := cannedUserServer()
	defer srv.Close()
	ctx := context.Background()
	const id = "2819c223-7f76-453a-919d-413861904646"
	c := mocktest.LoopbackClient(b, srv)
	sdk := func() error {
		_, err := c.SCIM.Get(ctx, id)
		return err
	}
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	hand := func() error {
		req, err := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/scim/v2/Users/"+id, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer at-1")
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var u plainUser
		return json.NewDecoder(resp.Body).Decode(&u)
	}
	mocktest.CallBench(b, sdk, hand)
}
