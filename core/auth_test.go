package core

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/jarcoal/httpmock"
	"golang.org/x/oauth2"
)

// stubTokens hands out its current token and records invalidations.
type stubTokens struct {
	mu          sync.Mutex
	current     string
	invalidated []string
	next        string // the token after an invalidation
}

func (s *stubTokens) Token(context.Context) (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &oauth2.Token{AccessToken: s.current}, nil
}

func (s *stubTokens) Invalidate(tok *oauth2.Token) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.invalidated = append(s.invalidated, tok.AccessToken)
	if tok.AccessToken == s.current {
		s.current = s.next
	}
}

func (s *stubTokens) set(tok string) {
	s.mu.Lock()
	s.current = tok
	s.mu.Unlock()
}

// TestRetrySignedWithCurrentToken: a retry carries the token the source
// holds when it is sent, not the one of the first attempt.
func TestRetrySignedWithCurrentToken(t *testing.T) {
	ts := &stubTokens{current: "tok-1"}
	c, mt := newMockClient(t, func(cfg *Config) { cfg.Tokens = ts })
	var auths []string
	mt.RegisterResponder("GET", base+"/r", func(req *http.Request) (*http.Response, error) {
		auths = append(auths, req.Header.Get("Authorization"))
		if len(auths) == 1 {
			ts.set("tok-2") // refreshed by another call meanwhile
			return httpmock.NewStringResponse(503, `{}`), nil
		}
		return httpmock.NewStringResponse(200, `{}`), nil
	})
	if err := c.Do(context.Background(), &Request{Method: "GET", Path: "/r"}, nil); err != nil {
		t.Fatal(err)
	}
	if len(auths) != 2 || auths[0] != "Bearer tok-1" || auths[1] != "Bearer tok-2" {
		t.Fatalf("authorizations %v, want tok-1 then tok-2", auths)
	}
}

// TestUnauthorizedRepeatOnTopOfRetries: with retries off, a 401 still
// drops the token and repeats the request once with a new one; a second
// 401 ends the call.
func TestUnauthorizedRepeatOnTopOfRetries(t *testing.T) {
	ts := &stubTokens{current: "tok-1", next: "tok-2"}
	c, mt := newMockClient(t, func(cfg *Config) { cfg.Tokens = ts; cfg.Retry.NoRetries = true })
	var auths []string
	mt.RegisterResponder("POST", base+"/w", func(req *http.Request) (*http.Response, error) {
		auths = append(auths, req.Header.Get("Authorization"))
		return httpmock.NewStringResponse(401, `{}`), nil
	})
	err := c.Do(context.Background(), &Request{Method: "POST", Path: "/w", JSON: map[string]int{"a": 1}}, nil)
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != 401 || e.OutcomeUnknown {
		t.Fatalf("err = %v, want the 401, not marked outcome unknown", err)
	}
	if len(auths) != 2 || auths[0] != "Bearer tok-1" || auths[1] != "Bearer tok-2" {
		t.Fatalf("authorizations %v, want tok-1 then tok-2", auths)
	}
	if len(ts.invalidated) != 2 || ts.invalidated[0] != "tok-1" || ts.invalidated[1] != "tok-2" {
		t.Fatalf("invalidated %v, want both refused tokens", ts.invalidated)
	}
}
