package core

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestHeaderWatchEndsSilentServer: on the HTTP client New builds, an
// attempt whose server read the request and never answers ends with the
// response header timeout, a timeout as net/http's was: a GET is
// retried, a POST is not, and reports its outcome unknown.
func TestHeaderWatchEndsSilentServer(t *testing.T) {
	t.Parallel()
	var got atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		got.Add(1)
		<-release
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	c := loopbackClient(t, srv)
	c.hc.headers.timeout = 50 * time.Millisecond

	ctx := hangGuard(t)
	err := c.Do(ctx, &Request{Method: "GET", Path: "/silent"}, nil)
	var hte *headerTimeoutError
	if !errors.As(err, &hte) || !isTimeout(err) || !strings.Contains(err.Error(), "timeout awaiting response headers (50ms after the request was written)") {
		t.Fatalf("GET to a silent server: %v, want the response header timeout", err)
	}
	if n := got.Load(); n != 2 {
		t.Errorf("the GET was sent %d times, want 2 (retried once)", n)
	}
	got.Store(0)
	err = c.Do(ctx, &Request{Method: "POST", Path: "/silent", JSON: map[string]int{"n": 1}}, nil)
	if !errors.As(err, &hte) || !IsOutcomeUnknown(err) {
		t.Fatalf("POST to a silent server: %v, want the response header timeout, outcome unknown", err)
	}
	if n := got.Load(); n != 1 {
		t.Errorf("the POST was sent %d times, want once", n)
	}
	c.hc.headers.mu.Lock()
	defer c.hc.headers.mu.Unlock()
	if c.hc.headers.head != nil {
		t.Error("hops still watched after their calls ended")
	}
}

// TestHeaderWatchEndsSilentHTTP2Server: the watch ends an HTTP/2
// stream whose answer does not come, as it does an HTTP/1 request
// (net/http's HTTP/2 transport calls the trace's WroteRequest too).
func TestHeaderWatchEndsSilentHTTP2Server(t *testing.T) {
	t.Parallel()
	var proto atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		proto.Store(int32(req.ProtoMajor))
		<-release
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	c := loopbackClient(t, srv, func(cfg *Config) { cfg.Retry.NoRetries = true })
	c.cfg.HTTPClient.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: roots}
	c.hc.headers.timeout = 50 * time.Millisecond
	err := c.Do(hangGuard(t), &Request{Method: "GET", Path: "/silent"}, nil)
	if _, ok := errors.AsType[*headerTimeoutError](err); !ok {
		t.Fatalf("GET to a silent HTTP/2 server: %v, want the response header timeout", err)
	}
	if p := proto.Load(); p != 2 {
		t.Errorf("the request came over HTTP/%d, want 2", p)
	}
}

// TestHeaderWatchCountsFromWritten: the wait is bounded from the
// request's last byte: a hop still writing its body is not ended however
// long it takes; once written, it is ended a timeout later and not
// before. The watch reads the test's clock, and its own timer (an hour)
// never runs.
func TestHeaderWatchCountsFromWritten(t *testing.T) {
	t.Parallel()
	s := &slowWrite{headers: make(chan struct{}), answer: make(chan struct{}), stop: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(s.stop) }) // before srv.Close
	s.c = loopbackClient(t, srv, func(cfg *Config) { cfg.Retry.NoRetries = true })
	s.w = s.c.hc.headers
	s.w.timeout = time.Hour
	s.w.now = func() time.Time { return time.Unix(0, s.clock.Load()) }
	// One run of PUT (repeatable, a body) and one of POST (a write): the
	// trace that notes when the request was written is the hop's own
	// for the first, the call's for the second.
	for _, method := range []string{"PUT", "POST"} {
		s.run(t, method)
	}
}

// slowWrite is a server that answers once the test says so, and a client
// whose header watch reads the test's clock.
type slowWrite struct {
	headers, answer, stop chan struct{}
	c                     *Client
	w                     *waitWatch
	clock                 atomic.Int64 // the watch's time, UnixNano
}

func (s *slowWrite) serve(w http.ResponseWriter, req *http.Request) {
	select {
	case s.headers <- struct{}{}:
	case <-s.stop:
		return
	}
	io.Copy(io.Discard, req.Body)
	select {
	case <-s.answer:
	case <-s.stop:
	}
	w.Write([]byte(`{}`))
}

func (s *slowWrite) armed() bool {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	return s.w.armed
}

// run sends one request whose body waits for the test, and checks the
// watch before, at and past its deadline.
func (s *slowWrite) run(t *testing.T, method string) {
	body := &gatedBody{first: []byte(`{"n":`), rest: []byte(`1}`), gate: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		done <- s.c.Do(context.Background(), &Request{Method: method, Path: "/slow", Body: body}, nil)
	}()
	<-s.headers // the hop is watched; its body is being written
	s.clock.Store(time.Now().Add(3 * time.Hour).UnixNano())
	s.w.fire()
	if hw := watched(s.w); hw == nil || hw.expired || hw.began.Load() != 0 {
		t.Fatalf("%s: a hop still writing its request was ended, or not watched: %+v", method, hw)
	}
	close(body.gate)
	written := s.writtenAt(t, method)
	s.clock.Store(written + int64(time.Hour) - 1) // a nanosecond before the deadline
	s.w.fire()
	if hw := watched(s.w); hw == nil || hw.expired || !s.armed() {
		t.Fatalf("%s: ended before its deadline, or the timer unarmed (armed %v)", method, s.armed())
	}
	s.clock.Store(written + int64(time.Hour))
	s.w.fire()
	err := <-done
	if _, ok := errors.AsType[*headerTimeoutError](err); !ok {
		t.Fatalf("%s: %v, want the response header timeout once written an hour ago", method, err)
	}
	if method == "POST" && !IsOutcomeUnknown(err) {
		t.Errorf("POST: %v, want outcome unknown", err)
	}
	s.answer <- struct{}{}
	s.w.fire()
	if s.armed() || watched(s.w) != nil {
		t.Errorf("%s: the timer still armed, or a hop watched, after the call ended", method)
	}
}

// writtenAt waits until the watched hop is marked written, and returns
// when.
func (s *slowWrite) writtenAt(t *testing.T, method string) int64 {
	for deadline := time.Now().Add(time.Minute); ; {
		if hw := watched(s.w); hw != nil {
			if written := hw.began.Load(); written != 0 {
				return written
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the hop's request never marked written", method)
		}
		time.Sleep(time.Millisecond) // for the write loop to mark it
	}
}

// hangGuard is the context of a call to a silent server: were the watch
// to end nothing, the call fails when it ends, long after the watch's
// 50 ms, instead of holding the test until the binary's timeout.
func hangGuard(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// watched returns the hop the watch holds, nil when none.
func watched(w *waitWatch) *hopWait {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.head
}

// gatedBody reads first, then waits for gate to close before rest.
type gatedBody struct {
	first, rest []byte
	gate        chan struct{}
	n           int
}

func (b *gatedBody) Read(p []byte) (int, error) {
	switch b.n {
	case 0:
		b.n++
		return copy(p, b.first), nil
	case 1:
		<-b.gate
		b.n++
		return copy(p, b.rest), nil
	}
	return 0, io.EOF
}
