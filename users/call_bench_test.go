package users_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/users"
)

// BenchmarkCheckAttribute: one CheckAttribute against a canned server
// over loopback, against the hand-written call (encoding/json for the
// body and the answer, net/http, the Authorization header): each alone
// for allocations, then interleaved in one loop for the time ratio
// (sdk/hand). The server's own allocations are in both figures.
func BenchmarkCheckAttribute(b *testing.B) {
	const answer = `{"email":"user@example.com","namespace":42,"filter_value":{"data":{"attribute":"role","value":["admin"]}}}`
	srv := mocktest.CannedServer(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/users/v1/check-attribute" {
			return false
		}
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, answer)
		return true
	})
	defer srv.Close()
	ctx := context.Background()
	c := mocktest.LoopbackClient(b, srv)
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
	mocktest.CallBench(b, sdk, hand)
}
