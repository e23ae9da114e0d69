package partner_test

// Per-call options, response capture and the request id, against the
// fake through the contract middleware.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/scim"
)

// seenRequests records the method, path and headers of every request
// the fake gets (a fake middleware).
type seenRequests struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (s *seenRequests) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, &http.Request{Method: r.Method, URL: r.URL, Header: r.Header.Clone()})
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// to returns the requests sent to path (prefix) since the last reset.
func (s *seenRequests) to(method, prefix string) []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*http.Request
	for _, r := range s.reqs {
		if r.Method == method && strings.HasPrefix(r.URL.Path, prefix) {
			out = append(out, r)
		}
	}
	return out
}

func (s *seenRequests) reset() {
	s.mu.Lock()
	s.reqs = nil
	s.mu.Unlock()
}

// TestCallOptionsIterator: the options of an iterator's context reach
// every page request, each with its own request id; the capture holds
// the last page's answer; the fake (and the contract) accept the
// headers.
func TestCallOptionsIterator(t *testing.T) {
	seen := &seenRequests{}
	c, srv := mocktest.FakeClient(t, []fake.Option{fake.WithMiddleware(seen.middleware)})
	for i := range 5 {
		if _, err := srv.AddUser(fake.User{UserName: fmt.Sprintf("u%d@example.com", i)}); err != nil {
			t.Fatal(err)
		}
	}
	var info partner.ResponseInfo
	ctx := partner.WithCallOptions(context.Background(), partner.CallOptions{
		Header: http.Header{"X-Team": {"crm-sync"}}, Capture: &info, NoRetries: true,
	})
	var n int
	for _, err := range c.SCIM.List(ctx, scim.ListParams{Count: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	pages := seen.to("GET", "/api/scim/v2/Users")
	if n != 5 || len(pages) != 3 {
		t.Fatalf("%d users in %d page requests, want 5 in 3", n, len(pages))
	}
	ids := map[string]bool{}
	for _, r := range pages {
		ids[r.Header.Get("X-Request-Id")] = true
		if r.Header.Get("X-Team") != "crm-sync" {
			t.Errorf("page request without the call's header: %v", r.Header)
		}
	}
	if len(ids) != 3 || ids[""] {
		t.Errorf("request ids %v, want 3 different ones", ids)
	}
	last := pages[len(pages)-1].Header.Get("X-Request-Id")
	if info.StatusCode != http.StatusOK || info.RequestID != last || info.Attempts != 1 ||
		!strings.HasPrefix(info.Header.Get("Content-Type"), "application/") {
		t.Errorf("capture %+v, want the last page's answer (%s)", info, last)
	}
	// The token request is not the call's: it carries no X-Team.
	for _, r := range seen.to("POST", "/oauth/token") {
		if r.Header.Get("X-Team") != "" {
			t.Errorf("token request carries the call's header")
		}
	}
}

// TestCallOptionsOutcomeUnknownAgainstFake: a create answered 503 is not
// repeated whatever the call sets, says so, and carries the id the fake
// saw.
func TestCallOptionsOutcomeUnknownAgainstFake(t *testing.T) {
	seen := &seenRequests{}
	c, srv := mocktest.FakeClient(t, []fake.Option{fake.WithMiddleware(seen.middleware)},
		partner.WithRetryWait(time.Millisecond, time.Millisecond))
	srv.InjectFault(fake.Fault{Method: "POST", Path: "/api/scim/v2/Users", Status: 503})
	var info partner.ResponseInfo
	ctx := partner.WithCallOptions(context.Background(), partner.CallOptions{MaxRetries: 8, AttemptTimeout: time.Minute, Capture: &info})
	_, err := c.SCIM.Create(ctx, &scim.User{UserName: "grace@example.com"})
	creates := seen.to("POST", "/api/scim/v2/Users")
	if !partner.IsOutcomeUnknown(err) || len(creates) != 1 {
		t.Fatalf("err %v after %d creates, want outcome unknown after 1", err, len(creates))
	}
	var perr *partner.Error
	if !errors.As(err, &perr) || perr.RequestID == "" || perr.RequestID != creates[0].Header.Get("X-Request-Id") {
		t.Errorf("error's RequestID %q, the fake saw %q", perr.RequestID, creates[0].Header.Get("X-Request-Id"))
	}
	if info.StatusCode != 503 || info.RequestID != perr.RequestID {
		t.Errorf("capture %+v", info)
	}
	// A read under the same options is retried up to the call's count.
	srv.ClearFaults()
	seen.reset()
	srv.InjectFault(fake.Fault{Method: "GET", Path: "/api/scim/v2/Users", Status: 503})
	_, err = c.SCIM.FindByUserName(ctx, "grace@example.com")
	if got := len(seen.to("GET", "/api/scim/v2/Users")); !partner.IsServerError(err) || got != 9 || info.Attempts != 9 {
		t.Errorf("read: err %v after %d requests (capture %d attempts), want the 503 after 9", err, got, info.Attempts)
	}
}

// TestRequestIDOptions: the request id header's name is the client's
// choice, "" sends none; the span of a call carries the id.
func TestRequestIDOptions(t *testing.T) {
	te := newTelemetry(t)
	seen := &seenRequests{}
	c, srv := mocktest.FakeClient(t, []fake.Option{fake.WithMiddleware(seen.middleware)},
		append(te.opts(), partner.WithRequestIDHeader("X-Correlation-Id"))...)
	id, err := srv.AddUser(fake.User{UserName: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SCIM.Get(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	got := seen.to("GET", "/api/scim/v2/Users/")
	if len(got) != 1 || got[0].Header.Get("X-Correlation-Id") == "" || got[0].Header.Get("X-Request-Id") != "" {
		t.Fatalf("requests %v", got)
	}
	wantAttrs(t, te.one(t, "partner.scim.Get"), "partner.request_id", got[0].Header.Get("X-Correlation-Id"))

	seen.reset()
	c, _ = mocktest.FakeClient(t, []fake.Option{fake.WithMiddleware(seen.middleware)}, partner.WithRequestIDHeader(""))
	_, err = c.SCIM.Get(context.Background(), "missing")
	var perr *partner.Error
	if !errors.As(err, &perr) {
		t.Fatalf("err %v, want an *Error", err)
	}
	if r := seen.to("GET", "/api/scim/v2/Users/"); len(r) != 1 || r[0].Header.Get("X-Request-Id") != "" || perr.RequestID != "" {
		t.Errorf("WithRequestIDHeader(\"\") sent %v, error's id %q", r, perr.RequestID)
	}
	if _, err := partner.New(partner.WithBaseURL("https://api.example.com"), partner.WithClientCredentials("a", "b"),
		partner.WithRequestIDHeader("bad header")); err == nil {
		t.Error("a malformed header name was accepted")
	}
}
