package oauth_test

// Tests of a service whose tokens come from an external oauth2.TokenSource
// (oauth.Options.TokenSource, partner.WithTokenSource): caching, failures kept
// apart from a valid token, and waiters.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/oauth2"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/oauth"
)

// countingSource returns ext-1, ext-2, ... valid for an hour.
type countingSource struct {
	mu sync.Mutex
	n  int
}

func (c *countingSource) Token() (*oauth2.Token, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return &oauth2.Token{AccessToken: fmt.Sprintf("ext-%d", c.n), Expiry: time.Now().Add(time.Hour)}, nil
}

func TestExternal(t *testing.T) {
	cs := &countingSource{}
	src := oauth.New(nil, oauth.Options{TokenSource: cs})
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if tok, err := src.Token(ctx); err != nil || tok.AccessToken != "ext-1" {
				t.Errorf("Token: %v %v", tok, err)
			}
		})
	}
	wg.Wait()
	if cs.n != 1 {
		t.Fatalf("source asked %d times, want 1", cs.n)
	}
	src.Invalidate(&oauth2.Token{AccessToken: "stale"})
	if tok, _ := src.Token(ctx); tok.AccessToken != "ext-1" {
		t.Fatal("invalidating another token dropped the cached one")
	}
	src.Invalidate(&oauth2.Token{AccessToken: "ext-1"})
	if tok, _ := src.Token(ctx); tok.AccessToken != "ext-2" {
		t.Fatalf("after Invalidate got %s, want ext-2", tok.AccessToken)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := src.Token(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("External with a cancelled context: %v", err)
	}
}

// flakySource returns ext-1, ext-2, ... valid for life from now(), or
// err when it is set; it counts the calls.
type flakySource struct {
	mu   sync.Mutex
	now  func() time.Time
	life time.Duration
	err  error
	n    int
}

func (f *flakySource) Token() (*oauth2.Token, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if f.err != nil {
		return nil, f.err
	}
	return &oauth2.Token{AccessToken: fmt.Sprintf("ext-%d", f.n), Expiry: f.now().Add(f.life)}, nil
}

func (f *flakySource) set(err error) (calls int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
	return f.n
}

// TestExternalFailureKeepsToken: on a WithTokenSource client, a source
// that fails while the cached token is within oauth2's 10s margin but not
// expired leaves callers with the cached token (logged, without the
// token), and is asked again only after the spacing; a token refused with
// a 401 or expired makes Token fail.
func TestExternalFailureKeepsToken(t *testing.T) {
	clk := fake.NewManualClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	fs := &flakySource{now: clk.Now, life: time.Minute}
	var logs bytes.Buffer
	u, _ := url.Parse("http://127.0.0.1:1")
	tr := core.New(core.Config{BaseURL: u, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	src := oauth.NewWithClock(tr, oauth.Options{TokenSource: fs}, clk.Now)
	ctx := context.Background()
	t1, err := src.Token(ctx)
	if err != nil || t1.AccessToken != "ext-1" {
		t.Fatalf("first Token: %v %v", t1, err)
	}
	boom := errors.New("identity provider unavailable")
	fs.set(boom)
	clk.Advance(52 * time.Second) // 8s left: within the margin
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if tok, err := src.Token(ctx); err != nil || tok.AccessToken != "ext-1" {
				t.Errorf("Token while the source fails: %v %v", tok, err)
			}
		})
	}
	wg.Wait()
	if n := fs.set(boom); n != 2 {
		t.Fatalf("source asked %d times, want 2 (the failure is not asked again at once)", n)
	}
	if !strings.Contains(logs.String(), "early token refresh failed") || !strings.Contains(logs.String(), boom.Error()) || strings.Contains(logs.String(), "ext-1") {
		t.Fatalf("log = %q, want the failure without the token", logs.String())
	}
	clk.Advance(3 * time.Second) // spaced by half the 8s left
	if tok, err := src.Token(ctx); err != nil || tok.AccessToken != "ext-1" || fs.set(boom) != 2 {
		t.Fatalf("Token 3s after the failure: %v %v, source asked %d times", tok, err, fs.set(boom))
	}
	clk.Advance(2 * time.Second) // 3s left: asked again, fails again, kept
	if tok, err := src.Token(ctx); err != nil || tok.AccessToken != "ext-1" || fs.set(boom) != 3 {
		t.Fatalf("Token after the spacing: %v %v, source asked %d times", tok, err, fs.set(boom))
	}
	clk.Advance(4 * time.Second) // expired
	if _, err := src.Token(ctx); !errors.Is(err, boom) {
		t.Fatalf("Token once expired: %v, want the source's error", err)
	}
	fs.set(nil)
	t2, err := src.Token(ctx)
	if err != nil || t2.AccessToken == "ext-1" {
		t.Fatalf("Token once the source is back: %v %v", t2, err)
	}
	// A token the service refused is not kept, even if not expired.
	fs.set(boom)
	src.Invalidate(t2)
	if _, err := src.Token(ctx); !errors.Is(err, boom) {
		t.Fatalf("Token after a 401 while the source fails: %v, want the source's error", err)
	}
}

// gatedSource returns gated-1, gated-2, ... valid for a minute from now();
// from its second call on it signals entered and waits for release.
type gatedSource struct {
	now              func() time.Time
	n                atomic.Int32
	entered, release chan struct{}
}

func (g *gatedSource) Token() (*oauth2.Token, error) {
	n := g.n.Add(1)
	if n > 1 {
		g.entered <- struct{}{}
		<-g.release
	}
	return &oauth2.Token{AccessToken: fmt.Sprintf("gated-%d", n), Expiry: g.now().Add(time.Minute)}, nil
}

// TestExternalOthersUseTokenWhileOneAsks: while one caller asks the source
// for a new token (the cached one is within oauth2's margin), the others
// get the cached token at once rather than wait; once it has expired they
// wait for the new one.
func TestExternalOthersUseTokenWhileOneAsks(t *testing.T) {
	defer goleak.VerifyNone(t)
	clk := fake.NewManualClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	gs := &gatedSource{now: clk.Now, entered: make(chan struct{}), release: make(chan struct{})}
	src := oauth.NewWithClock(nil, oauth.Options{TokenSource: gs}, clk.Now)
	ctx := context.Background()
	if tok, err := src.Token(ctx); err != nil || tok.AccessToken != "gated-1" {
		t.Fatalf("first Token: %v %v", tok, err)
	}
	clk.Advance(55 * time.Second) // 5s left: within the margin
	first := make(chan error, 1)
	go func() { _, err := src.Token(ctx); first <- err }()
	<-gs.entered // the first caller is at the source
	done := make(chan string, 1)
	go func() {
		tok, err := src.Token(ctx)
		if err != nil {
			done <- err.Error()
			return
		}
		done <- tok.AccessToken
	}()
	select {
	case got := <-done:
		if got != "gated-1" {
			t.Fatalf("second caller got %s, want the cached gated-1", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("second caller waited for the source although the cached token is valid")
	}
	close(gs.release)
	if err := wait(t, first); err != nil {
		t.Fatal(err)
	}
	if tok, _ := src.Token(ctx); tok.AccessToken != "gated-2" {
		t.Fatalf("after the fetch: %s, want gated-2", tok.AccessToken)
	}
}

// blockingSource blocks in Token until release is closed.
type blockingSource struct {
	entered chan struct{}
	release chan struct{}
}

func (b *blockingSource) Token() (*oauth2.Token, error) {
	close(b.entered)
	<-b.release
	return &oauth2.Token{AccessToken: "slow", Expiry: time.Now().Add(time.Hour)}, nil
}

func TestExternalWaiterCancelled(t *testing.T) {
	defer goleak.VerifyNone(t)
	bs := &blockingSource{entered: make(chan struct{}), release: make(chan struct{})}
	src := oauth.New(nil, oauth.Options{TokenSource: bs})
	first := make(chan error, 1)
	go func() { _, err := src.Token(context.Background()); first <- err }()
	<-bs.entered
	ctx, cancel := context.WithCancel(context.Background())
	waiter := make(chan error, 1)
	go func() { _, err := src.Token(ctx); waiter <- err }()
	cancel()
	if err := wait(t, waiter); !errors.Is(err, context.Canceled) {
		t.Fatalf("waiter: %v", err)
	}
	close(bs.release)
	if err := wait(t, first); err != nil {
		t.Fatal(err)
	}
}

// panicOnceSource panics on its first call, once release is closed (it
// signals entered first), and returns ok-2, ok-3, ... from then on.
type panicOnceSource struct {
	n                atomic.Int32
	entered, release chan struct{}
}

func (p *panicOnceSource) Token() (*oauth2.Token, error) {
	n := p.n.Add(1)
	if n == 1 {
		close(p.entered)
		<-p.release
		panic("token source broke")
	}
	return &oauth2.Token{AccessToken: fmt.Sprintf("ok-%d", n), Expiry: time.Now().Add(time.Hour)}, nil
}

// TestExternalSourcePanics: when the source panics (as it may under a
// server that recovers panics), the caller that asked it sees the panic,
// a caller that was waiting for that fetch asks the source again and gets
// a token, and later calls work.
func TestExternalSourcePanics(t *testing.T) {
	defer goleak.VerifyNone(t)
	ps := &panicOnceSource{entered: make(chan struct{}), release: make(chan struct{})}
	src := oauth.New(nil, oauth.Options{TokenSource: ps})
	waiting := make(chan struct{}, 10)
	oauth.OnWait(src, func() { waiting <- struct{}{} })
	// The deadlines only bound a failing run: a waiter never woken
	// returns when its deadline passes instead of hanging the test.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		tok, err := src.Token(ctx)
		t.Errorf("caller A: Token returned %v, %v; want a panic", tok, err)
	}()
	<-ps.entered // A is at the source
	type result struct {
		tok *oauth2.Token
		err error
	}
	b := make(chan result, 1)
	go func() {
		tok, err := src.Token(ctx)
		b <- result{tok, err}
	}()
	<-waiting // B waits for A's fetch
	close(ps.release)
	if got := <-panicked; got != "token source broke" {
		t.Fatalf("caller A recovered %v, want the source's panic", got)
	}
	if r := <-b; r.err != nil || r.tok.AccessToken != "ok-2" {
		t.Fatalf("caller B waiting on the fetch that panicked: %v %v, want ok-2", r.tok, r.err)
	}
	if tok, err := src.Token(ctx); err != nil || tok.AccessToken != "ok-2" {
		t.Fatalf("later call: %v %v, want the cached ok-2", tok, err)
	}
	if n := ps.n.Load(); n != 2 {
		t.Fatalf("source asked %d times, want 2", n)
	}
}

// TestExternalSourcePanicsThenNewCaller: a caller that starts after the
// source panicked (nobody waiting) gets a token.
func TestExternalSourcePanicsThenNewCaller(t *testing.T) {
	defer goleak.VerifyNone(t)
	ps := &panicOnceSource{entered: make(chan struct{}), release: make(chan struct{})}
	close(ps.release)
	src := oauth.New(nil, oauth.Options{TokenSource: ps})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	func() {
		defer func() {
			if got := recover(); got != "token source broke" {
				t.Fatalf("first call recovered %v, want the source's panic", got)
			}
		}()
		tok, err := src.Token(ctx)
		t.Errorf("first call returned %v, %v; want a panic", tok, err)
	}()
	if tok, err := src.Token(ctx); err != nil || tok.AccessToken != "ok-2" {
		t.Fatalf("call after the panic: %v %v, want ok-2", tok, err)
	}
}

// nilSource returns neither a token nor an error on its first call, and
// ok-2, ok-3, ... from then on.
type nilSource struct{ n atomic.Int32 }

func (s *nilSource) Token() (*oauth2.Token, error) {
	if n := s.n.Add(1); n > 1 {
		return &oauth2.Token{AccessToken: fmt.Sprintf("ok-%d", n), Expiry: time.Now().Add(time.Hour)}, nil
	}
	return nil, nil
}

// TestExternalSourceNoToken: a source that returns neither a token nor an
// error makes Token fail saying so; the next call asks it again.
func TestExternalSourceNoToken(t *testing.T) {
	src := oauth.New(nil, oauth.Options{TokenSource: &nilSource{}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	first := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				first <- fmt.Errorf("panicked: %v", p)
			}
		}()
		_, err := src.Token(ctx)
		first <- err
	}()
	if err := wait(t, first); err == nil || !strings.Contains(err.Error(), "neither a token nor an error") {
		t.Fatalf("source without a token: %v, want an error saying so", err)
	}
	if tok, err := src.Token(ctx); err != nil || tok.AccessToken != "ok-2" {
		t.Fatalf("next call: %v %v, want ok-2", tok, err)
	}
}
