package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// connectRaw opens a TCP connection to the fake at base (http://host:port).
func connectRaw(t *testing.T, base string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// keptAlive opens a connection, has one request answered on it and keeps
// it open, idle: the server has accepted it and holds it.
func keptAlive(t *testing.T, base string) net.Conn {
	t.Helper()
	c := connectRaw(t, base)
	fmt.Fprintf(c, "GET /_fake/health HTTP/1.1\r\nHost: localhost\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("health on a kept-alive connection: %d", resp.StatusCode)
	}
	return c
}

// closedBy waits for the server to close c (a read ends with EOF or a
// reset), failing when it has not by deadline.
func closedBy(t *testing.T, c net.Conn, deadline time.Time, what string) {
	t.Helper()
	c.SetReadDeadline(deadline)
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("%s: still open at the test's deadline", what)
	}
}

// answered checks that a request on a connection of its own, given up
// after timeout, gets a 200; what names the request in a failure.
func answered(t *testing.T, timeout time.Duration, method, url, body, what string) {
	t.Helper()
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("%s: %d", what, resp.StatusCode)
	}
}

// TestIdleConnectionsClosed: a connection that sends nothing is closed
// once the header timeout (-read-timeout, when shorter than 10s) passed,
// and a keep-alive connection left idle once -idle-timeout passed. The
// deadlines only keep a broken server from hanging the test: each is
// fifty times the timeout it checks.
func TestIdleConnectionsClosed(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	base, stop := start(t, "-read-timeout", timeout.String(), "-idle-timeout", timeout.String())
	defer stop()
	var silent, idle []net.Conn
	for range 10 {
		silent = append(silent, connectRaw(t, base))
		idle = append(idle, keptAlive(t, base))
	}
	deadline := time.Now().Add(50 * timeout)
	for i := range 10 {
		closedBy(t, silent[i], deadline, fmt.Sprintf("connection %d, which sent nothing", i))
		closedBy(t, idle[i], deadline, fmt.Sprintf("keep-alive connection %d, idle", i))
	}
}

// TestRealTrafficUnderIdleFlood: with 300 idle keep-alive connections
// held (each accepted and answered once), a new client is answered at
// once, under partnerfake's defaults. Its client times out well before
// the idle timeout (1m) could free a slot.
func TestRealTrafficUnderIdleFlood(t *testing.T) {
	t.Parallel()
	base, stop := start(t)
	defer stop()
	for range 300 {
		keptAlive(t, base)
	}
	answered(t, 20*time.Second, "POST", base+"/oauth/token",
		`{"grant_type":"client_credentials","client_id":"partner-test-client","client_secret":"partner-test-secret"}`,
		"a client under 300 idle connections")
}

// TestConnectionCap: -max-connections bounds the connections served at
// once; the silent connections holding every slot are dropped after the
// header timeout, and a real request waiting behind them is then served.
func TestConnectionCap(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	base, stop := start(t, "-max-connections", "8", "-read-timeout", timeout.String())
	defer stop()
	var silent []net.Conn
	for range 8 {
		silent = append(silent, connectRaw(t, base))
	}
	answered(t, 50*timeout, "GET", base+"/_fake/health", "", "a request behind 8 silent connections")
	for i, c := range silent {
		closedBy(t, c, time.Now().Add(50*timeout), fmt.Sprintf("silent connection %d", i))
	}
}

// TestSilentConnectionsLeaveRoom: connections that send nothing, more
// than -max-connections of them, do not keep a new client out until the
// header timeout drops them: past the cap, each new connection closes the
// oldest one waiting for a request. The client gives up at half the
// header timeout (10s), before a timeout could have freed a slot.
func TestSilentConnectionsLeaveRoom(t *testing.T) {
	t.Parallel()
	base, stop := start(t, "-max-connections", "16")
	defer stop()
	var silent []net.Conn
	for range 40 {
		silent = append(silent, connectRaw(t, base))
	}
	defer func() { // before stop: a graceful shutdown waits for them
		for _, c := range silent {
			c.Close()
		}
	}()
	answered(t, 5*time.Second, "GET", base+"/_fake/health", "", "a request behind 40 silent connections, 16 served at once")
}

// TestIdleConnectionsLeaveRoom: keep-alive connections left idle hold at
// most three quarters of -max-connections: one going idle past them is
// closed, so a new client is answered at once even when a client opened
// as many connections as the cap and left them idle. Its client times out
// well before the idle timeout (1m) could free a slot.
func TestIdleConnectionsLeaveRoom(t *testing.T) {
	t.Parallel()
	base, stop := start(t, "-max-connections", "8")
	defer stop()
	var idle []net.Conn
	for range 8 {
		idle = append(idle, keptAlive(t, base))
	}
	answered(t, 20*time.Second, "GET", base+"/_fake/health", "", "a request after 8 connections left idle")
	// Which connections went idle last depends on when the server saw
	// each go idle, not on the order the test opened them: count them.
	closed := make(chan bool, len(idle))
	deadline := time.Now().Add(20 * time.Second)
	for _, c := range idle {
		go func() {
			c.SetReadDeadline(deadline)
			_, err := io.Copy(io.Discard, c)
			ne, ok := errors.AsType[net.Error](err)
			closed <- !(ok && ne.Timeout())
		}()
	}
	n := 0
	for range idle {
		if <-closed {
			if n++; n == len(idle)-6 {
				return // the server closed the ones past the 6 it keeps
			}
		}
	}
	t.Errorf("%d of 8 idle connections closed by the test's deadline, want at least 2 (6 kept)", n)
}

// slowBody sends its pieces with a pause before each after the first:
// a client that uploads slowly.
type slowBody struct {
	pieces []string
	pause  time.Duration
	sent   int
}

func (b *slowBody) Read(p []byte) (int, error) {
	if b.sent == len(b.pieces) {
		return 0, io.EOF
	}
	if b.sent > 0 {
		time.Sleep(b.pause)
	}
	n := copy(p, b.pieces[b.sent])
	b.sent++
	return n, nil
}

// TestSlowLoadBodyNotCut: a bulk load whose body arrives in pieces, with
// a pause between two longer than -read-timeout and -write-timeout, is
// read to its end and answered: the body is bounded by its progress (30s
// without a byte), not by the server's timeouts. The pause is the
// timeouts and a tenth of a second more: a loaded machine only lengthens
// it. Meanwhile a JSON route's body that stops is cut at -read-timeout.
func TestSlowLoadBodyNotCut(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	base, stop := start(t, "-read-timeout", timeout.String(), "-write-timeout", timeout.String())
	defer stop()
	tok := defaultToken(t, base)
	// A JSON route's body is held to -read-timeout: the test waits for
	// that timeout while the slow load's pause runs.
	c := connectRaw(t, base)
	fmt.Fprintf(c, "POST /oauth/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	var wg sync.WaitGroup
	wg.Go(func() { closedBy(t, c, time.Now().Add(50*timeout), "a token request whose body stopped") })
	defer wg.Wait()

	body := &slowBody{pause: timeout + 100*time.Millisecond, pieces: []string{"sales_details.crm_opportunity_id,name\nS-1,Slow one\n", "S-2,Slow two\n"}}
	req, _ := http.NewRequest("POST", base+"/bulk/v1/bulkload?integration_id=int-demo-opportunities", body)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "text/csv")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("a slow load: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "execution_id") {
		t.Errorf("a slow load: %d %s", resp.StatusCode, b)
	}
}

// TestSlowAnswersAskedForNotCut: a latency asked for (-latency, or a
// fault injected through the admin API with a latency or a dribble) is
// not cut by -write-timeout: the answer comes whole. Each answer is
// delayed past the write timeout by at least a tenth of a second, which a
// loaded machine only lengthens: the latencies are the write timeout and
// 100ms; the dribble, 16 bytes every 10ms, sends the kinds' list (at
// least 600 bytes, checked) in at least 370ms. The three are asked for at
// once, of three servers.
func TestSlowAnswersAskedForNotCut(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	const latency = timeout + 100*time.Millisecond
	var wg sync.WaitGroup
	defer wg.Wait() // the servers stop in cleanups, after it
	// -latency delays every service route, the token request's too.
	slow, stopSlow := start(t, "-write-timeout", timeout.String(), "-latency", latency.String())
	t.Cleanup(func() { stopSlow() })
	wg.Go(func() {
		st, body, err := request("POST", slow+"/oauth/token", "", `{"grant_type":"client_credentials","client_id":"partner-test-client","client_secret":"partner-test-secret"}`)
		if err != nil || st != 200 || !strings.Contains(body, "access_token") {
			t.Errorf("with -latency past -write-timeout: %d %s %v", st, body, err)
		}
	})
	for _, fault := range []string{`{"path": "/event/v1/metadata/event", "times": 1, "latency": "` + latency.String() + `"}`, `{"path": "/event/v1/metadata/event", "times": 1, "dribble": "10ms"}`} {
		base, stop := start(t, "-write-timeout", timeout.String())
		t.Cleanup(func() { stop() })
		tok := defaultToken(t, base)
		if st, body := send(t, "POST", base+"/_fake/faults", "", fault); st != http.StatusCreated {
			t.Fatalf("inject %s: %d %s", fault, st, body)
		}
		wg.Go(func() {
			if st, body, err := request("GET", base+"/event/v1/metadata/event", tok, ""); err != nil || st != 200 || len(body) < 600 {
				t.Errorf("after the fault %s: %d %.200s (%d bytes) %v", fault, st, body, len(body), err)
			}
		})
	}
}

// TestAllowHostOnAnyAddress: listening on all addresses, partnerfake
// serves the service's routes to any Host; with -allow-host only to
// loopback names and the names given.
func TestAllowHostOnAnyAddress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args    []string
		foreign int
	}{
		{nil, 200},
		{[]string{"-allow-host", "fake.internal"}, 403},
	} {
		base, stop := start(t, append([]string{"-addr", "0.0.0.0:0"}, tc.args...)...)
		port := base[strings.LastIndex(base, ":")+1:]
		local := "http://127.0.0.1:" + port
		for host, want := range map[string]int{"rebind.attacker.example:" + port: tc.foreign, "fake.internal:" + port: 200, "localhost:" + port: 200} {
			req, _ := http.NewRequest("POST", local+"/oauth/token", strings.NewReader(`{"grant_type":"client_credentials","client_id":"partner-test-client","client_secret":"partner-test-secret"}`))
			req.Host = host
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("on 0.0.0.0 with %q, Host %s: %d, want %d", tc.args, host, resp.StatusCode, want)
			}
		}
		if err := stop(); err != nil {
			t.Error(err)
		}
	}
}

// TestRedirectURIFlag: GET /oauth/authorize redirects the client to a URI
// -redirect-uri registered or a loopback one, and to no other.
func TestRedirectURIFlag(t *testing.T) {
	t.Parallel()
	base, stop := start(t, "-redirect-uri", "https://consent.example.com/cb")
	defer stop()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for uri, want := range map[string]int{"https://consent.example.com/cb": 302, "http://127.0.0.1:9/cb": 302, "https://attacker.example/": 400} {
		resp, err := noRedirect.Get(base + "/oauth/authorize?response_type=code&client_id=partner-test-client&redirect_uri=" + url.QueryEscape(uri))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want || want == 302 && !strings.HasPrefix(resp.Header.Get("Location"), uri) {
			t.Errorf("authorize to %s: %d %q, want %d", uri, resp.StatusCode, resp.Header.Get("Location"), want)
		}
	}
}

// TestMain runs partnerfake's main instead of the tests when the spool
// tests start this binary as partnerfake.
func TestMain(m *testing.M) {
	if os.Getenv("PARTNERFAKE_TEST_MAIN") == "1" {
		os.Args = append([]string{"partnerfake"}, os.Args[1:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}
