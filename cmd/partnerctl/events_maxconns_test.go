package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/partnerapi/partner-go/fake"
)

// TestEventsListenCapsConnections: with --max-connections 2, two clients
// that hold their connections (kept alive after a forged request's 401)
// leave a third client's request unserved, and that request is answered
// as soon as one of the two closes. "Unserved" is shown without a timing
// window: the receiver's server (seen through receiverConnState) has
// accepted exactly the two held connections while its accept loop is
// blocked waiting for a free slot of the connection cap
// (netutil's limitListener.acquire, found in the goroutine stacks), and
// the third request has been sent. It does not call t.Parallel: it sets
// the package's receiverConnState, and the goroutines it looks through
// must be those of its own receiver alone.
func TestEventsListenCapsConnections(t *testing.T) {
	var mu sync.Mutex
	var accepted []string // remote address of each connection the receiver accepted
	receiverConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			accepted = append(accepted, c.RemoteAddr().String())
			mu.Unlock()
		}
	}
	t.Cleanup(func() { receiverConnState = nil })
	acceptedNow := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(accepted)
	}

	srv := fake.NewServer(fake.WithDemoData())
	defer srv.Close()
	_, stderr, stop := listening(t, newCLI(srv), "--events", "object.update",
		"--max-connections", "2", "--read-timeout", "1h", "--idle-timeout", "1h")
	subs := srv.Subscribers()
	u, err := url.Parse(subs[len(subs)-1].CallbackURL)
	if err != nil {
		t.Fatal(err)
	}
	forged := "GET /hooks/partner/not-the-secret HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n"
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// answer reads the answer to the forged request, leaving the
	// connection open (kept alive).
	answer := func(what string, c net.Conn, br *bufio.Reader) {
		t.Helper()
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Close {
			t.Fatalf("%s: %d (close %v), want a kept-alive 401", what, resp.StatusCode, resp.Close)
		}
	}

	var held []net.Conn
	for i := range 2 {
		c := dial()
		io.WriteString(c, forged)
		answer("held connection", c, bufio.NewReader(c))
		held = append(held, c)
		if got := acceptedNow(); len(got) != i+1 || got[i] != c.LocalAddr().String() {
			t.Fatalf("accepted %v after connection %s", got, c.LocalAddr())
		}
	}

	extra := dial()
	if _, err := io.WriteString(extra, forged); err != nil {
		t.Fatal(err)
	}
	// Either the accept loop blocks on the cap, or (no cap) it accepts
	// the third connection: wait for whichever comes, then tell them apart.
	waitFor(t, func() bool { return len(acceptedNow()) > 2 || acceptBlockedOnCap() }, stderr)
	if got := acceptedNow(); len(got) != 2 {
		t.Fatalf("the receiver accepted %d connections (%v) with --max-connections 2 and two held", len(got), got)
	}

	held[0].Close()
	answer("the connection over the cap, once one closed", extra, bufio.NewReader(extra))
	if got := acceptedNow(); len(got) != 3 || got[2] != extra.LocalAddr().String() {
		t.Fatalf("accepted %v, want the two held then %s", got, extra.LocalAddr())
	}

	if code := stop(); code != exitInterrupted || strings.Contains(stderr.String(), "panic") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

// acceptBlockedOnCap reports whether a goroutine is blocked waiting for a
// free slot of a netutil.LimitListener, as the receiver's accept loop is
// when it holds --max-connections connections.
func acceptBlockedOnCap() bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		header, _, _ := bytes.Cut(g, []byte("\n"))
		if bytes.Contains(header, []byte("[select")) && bytes.Contains(g, []byte("netutil.(*limitListener).acquire")) {
			return true
		}
	}
	return false
}
