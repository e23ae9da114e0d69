package core

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/partnerapi/partner-go/internal/testkit/h2fault"
)

// TestNotSentByShape: an error says a request was not processed only
// when one error of its chain is, whole, the transport's error saying
// so; the same text inside a server's words (GOAWAY debug data, a
// header line) is not enough.
func TestNotSentByShape(t *testing.T) {
	refused := "stream error: stream ID 3; REFUSED_STREAM; received from peer"
	goAway := "http2: Transport received Server's graceful shutdown GOAWAY"
	cannotRetry := func(cause string) string {
		return "http2: Transport: cannot retry err [" + cause + "] after Request.Body was written; define Request.GetBody to avoid this error"
	}
	urlErr := func(err error) error { return &url.Error{Op: "Post", URL: "https://api.example.com/bulk", Err: err} }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"refused stream", urlErr(errors.New(refused)), true},
		{"refused stream, cannot retry", urlErr(errors.New(cannotRetry(refused))), true},
		{"graceful GOAWAY", urlErr(errors.New(goAway)), true},
		{"graceful GOAWAY, cannot retry", urlErr(errors.New(cannotRetry(goAway))), true},
		{"closed idle", urlErr(errors.New("http: server closed idle connection")), true},
		{"wrapped with %w", fmt.Errorf("partner: %w", urlErr(errors.New(refused))), true},
		{"joined", errors.Join(errors.New("other"), errors.New(refused)), true},

		{"nil", nil, false},
		{"GOAWAY debug data", urlErr(errors.New(`http2: server sent GOAWAY and closed the connection; LastStreamID=1, ErrCode=NO_ERROR, debug="` + refused + `"`)), false},
		{"GOAWAY debug data, graceful", urlErr(errors.New(`http2: server sent GOAWAY and closed the connection; LastStreamID=1, ErrCode=NO_ERROR, debug="` + goAway + `"`)), false},
		{"HTTP/1.1 header line", urlErr(errors.New("net/http: HTTP/1.x transport connection broken: malformed MIME header line: REFUSED_STREAM; received from peer")), false},
		{"HTTP/1.1 header line, closed idle", urlErr(errors.New("net/http: HTTP/1.x transport connection broken: malformed MIME header line: http: server closed idle connection")), false},
		{"another code", urlErr(errors.New("stream error: stream ID 3; PROTOCOL_ERROR; received from peer")), false},
		{"refused, not by the peer", urlErr(errors.New("stream error: stream ID 3; REFUSED_STREAM")), false},
		{"stream id not a number", urlErr(errors.New("stream error: stream ID x; REFUSED_STREAM; received from peer")), false},
		{"cannot retry, another cause", urlErr(errors.New(cannotRetry("stream error: stream ID 3; PROTOCOL_ERROR; received from peer"))), false},
		{"cannot retry, cause with more", urlErr(errors.New(cannotRetry("x " + refused))), false},
	} {
		if got := notSent(tc.err); got != tc.want {
			t.Errorf("%s: notSent(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

// TestHTTP2ForgedRefusalInGoAway: a server that processes a write, then
// sends a GOAWAY covering it whose debug data reads as a refused stream
// or a graceful shutdown, gets the write once, and the call says its
// outcome is unknown.
func TestHTTP2ForgedRefusalInGoAway(t *testing.T) {
	for _, tr := range transports {
		for _, debug := range []string{"REFUSED_STREAM; received from peer", "received Server's graceful shutdown GOAWAY"} {
			t.Run(tr.name+"/"+debug, func(t *testing.T) {
				s := h2fault.New(t, h2fault.Always(h2fault.GoAwayCovering))
				s.GoAwayDebug = []byte(debug)
				c := h2Client(t, s, quickRetries(3), tr.xnet)
				if err := c.Do(h2Ctx(t), load(), nil); !IsOutcomeUnknown(err) {
					t.Errorf("load after a GOAWAY covering it with debug data %q: %v, want outcome unknown", debug, err)
				}
				if n := s.Processed.Load(); n != 1 {
					t.Errorf("load processed %d times, want once", n)
				}
			})
		}
	}
}

// TestHTTP1ForgedRefusalInHeader: an HTTP/1.1 server that processes a
// write and answers a header line reading as a refused stream gets the
// write once, and the call says its outcome is unknown.
func TestHTTP1ForgedRefusalInHeader(t *testing.T) {
	for _, line := range []string{"REFUSED_STREAM; received from peer", "stream ID 1; REFUSED_STREAM; received from peer"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		var processed atomic.Int32
		go func() {
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer conn.Close()
					req, err := http.ReadRequest(bufio.NewReader(conn))
					if err != nil {
						return
					}
					if _, err := io.Copy(io.Discard, req.Body); err != nil {
						return
					}
					processed.Add(1)
					io.WriteString(conn, "HTTP/1.1 200 OK\r\n"+line+"\r\nContent-Length: 0\r\n\r\n")
				}()
			}
		}()
		u, _ := url.Parse("http://" + ln.Addr().String())
		hc := &http.Client{Transport: &http.Transport{}}
		t.Cleanup(hc.CloseIdleConnections)
		c := New(Config{BaseURL: u, HTTPClient: hc, Retry: quickRetries(3)})
		err = c.Do(h2Ctx(t), load(), nil)
		if !IsOutcomeUnknown(err) || !strings.Contains(err.Error(), "malformed") {
			t.Errorf("load answered the header line %q: %v, want a malformed answer marked outcome unknown", line, err)
		}
		if n := processed.Load(); n != 1 {
			t.Errorf("header line %q: load processed %d times, want once", line, n)
		}
	}
}
