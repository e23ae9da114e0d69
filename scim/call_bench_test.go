package scim_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	partner "github.com/partnerapi/partner-go"
)

// cannedServer answers the token endpoint and GET of one user with fixed
// bodies, so that a per-call benchmark measures the client, not a fake.
func cannedServer() *httptest.Server {
	user := []byte(strings.ReplaceAll(specUser, "\n", ""))
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/oauth/token":
			io.WriteString(w, `{"access_token":"at-1","refresh_token":"rt-1","token_type":"Bearer","expires_in":3600}`)
		case strings.HasPrefix(r.URL.Path, "/api/scim/v2/Users/") && r.Header.Get("Authorization") == "Bearer at-1":
			w.Header().Set("Content-Type", "application/scim+json")
			w.Write(user)
		default:
			http.Error(w, `{"error":"no"}`, 404)
		}
	}))
}

// BenchmarkGet: one SCIM.Get against a canned server over loopback,
// against the hand-written call (net/http, the Authorization header,
// encoding/json into a plain struct of the same members). Ratios of
// ns/op and allocs/op are the per-call overhead of the SDK; the server's
// own allocations (the same for both) are in both figures.
func BenchmarkGet(b *testing.B) {
	srv := cannedServer()
	defer srv.Close()
	ctx := context.Background()
	const id = "2819c223-7f76-453a-919d-413861904646"
	b.Run("sdk", func(b *testing.B) {
		c, err := partner.New(partner.WithBaseURL(srv.URL), partner.WithInsecureHTTP(), partner.WithClientCredentials("id", "secret"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.SCIM.Get(ctx, id); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.SCIM.Get(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hand-written", func(b *testing.B) {
		hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		get := func() error {
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
		if err := get(); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := get(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
