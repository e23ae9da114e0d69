package core

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// dropIdleServer is a loopback HTTP/1.1 server that closes its first
// connection, after answering one request on it, when told to (drop):
// as a NAT or load balancer drops an idle connection. Every other
// connection is served until the client closes it.
type dropIdleServer struct {
	ln       net.Listener
	drop     chan struct{}
	requests atomic.Int32
	wg       sync.WaitGroup
}

func newDropIdleServer(t *testing.T) *dropIdleServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &dropIdleServer{ln: ln, drop: make(chan struct{})}
	s.wg.Go(func() {
		for first := true; ; first = false {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func(first bool) {
				defer s.wg.Done()
				s.serve(conn, first)
			}(first)
		}
	})
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *dropIdleServer) serve(conn net.Conn, first bool) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		s.requests.Add(1)
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}")
		if first {
			<-s.drop
			return
		}
	}
}

// closeHookConn tells closed when the client closes it.
type closeHookConn struct {
	net.Conn
	once   sync.Once
	closed chan struct{}
}

func (c *closeHookConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// TestDeadConnectionWriteRetried: a POST (not safe to repeat) that the
// default transport put on a pooled connection the server had dropped
// while idle is sent again on a new connection, not ended outcome
// unknown: nothing of it reached the server.
func TestDeadConnectionWriteRetried(t *testing.T) {
	srv := newDropIdleServer(t)
	u, _ := url.Parse("http://" + srv.ln.Addr().String())
	c := New(Config{BaseURL: u, Retry: fastRetry})
	tr := c.cfg.HTTPClient.Transport.(*http.Transport)
	t.Cleanup(tr.CloseIdleConnections)
	firstClosed := make(chan struct{})
	var dials atomic.Int32
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil || dials.Add(1) != 1 {
			return conn, err
		}
		return &closeHookConn{Conn: conn, closed: firstClosed}, nil
	}

	// The first call leaves its connection in the pool.
	idle := make(chan struct{}, 1)
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		PutIdleConn: func(err error) {
			if err == nil {
				idle <- struct{}{}
			}
		},
	})
	write := &Request{Method: http.MethodPost, Path: "/w", JSON: map[string]int{"a": 1}}
	if err := c.Do(ctx, write, nil); err != nil {
		t.Fatal(err)
	}
	<-idle

	// The second takes that connection; the server drops it, and the
	// client notices, before the request is written on it.
	var reused atomic.Bool
	ctx = httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if info.Reused && !reused.Swap(true) {
				close(srv.drop)
				<-firstClosed
			}
		},
	})
	var info ResponseInfo
	err := c.Do(WithCallOptions(ctx, CallOptions{Capture: &info}), write, nil)
	if !reused.Load() {
		t.Fatal("the second call did not take the pooled connection")
	}
	if err != nil || IsOutcomeUnknown(err) {
		t.Fatalf("POST on a dropped idle connection: %v", err)
	}
	if n := srv.requests.Load(); n != 2 {
		t.Errorf("the server got %d requests, want 2 (each call once)", n)
	}
}

// TestServerClosedIdleIsNotSent: net/http's "server closed idle
// connection" failure means nothing of the request reached the server,
// even when its headers were buffered: a write is retried, and its
// error (when retries run out) is not outcome unknown.
func TestServerClosedIdleIsNotSent(t *testing.T) {
	closedIdle := func(req *http.Request) (*http.Response, error) {
		if tr := httptrace.ContextClientTrace(req.Context()); tr != nil && tr.WroteHeaders != nil {
			tr.WroteHeaders()
		}
		return nil, errors.New("http: server closed idle connection")
	}
	c, mt := newMockClient(t)
	mt.RegisterResponder("POST", base+"/w", firstThen(closedIdle))
	if err := c.Do(context.Background(), &Request{Method: "POST", Path: "/w", JSON: map[string]int{"a": 1}}, nil); err != nil || calls(mt) != 2 {
		t.Fatalf("err %v after %d calls, want a success after 2", err, calls(mt))
	}
	c, mt = newMockClient(t)
	mt.RegisterResponder("POST", base+"/w", closedIdle)
	err := c.Do(context.Background(), &Request{Method: "POST", Path: "/w", JSON: map[string]int{"a": 1}}, nil)
	if err == nil || IsOutcomeUnknown(err) || calls(mt) != 4 {
		t.Fatalf("err %v after %d calls, want a failure, not outcome unknown, after 4", err, calls(mt))
	}
}

// TestDefaultTransportFindsDeadConnections: the default transport
// closes idle connections before common load balancers drop them, and
// pings HTTP/2 connections.
func TestDefaultTransportFindsDeadConnections(t *testing.T) {
	c := New(Config{})
	tr := c.cfg.HTTPClient.Transport.(*http.Transport)
	if tr.IdleConnTimeout != DefaultIdleConnTimeout || DefaultIdleConnTimeout >= 60e9 {
		t.Errorf("IdleConnTimeout = %v", tr.IdleConnTimeout)
	}
	if tr.HTTP2 == nil || tr.HTTP2.SendPingTimeout != DefaultHTTP2PingInterval || tr.HTTP2.PingTimeout != DefaultHTTP2PingTimeout {
		t.Errorf("HTTP2 = %+v, want health checks", tr.HTTP2)
	}
}
