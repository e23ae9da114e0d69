package oauth

// The token cache: one token, fetched again shortly before it expires by
// one caller at a time, and kept while it is valid when a fetch fails.
// It serves the client's own grants and a WithTokenSource source alike;
// only the fetch and the time of the early refresh differ.

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/partnerapi/partner-go/internal/errs"
)

// refreshRetry spaces the fetches after one that failed while the cached
// token was still valid (or half the time left, if less).
const refreshRetry = 30 * time.Second

// never is the refresh time of a token without an expiry.
var never = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// tokenCache holds a client's token. Token returns it while it is fresh;
// past its refresh time one caller fetches a new one while the others
// keep using the cached token, or wait for the fetch (each under its own
// context) once it has expired. When the fetch fails while the cached
// token is still valid, callers get the cached token, the failure is
// logged (warn) and the next fetch waits refreshRetry, or half the time
// left if less.
type tokenCache struct {
	// fetch gets a new token; held is the cached token (nil or expired
	// ones included), whose refresh token it may use.
	fetch func(ctx context.Context, held *oauth2.Token) (*oauth2.Token, error)
	// refreshAt is the time to fetch again after tok, fetched at now.
	refreshAt func(tok *oauth2.Token, now time.Time) time.Time
	// discard gets rid of a token fetched after close (may be nil).
	discard func(ctx context.Context, tok *oauth2.Token)
	// warn logs a failed fetch while the cached token, valid until
	// expiry, stays in use.
	warn func(ctx context.Context, expiry time.Time, err error)
	now  func() time.Time
	// testHookWait, when set (by tests, before any use), is called each
	// time a caller starts to wait for another caller's fetch.
	testHookWait func()

	mu     sync.Mutex
	tok    *oauth2.Token
	next   time.Time // the time to fetch again while tok is valid
	flight *flight   // the fetch in progress, if any
	closed bool
}

// flight is one fetch, awaited by the callers that need its token.
type flight struct {
	done chan struct{}
	tok  *oauth2.Token
	err  error
}

// valid reports whether tok can be sent at now.
func valid(tok *oauth2.Token, now time.Time) bool {
	return tok != nil && tok.AccessToken != "" && (tok.Expiry.IsZero() || now.Before(tok.Expiry))
}

// token returns the cached token, fetching a new one when it is due.
func (c *tokenCache) token(ctx context.Context) (*oauth2.Token, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, errs.Wrap(err, "getting a token")
		}
		held, f, lead, err := c.check()
		switch {
		case err != nil:
			return nil, err
		case f == nil:
			return held, nil
		case lead:
			return c.lead(ctx, f, held)
		}
		if c.testHookWait != nil {
			c.testHookWait()
		}
		select {
		case <-ctx.Done():
			return nil, errs.Wrap(ctx.Err(), "getting a token")
		case <-f.done:
		}
		// The leader's own context may have ended its fetch, or the
		// fetch panicked; a waiter whose context is alive tries again
		// rather than inherit that.
		if f.err != errAbandoned && !errors.Is(f.err, context.Canceled) && !errors.Is(f.err, context.DeadlineExceeded) {
			return f.tok, f.err
		}
	}
}

// check returns the token to use at once (f nil), or the flight to wait
// for, which the caller leads (fetches) when lead is set.
func (c *tokenCache) check() (held *oauth2.Token, f *flight, lead bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, false, ErrClosed
	}
	now := c.now()
	held = c.tok
	usable := valid(held, now)
	switch {
	case usable && now.Before(c.next):
		return held, nil, false, nil
	case c.flight != nil && usable:
		return held, nil, false, nil // another caller fetches
	case c.flight != nil:
		return nil, c.flight, false, nil
	}
	c.flight = &flight{done: make(chan struct{})}
	return held, c.flight, true, nil
}

// errAbandoned is the result of a flight whose leader panicked before
// settling it; its waiters try again.
var errAbandoned = errors.New("oauth: the token fetch did not return")

// lead fetches for flight f and settles the cache. When it panics before
// waking the waiters (in the fetch, or in the warning's logger), it
// clears the flight and wakes them, and the panic goes on.
func (c *tokenCache) lead(ctx context.Context, f *flight, held *oauth2.Token) (*oauth2.Token, error) {
	settled := false
	defer func() {
		if settled {
			return
		}
		c.mu.Lock()
		if c.flight == f {
			c.flight = nil
		}
		c.mu.Unlock()
		f.err = errAbandoned
		close(f.done)
	}()
	tok, err := c.fetch(ctx, held)
	c.mu.Lock()
	c.flight = nil
	closed := c.closed
	now := c.now()
	// A failed fetch keeps the cached token when it is still the one the
	// fetch started from (no 401 dropped it) and has not expired.
	keep := err != nil && !closed && c.tok == held && valid(held, now)
	switch {
	case err == nil && !closed:
		c.tok, c.next = tok, c.refreshAt(tok, now)
	case keep && ctx.Err() == nil:
		c.next = now.Add(min(refreshRetry, held.Expiry.Sub(now)/2))
	}
	c.mu.Unlock()
	switch {
	case err == nil && closed:
		// Close ran while the token was being fetched: nobody may use it.
		if c.discard != nil {
			c.discard(ctx, tok)
		}
		tok, err = nil, ErrClosed
	case keep:
		c.warn(ctx, held.Expiry, err)
		tok, err = held, nil
	}
	f.tok, f.err = tok, err
	settled = true
	close(f.done)
	return tok, err
}

// invalidate drops tok when it is the cached token (any cached token when
// tok is nil). The refresh token stays: it may still get a new token.
func (c *tokenCache) invalidate(tok *oauth2.Token) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tok != nil && (tok == nil || c.tok.AccessToken == tok.AccessToken) {
		c.tok = &oauth2.Token{RefreshToken: c.tok.RefreshToken}
		c.next = time.Time{}
	}
}

// close makes token return ErrClosed from now on and returns the cached
// token; first is false when the cache was closed already.
func (c *tokenCache) close() (tok *oauth2.Token, first bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, false
	}
	c.closed = true
	tok, c.tok = c.tok, nil
	return tok, true
}
