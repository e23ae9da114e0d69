package users_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/users"
)

// BenchmarkCheckAttribute: one CheckAttribute against a canned server
// over loopback, against the hand-written call (encoding/json for the
// body and the answer, net/http, the Authorization header): each alone
// for allocations, then interleaved in one loop for the time ratio
// (sdk/hand). The server's own allocations are in both figures.
func BenchmarkCheckAttribute(b *testing.B) {
	const answer = `{"email":"user@example.com","namespace":42,"filter_value":{"data":{"attribute":"role","value":["admin"]}}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/oauth/token":
			io.WriteString(w, `{"access_token":"at-1","refresh_token":"rt-1","token_type":"Bearer","expires_in":3600}`)
		case "/users/v1/check-attribute":
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, answer)
		default:
			http.Error(w, `{"error":"no"}`, 404)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c, err := partner.New(partner.WithBaseURL(srv.URL), partner.WithInsecureHTTP(), partner.WithClientCredentials("id", "secret"))
	if err != nil {
		b.Fatal(err)
	}
	p := users.CheckAttributeParams{Email: "user@example.com", Namespace: 42,
		FilterValue: users.Attribute{Name: "role", Values: []string{"admin", "viewer"}}}
	sdk := func() error {
		_, err := c.Users.CheckAttribute(ctx, p)
		return err
	}
	type attribute struct {
		Attribute string   `json:"attribute"`
		Value     []string `json:"value"`
	}
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	hand := func() error {
		body, err := json.Marshal(struct {
			Email       string    `json:"email"`
			Namespace   int64     `json:"namespace"`
			FilterValue attribute `json:"filter_value"`
		}{"user@example.com", 42, attribute{"role", []string{"admin", "viewer"}}})
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, "POST", srv.URL+"/users/v1/check-attribute", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer at-1")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var out struct {
			Email       string `json:"email"`
			Namespace   int64  `json:"namespace"`
			FilterValue struct {
				Data attribute `json:"data"`
			} `json:"filter_value"`
		}
		return json.NewDecoder(resp.Body).Decode(&out)
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
