package redistest_test

import (
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/partnerapi/partner-go/events/redisdedup/redistest"
)

// TestServer: the server answers, Restart brings it back empty on the
// same address (and the client reaches it there), and after Stop nothing
// answers there. The client does not retry: a command to an address
// that closes each connection at once makes one connection, not four.
func TestServer(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	c := rs.Client()
	if err := c.Set(t.Context(), "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET on %s: %v", rs.Addr, err)
	}
	rs.Restart()
	if n, err := c.Exists(t.Context(), "k").Result(); err != nil || n != 0 {
		t.Errorf("after Restart: EXISTS k = %d, %v; want 0 (persistence off)", n, err)
	}
	rs.Stop()
	if err := c.Ping(t.Context()).Err(); err == nil {
		t.Errorf("PING answered after Stop")
	}
	if o := c.Options(); o.DialerRetries != 1 {
		t.Errorf("the client dials %d times, want once", o.DialerRetries)
	}

	// The stopped server's port, taken by a listener that closes each
	// connection it accepts.
	ln, err := net.Listen("tcp", rs.Addr)
	if err != nil {
		t.Fatalf("listening on the stopped server's address: %v", err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 10)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{} // before the client sees the close
			conn.Close()
		}
	}()
	if err := c.Ping(t.Context()).Err(); err == nil {
		t.Fatalf("PING answered by a listener that closes each connection")
	}
	ln.Close()
	if n := len(accepted); n != 1 {
		t.Errorf("one PING made %d connections, want 1 (the client retried)", n)
	}
}

// recorder is a testing.TB that keeps a Skip or a Fatal instead of
// ending its test, for the test of Start's rule without redis-server.
type recorder struct {
	testing.TB
	mu             sync.Mutex
	skipped, fatal string
}

func (r *recorder) Helper() {}

func (r *recorder) Skip(args ...any) {
	r.mu.Lock()
	r.skipped = fmt.Sprint(args...)
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.fatal = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

// start runs Start on r in a goroutine of its own (Skip and Fatalf end
// it) and returns once it has.
func start(r *recorder) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		redistest.Start(r)
	}()
	<-done
}

// TestStartWithoutRedisServer: without redis-server on PATH a test is
// skipped, saying what to install; with PARTNER_REQUIRE_REDIS=1 it fails
// instead.
func TestStartWithoutRedisServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv(redistest.RequireEnv, "")
	r := &recorder{TB: t}
	start(r)
	if !strings.Contains(r.skipped, "redis-server is not on PATH") || r.fatal != "" {
		t.Errorf("without redis-server: skipped %q, failed %q; want a skip", r.skipped, r.fatal)
	}
	t.Setenv(redistest.RequireEnv, "1")
	r = &recorder{TB: t}
	start(r)
	if !strings.Contains(r.fatal, "PARTNER_REQUIRE_REDIS=1 requires") || r.skipped != "" {
		t.Errorf("with %s=1: skipped %q, failed %q; want a failure", redistest.RequireEnv, r.skipped, r.fatal)
	}
}
