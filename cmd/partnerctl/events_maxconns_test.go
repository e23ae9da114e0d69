package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/testkit/flood"
)

// TestEventsListenDeliversUnderFlood is the case: a client that
// does not know the secret holds all --max-connections (the default,
// 256) connections of the receiver idle after a 401, and more that send
// nothing wait behind them; a delivery from the service is still
// delivered on its first attempt, which has the time the receiver gives
// a request's headers. The receiver's timeouts are an hour, so no held
// connection is freed by time while the test runs.
func TestEventsListenDeliversUnderFlood(t *testing.T) {
	t.Parallel()
	attempt := events.NewServer(nil).ReadHeaderTimeout
	srv := newFake(t, fake.WithDemoData(), fake.WithDeliveryPolicy(fake.DeliveryPolicy{Attempts: 1, Timeout: attempt}))
	defer srv.Close()
	stdout, stderr, stop := listening(t, newCLI(srv), "--events", "object.update", "--integration", demo.OpportunityIntegration,
		"--read-timeout", "1h", "--idle-timeout", "1h")
	subs := srv.Subscribers()
	u, err := url.Parse(subs[len(subs)-1].CallbackURL)
	if err != nil {
		t.Fatal(err)
	}
	flood.Hold(t, u.Host, "/hooks/partner/object.update/not-the-secret-at-all", events.DefaultMaxConns, 64)

	srv.UpdateObject(demo.Opportunity2, map[string]any{"stage": "flooded"})
	if err := srv.WaitDeliveries(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ds := srv.Deliveries(); len(ds) != 1 || !ds[0].Delivered || ds[0].Attempt != 1 {
		t.Fatalf("the service's attempts: %+v, want one, delivered", ds)
	}
	// The receiver answered once its loop took the delivery; printing
	// it follows.
	waitFor(t, func() bool { return strings.Contains(stdout.String(), `"stage":"flooded"`) }, stderr)
	if code := stop(); code != exitInterrupted || strings.Contains(stderr.String(), "panic") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestEventsListenCapsConnections: with --max-connections 2, two clients
// that hold their connections (kept alive after a forged request's 401)
// do not keep a third client out: its request is answered, and the
// one held idle is closed to make room, while the other stays open.
func TestEventsListenCapsConnections(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData())
	defer srv.Close()
	_, stderr, stop := listening(t, newCLI(srv), "--events", "object.update",
		"--max-connections", "2", "--read-timeout", "1h", "--idle-timeout", "1h")
	subs := srv.Subscribers()
	u, err := url.Parse(subs[len(subs)-1].CallbackURL)
	if err != nil {
		t.Fatal(err)
	}
	forged := "GET /hooks/partner/not-the-secret HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n"
	type held struct {
		c  net.Conn
		br *bufio.Reader
	}
	dial := func() held {
		t.Helper()
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return held{c, bufio.NewReader(c)}
	}
	// ask sends the forged request and reads its answer, leaving the
	// connection open (kept alive).
	ask := func(what string, h held) {
		t.Helper()
		if _, err := io.WriteString(h.c, forged); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		resp, err := http.ReadResponse(h.br, nil)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Close {
			t.Fatalf("%s: %d (close %v), want a kept-alive 401", what, resp.StatusCode, resp.Close)
		}
	}

	first, second := dial(), dial()
	ask("first held connection", first)
	ask("second held connection", second)
	ask("a third connection, over the cap", dial())
	// One idle connection was closed for the third: reading it ends. It
	// is the oldest of those the receiver had seen go idle when the third
	// arrived, which depends on when the server marked each idle, not on
	// the order the test read their answers: whichever it was, the other
	// stays open and answers a request again. The deadlines only fail a
	// receiver that closes neither or answers nothing.
	type read struct {
		h   held
		n   int
		err error
	}
	reads := make(chan read, 2)
	for _, h := range []held{first, second} {
		h.c.SetReadDeadline(time.Now().Add(time.Minute))
		go func() {
			n, err := h.br.Read(make([]byte, 1))
			reads <- read{h, n, err}
		}()
	}
	r := <-reads
	if r.n != 0 || r.err == nil || errors.Is(r.err, os.ErrDeadlineExceeded) {
		t.Fatalf("a held connection: read %d bytes, %v; want one of them closed for the third", r.n, r.err)
	}
	other := first
	if r.h.c == first.c {
		other = second
	}
	if _, err := io.WriteString(other.c, forged); err != nil {
		t.Fatalf("the other held connection: %v", err)
	}
	if r := <-reads; r.n != 1 {
		t.Fatalf("the other held connection, asked again: read %d bytes, %v; want its answer", r.n, r.err)
	}

	if code := stop(); code != exitInterrupted || strings.Contains(stderr.String(), "panic") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}
