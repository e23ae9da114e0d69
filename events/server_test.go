package events_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/internal/testkit/flood"
)

// TestNewServerTimeouts: NewServer sets the values the package
// documentation recommends.
func TestNewServerTimeouts(t *testing.T) {
	srv := events.NewServer(http.NotFoundHandler())
	if srv.ReadHeaderTimeout != 10*time.Second || srv.ReadTimeout != 30*time.Second || srv.WriteTimeout != 60*time.Second ||
		srv.IdleTimeout != 60*time.Second || srv.MaxHeaderBytes != 16<<10 || srv.Handler == nil ||
		srv.Protocols == nil || !srv.Protocols.HTTP1() || srv.Protocols.HTTP2() || srv.Protocols.UnencryptedHTTP2() {
		t.Errorf("NewServer: %+v", srv)
	}
}

// serveLimited serves h with NewServer's settings, changed by adjust, on
// a loopback listener limited by LimitConns to n connections; it returns
// the listener's address.
func serveLimited(t *testing.T, h http.Handler, n int, adjust func(*http.Server)) string {
	t.Helper()
	srv := events.NewServer(h)
	if adjust != nil {
		adjust(srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(events.LimitConns(srv, ln, n))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// TestLimitConnsDeliversUnderFlood: with every one of a receiver's
// DefaultMaxConns connections held idle after a 401 by a client that
// does not know the secret, and more connections that send nothing
// waiting behind them, a delivery is answered on its first attempt,
// within the time the recommended server gives a request's headers.
// The server's own timeouts are an hour, so no held connection is freed
// by time while the test runs: only the cap making room lets the
// delivery in.
func TestLimitConnsDeliversUnderFlood(t *testing.T) {
	t.Parallel()
	secret := events.NewSecret()
	delivered := make(chan string, 1)
	h := &events.Handler{Secrets: events.NewSecretSet(secret), Deliver: func(_ context.Context, d *events.Delivery) error {
		delivered <- d.Fields["stage"]
		return nil
	}}
	addr := serveLimited(t, h, 0, func(srv *http.Server) { srv.ReadHeaderTimeout, srv.IdleTimeout = time.Hour, time.Hour })
	flood.Hold(t, addr, "/hook/not-the-secret-at-all-0000", events.DefaultMaxConns, 64)

	client := &http.Client{Timeout: events.NewServer(nil).ReadHeaderTimeout, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Post("http://"+addr+"/hook/"+string(secret), "application/json", strings.NewReader(`{"stage":"won"}`))
	if err != nil {
		t.Fatalf("delivery while the flood holds the connections: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delivery answered %d, want 204", resp.StatusCode)
	}
	if got := <-delivered; got != "won" {
		t.Errorf("delivered stage %q", got)
	}
}

// TestLimitConnsKeepsRequestsInFlight: a connection whose request is
// being served is never closed to make room: with n = 2 and two
// deliveries in Deliver, a third connection waits in the accept queue
// (the limiter's Accept blocked, the server having accepted two
// connections) until one of the two ends, and all three are delivered.
// It does not call t.Parallel: it looks through the goroutines for its
// own limiter's Accept.
func TestLimitConnsKeepsRequestsInFlight(t *testing.T) {
	secret := events.NewSecret()
	started, release := make(chan struct{}, 3), make(chan struct{})
	h := &events.Handler{Secrets: events.NewSecretSet(secret), Deliver: func(context.Context, *events.Delivery) error {
		started <- struct{}{}
		<-release
		return nil
	}}
	var mu sync.Mutex
	accepted := 0
	addr := serveLimited(t, h, 2, func(srv *http.Server) {
		srv.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				mu.Lock()
				accepted++
				mu.Unlock()
			}
		}
	})
	acceptedNow := func() int {
		mu.Lock()
		defer mu.Unlock()
		return accepted
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	answers := make(chan int, 3)
	deliver := func() {
		resp, err := client.Post("http://"+addr+"/hook/"+string(secret), "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Error(err)
			answers <- 0
			return
		}
		resp.Body.Close()
		answers <- resp.StatusCode
	}
	go deliver()
	go deliver()
	<-started
	<-started
	go deliver()
	waitUntil(t, func() bool { return acceptedNow() > 2 || acceptBlocked() })
	if n := acceptedNow(); n != 2 {
		t.Fatalf("the server accepted %d connections with n = 2 and two requests in flight", n)
	}
	close(release)
	for range 3 {
		if code := <-answers; code != http.StatusNoContent {
			t.Errorf("a delivery was answered %d, want 204", code)
		}
	}
}

// waitUntil polls cond; the deadline only fails a test whose condition
// never comes.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// acceptBlocked reports whether a goroutine is blocked in LimitConns'
// Accept, waiting for a connection to end.
func acceptBlocked() bool {
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
		if bytes.Contains(header, []byte("[sync.Cond.Wait]")) && bytes.Contains(g, []byte("events.(*connLimiter).Accept")) {
			return true
		}
	}
	return false
}

// TestLimitConnsTLS: served with ServeTLS, the limiter follows each
// connection through the *tls.Conn the server reports: with n = 1 and a
// delivery in Deliver, a second client waits rather than closing it,
// and both are delivered. NewServer speaks HTTP/1.1 to a client that
// offers HTTP/2; a server that turns HTTP/2 on keeps an HTTP/2
// connection that goes idle, and the second client is served once the
// first closes it. It does not call t.Parallel: it looks through the
// goroutines for its own limiter's Accept.
func TestLimitConnsTLS(t *testing.T) {
	ts := httptest.NewUnstartedServer(http.NotFoundHandler())
	ts.StartTLS()
	certs, roots := ts.TLS.Certificates, x509.NewCertPool()
	roots.AddCert(ts.Certificate())
	ts.Close()
	for _, tc := range []struct {
		name      string
		serverH2  bool
		wantProto string
	}{{"NewServer", false, "HTTP/1.1"}, {"HTTP/2 on", true, "HTTP/2.0"}} {
		t.Run(tc.name, func(t *testing.T) {
			secret := events.NewSecret()
			started, release := make(chan struct{}, 2), make(chan struct{})
			srv := events.NewServer(&events.Handler{Secrets: events.NewSecretSet(secret), Deliver: func(context.Context, *events.Delivery) error {
				started <- struct{}{}
				<-release
				return nil
			}})
			srv.TLSConfig = &tls.Config{Certificates: certs}
			if tc.serverH2 {
				srv.Protocols.SetHTTP2(true)
				// The first client may close its connection before or
				// after it is idle; if not, the server does.
				srv.IdleTimeout = time.Second
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go srv.ServeTLS(events.LimitConns(srv, ln, 1), "", "")
			t.Cleanup(func() { srv.Close() })

			answers := make(chan string, 2)
			deliver := func() {
				// Each delivery on a connection of its own, closed after
				// its answer.
				tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}
				defer tr.CloseIdleConnections()
				resp, err := (&http.Client{Transport: tr}).Post("https://"+ln.Addr().String()+"/hook/"+string(secret), "application/json", strings.NewReader(`{}`))
				if err != nil {
					answers <- err.Error()
					return
				}
				resp.Body.Close()
				answers <- resp.Proto + " " + resp.Status
			}
			go deliver()
			<-started
			go deliver()
			waitUntil(t, acceptBlocked)
			close(release)
			for range 2 {
				if got, want := <-answers, tc.wantProto+" 204 No Content"; got != want {
					t.Errorf("a delivery: %s, want %s", got, want)
				}
			}
		})
	}
}
