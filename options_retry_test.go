package partner_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)

// TestWithMaxRetryTime: a retry whose wait would end past the cap is not
// made; zero removes the cap, where a cap of zero would refuse every
// retry (even one the server asks for at once).
func TestWithMaxRetryTime(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cap        time.Duration
		retryAfter string
		requests   int
		ok         bool
	}{
		{500 * time.Millisecond, "1", 1, false}, // Retry-After 1s is past the cap
		{0, "0", 2, true},                       // no cap: the retry is made
	} {
		seen := &seenRequests{}
		c, srv := mocktest.FakeClient(t, []fake.Option{fake.WithMiddleware(seen.middleware)},
			partner.WithMaxRetryTime(tc.cap), partner.WithMaxRetryAfter(time.Minute))
		id, err := srv.AddUser(fake.User{UserName: "ada@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		srv.InjectFault(fake.Fault{Method: "GET", Path: "/api/scim/v2/Users/*", Status: 503, RetryAfter: tc.retryAfter, Times: 1})
		_, err = c.SCIM.Get(context.Background(), id)
		got := len(seen.to("GET", "/api/scim/v2/Users/"))
		if (err == nil) != tc.ok || got != tc.requests || !tc.ok && !partner.IsServerError(err) {
			t.Errorf("cap %v: err %v after %d requests, want ok=%v after %d", tc.cap, err, got, tc.ok, tc.requests)
		}
	}
}

// TestWithFormEncodedTokenRequests: the token request is posted
// form-encoded, and the fake grants it.
func TestWithFormEncodedTokenRequests(t *testing.T) {
	for _, form := range []bool{false, true} {
		seen := &seenRequests{}
		opts := []partner.Option{}
		if form {
			opts = append(opts, partner.WithFormEncodedTokenRequests())
		}
		c, _ := mocktest.FakeClient(t, []fake.Option{fake.WithMiddleware(seen.middleware)}, opts...)
		if _, err := c.OAuth.Token(context.Background()); err != nil {
			t.Fatalf("form %v: %v", form, err)
		}
		toks := seen.to(http.MethodPost, "/oauth/token")
		want := "application/json"
		if form {
			want = "application/x-www-form-urlencoded"
		}
		if len(toks) != 1 || !strings.HasPrefix(toks[0].Header.Get("Content-Type"), want) {
			t.Errorf("form %v: token requests %d, Content-Type %q, want %q", form, len(toks), toks[0].Header.Get("Content-Type"), want)
		}
	}
}
