package scim_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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
	c, err := partner.New(partner.WithBaseURL(srv.URL), partner.WithInsecureHTTP(), partner.WithClientCredentials("id", "secret"))
	if err != nil {
		b.Fatal(err)
	}
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
	callBench(b, sdk, hand)
}

// callBench runs sdk and hand-written calls: each alone (allocations),
// then both interleaved in one loop, reporting each one's time and their
// ratio (sdk/hand), so that a noisy machine slows both alike.
func callBench(b *testing.B, sdk, hand func() error) {
	for _, w := range []struct {
		name string
		call func() error
	}{{"sdk", sdk}, {"hand-written", hand}} {
		b.Run(w.name, func(b *testing.B) {
			if err := w.call(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := w.call(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("interleaved", func(b *testing.B) {
		var ts, th time.Duration
		i := 0
		for b.Loop() {
			for j := range 2 {
				start := time.Now()
				var err error
				if (i+j)%2 == 0 {
					err = sdk()
					ts += time.Since(start)
				} else {
					err = hand()
					th += time.Since(start)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			i++
		}
		b.ReportMetric(float64(ts.Nanoseconds())/float64(i), "sdk-ns/call")
		b.ReportMetric(float64(th.Nanoseconds())/float64(i), "hand-ns/call")
		b.ReportMetric(float64(ts)/float64(th), "sdk/hand")
	})
}
