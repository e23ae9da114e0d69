package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/fake"
)

// TestEventsListenClosesSlowClients: a client that does not know the
// secret cannot hold a connection to the receiver of events listen, by
// trickling a body or by idling after its 401. Each connection must end
// (EOF) well before a generous deadline; the receiver's own timeouts are
// set small.
func TestEventsListenClosesSlowClients(t *testing.T) {
	t.Parallel()
	srv := fake.NewServer(fake.WithDemoData())
	defer srv.Close()
	_, stderr, stop := listening(t, newCLI(srv), "--events", "object.update", "--read-timeout", "200ms", "--idle-timeout", "200ms")
	subs := srv.Subscribers()
	u, err := url.Parse(subs[len(subs)-1].CallbackURL)
	if err != nil {
		t.Fatal(err)
	}
	forged := "/hooks/partner/not-the-secret"

	// untilEOF reads conn until the receiver closes it; the deadline is
	// only there so that a receiver that never does fails the test.
	untilEOF := func(what string, conn net.Conn, r io.Reader) {
		t.Helper()
		conn.SetReadDeadline(time.Now().Add(60 * time.Second))
		if _, err := io.Copy(io.Discard, r); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("%s: the receiver kept the connection open", what)
				return
			}
			t.Logf("%s: %v", what, err) // a reset is closed too
		}
	}

	trickle, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer trickle.Close()
	io.WriteString(trickle, "POST "+forged+" HTTP/1.1\r\nHost: "+u.Host+"\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"a\":")

	// The second connection runs its course while the first stalls.
	idle, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	io.WriteString(idle, "GET "+forged+" HTTP/1.1\r\nHost: "+u.Host+"\r\n\r\n")
	br := bufio.NewReader(idle)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Close {
		t.Fatalf("forged GET: %d (close %v), want a kept-alive 401", resp.StatusCode, resp.Close)
	}
	untilEOF("a body that stalls", trickle, trickle)
	untilEOF("a keep-alive connection idle after its 401", idle, br)

	if code := stop(); code != exitInterrupted || strings.Contains(stderr.String(), "panic") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestEventsListenLimitsMustBePositive(t *testing.T) {
	t.Parallel()
	c := &cli{env: map[string]string{}}
	for _, flag := range []string{"--read-timeout=0s", "--idle-timeout=-1s", "--max-connections=0"} {
		if r := c.run(t, "events", "listen", "--local", "--events", "object.update", flag); r.code != exitUsage {
			t.Errorf("%s: exit %d, want 2", flag, r.code)
		}
	}
}
