package fake

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// heldBody is a load body of rows (csvRows) that, once n bytes of it
// were read, says so on held and waits for release before it goes on.
type heldBody struct {
	r             io.Reader
	n, read       int
	held, release chan struct{}
}

func (b *heldBody) Read(p []byte) (int, error) {
	if b.read >= b.n && b.held != nil {
		close(b.held)
		b.held = nil
		<-b.release
	}
	if b.held != nil {
		p = p[:min(len(p), b.n-b.read)]
	}
	n, err := b.r.Read(p)
	b.read += n
	return n, err
}

// TestSpoolTotal: the bodies of the loads running are spooled within
// Limits.SpoolBytes: a load that would pass it while another holds its
// share is refused with 413 and changes nothing; the share comes back
// when the load ends, and the spool files are in WithSpoolDir's
// directory while they exist.
func TestSpoolTotal(t *testing.T) {
	dir := t.TempDir()
	e := newMemEnv(t, WithLimits(Limits{SpoolBytes: 2 << 20}), WithSpoolDir(dir))
	defer e.f.Close()
	e.f.bulk.spoolMemory = 256 << 10

	// 1.7 MiB, held once 1.5 MiB were read.
	first := &heldBody{r: &csvRows{n: 8_500, oneKey: true, pad: 200}, n: 1536 << 10, held: make(chan struct{}), release: make(chan struct{})}
	held := first.held
	done := make(chan *sink)
	go func() { done <- e.send("POST", loadPath(), "text/csv", first) }()
	<-held
	if n := e.f.bulk.spooled.Load(); n < 1536<<10 {
		t.Errorf("a load that read 1.5 MiB holds %d bytes of the total", n)
	}
	if files, _ := os.ReadDir(dir); len(files) != 1 {
		t.Errorf("%d files in the spool directory while a load of 1.5 MiB runs, want 1", len(files))
	}
	before := len(e.f.BulkExecutions())
	e.want(e.send("POST", loadPath(), "text/csv", io.LimitReader(&csvRows{n: 1_000_000}, 1<<20)), 413,
		`"error":"body_too_large","message":"the fake's loads running hold 2097152 bytes of bodies, its limit`)
	if n := len(e.f.BulkExecutions()); n != before {
		t.Errorf("the refused load recorded an execution")
	}
	close(first.release)
	s := <-done
	if s.status != 200 {
		t.Errorf("the first load, past its own 1.5 MiB: %d %.300s", s.status, s.head)
	}
	if n := e.f.bulk.spooled.Load(); n != 0 {
		t.Errorf("%d bytes of the total still held after the loads ended", n)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("%d files left in the spool directory", len(files))
	}
}

// TestLoadBodyStall: a load whose body stops arriving ends once it sent
// nothing for the stall time, whatever the server's own timeouts (the
// test's server has none): its spool file is removed, its share of the
// total given back, and nothing is recorded.
func TestLoadBodyStall(t *testing.T) {
	const stall = 200 * time.Millisecond
	dir := t.TempDir()
	srv := NewServer(WithDemoData(), WithSpoolDir(dir), withBodyStall(stall))
	defer srv.Close()
	srv.bulk.spoolMemory = 64 << 10
	tok := handlerToken(t, srv.Fake)

	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sent := 1 << 20
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer %s\r\nContent-Type: text/csv\r\nContent-Length: %d\r\n\r\n", loadPath(), tok, 4*sent)
	if _, err := io.Copy(conn, io.LimitReader(&csvRows{n: 1_000_000}, int64(sent))); err != nil {
		t.Fatal(err)
	}
	// Then nothing: the fake answers, or closes, once the stall passed;
	// the deadline only keeps a broken fake from hanging the test.
	conn.SetReadDeadline(time.Now().Add(100 * stall))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 400 || !strings.Contains(string(body), "reading the body") {
			t.Errorf("stalled load answered %d %s, want 400 saying the body could not be read", resp.StatusCode, body)
		}
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the stalled load was not ended within %v", 100*stall)
	}
	if n := srv.bulk.spooled.Load(); n != 0 {
		t.Errorf("%d bytes of the total held after the stalled load ended", n)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("%d files left in the spool directory", len(files))
	}
	if n := len(srv.BulkExecutions()); n != 0 {
		t.Errorf("the stalled load recorded %d executions", n)
	}
}

// timeoutOnce is a body whose first read fails as a read deadline does,
// and whose later reads would go on (as the reader of a Content-Length
// body does once its connection's deadline moves), counting them.
type timeoutOnce struct{ reads int }

func (r *timeoutOnce) Read(p []byte) (int, error) {
	r.reads++
	if r.reads == 1 {
		return 0, os.ErrDeadlineExceeded
	}
	return copy(p, "more"), nil
}

func (r *timeoutOnce) Close() error { return nil }

// TestStallBodyKeepsItsError: once a load's body failed (its stall
// passed), reading it again, as the drain before a refusal does, fails at
// once instead of waiting another stall for bytes that are not coming.
// Over a connection, a body of a Content-Length ended 60s after it
// stalled instead of the 30s stated.
func TestStallBodyKeepsItsError(t *testing.T) {
	under := &timeoutOnce{}
	b := &stallBody{ReadCloser: under, rc: http.NewResponseController(httptest.NewRecorder()), stall: time.Minute}
	buf := make([]byte, 16)
	for i := range 3 {
		if n, err := b.Read(buf); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("read %d of a body whose first read timed out: %d bytes, %v; want the timeout again", i+1, n, err)
		}
	}
	if under.reads != 1 {
		t.Errorf("the body under it was read %d times, want once", under.reads)
	}
}
