package core

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/partnerapi/partner-go/internal/testkit/h2fault"
)

// h2Client returns a Client over the HTTP/2 server s with policy p: its
// transport is New's default one, trusting the server's certificate, or
// x/net's http2.Transport when xnet.
func h2Client(t *testing.T, s *h2fault.Server, p RetryPolicy, xnet bool) *Client {
	t.Helper()
	u, _ := url.Parse(s.URL)
	var rt http.RoundTripper
	if xnet {
		// x/net's own transport, deprecated for net/http's, is what a
		// user may still pass in Config.HTTPClient.
		//lint:ignore SA1019 the test covers a client built on it
		rt = &http2.Transport{TLSClientConfig: &tls.Config{RootCAs: s.Roots}}
	} else {
		tr := New(Config{}).cfg.HTTPClient.Transport.(*http.Transport)
		tr.TLSClientConfig = &tls.Config{RootCAs: s.Roots}
		rt = tr
	}
	hc := &http.Client{Transport: rt}
	t.Cleanup(hc.CloseIdleConnections)
	return New(Config{BaseURL: u, HTTPClient: hc, Retry: p})
}

// h2Ctx bounds a call of these tests: a transport that replays without
// end would otherwise hold it forever.
func h2Ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// quickRetries is a policy with n retries and no waits to speak of.
func quickRetries(n int) RetryPolicy {
	return RetryPolicy{MaxRetries: n, MinWait: time.Microsecond, MaxWait: time.Microsecond, NoBudget: true}
}

// load is a write that is not safe to repeat, with a body (a bulk
// load); list an idempotent request with a JSON body (a report list);
// get a read without a body.
func load() *Request {
	return &Request{Method: http.MethodPost, Path: "/bulk/v1/bulkload", Body: strings.NewReader("id,name\n1,a\n"), ContentType: "text/csv"}
}

func list() *Request {
	return &Request{Method: http.MethodPost, Path: "/report/v1/list", JSON: map[string]int{"page": 1}, Idempotent: true}
}

func get() *Request { return &Request{Method: http.MethodGet, Path: "/report/v1/42"} }

var transports = []struct {
	name string
	xnet bool
}{{"net/http", false}, {"x/net", true}}

// TestHTTP2ResetIsNotReplayed: a server that resets every stream with
// PROTOCOL_ERROR after reading the request (which HTTP/2 clients take
// as retryable) processes a write that is not safe to repeat once, and
// the call says its outcome is unknown; an idempotent request is sent
// as often as the retry policy allows, and no more.
func TestHTTP2ResetIsNotReplayed(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			s := h2fault.New(t, h2fault.Always(h2fault.ResetProtocol))
			c := h2Client(t, s, quickRetries(3), tr.xnet)
			err := c.Do(h2Ctx(t), load(), nil)
			if !IsOutcomeUnknown(err) {
				t.Errorf("load: %v, want an error marked outcome unknown", err)
			}
			if n := s.Processed.Load(); n != 1 {
				t.Errorf("load processed %d times, want once", n)
			}

			s.Processed.Store(0)
			var info ResponseInfo
			ctx := WithCallOptions(h2Ctx(t), CallOptions{Capture: &info})
			if err := c.Do(ctx, list(), nil); err == nil || IsOutcomeUnknown(err) {
				t.Errorf("list: %v, want an error (an idempotent request's outcome is never unknown)", err)
			}
			if n := s.Processed.Load(); n != 4 {
				t.Errorf("list sent %d times, want 4 (the first attempt and 3 retries)", n)
			}
			if info.Attempts != 4 {
				t.Errorf("list: Capture.Attempts = %d, want 4", info.Attempts)
			}
		})
	}
}

// TestHTTP2ResetBodiless: a request without a body that is not safe to
// repeat is not replayed by the HTTP/2 transport either; one that is
// safe to repeat is re-sent by the transport only as the retry policy
// allows (each re-send counts as a retry).
func TestHTTP2ResetBodiless(t *testing.T) {
	s := h2fault.New(t, h2fault.Always(h2fault.ResetProtocol))
	c := h2Client(t, s, quickRetries(1), false)
	err := c.Do(h2Ctx(t), &Request{Method: http.MethodPost, Path: "/api/act"}, nil)
	if !IsOutcomeUnknown(err) {
		t.Errorf("bodiless POST: %v, want an error marked outcome unknown", err)
	}
	if n := s.Processed.Load(); n != 1 {
		t.Errorf("bodiless POST processed %d times, want once", n)
	}

	s.Processed.Store(0)
	var info ResponseInfo
	ctx := WithCallOptions(h2Ctx(t), CallOptions{Capture: &info})
	if err := c.Do(ctx, get(), nil); err == nil {
		t.Error("GET succeeded against a server that resets every stream")
	}
	// The transport may start one send before it sees the hop cancelled.
	if n := s.Processed.Load(); n < 2 || n > 3 {
		t.Errorf("GET sent %d times, want 2 (one attempt and one retry), 3 at most", n)
	}
	if info.Attempts != 2 {
		t.Errorf("GET: Capture.Attempts = %d, want 2", info.Attempts)
	}
}

// TestHTTP2GoAway: a GOAWAY that covers the request (it was processed,
// its answer is lost) marks a write's outcome unknown and is not
// repeated; a GOAWAY below the request's stream and a refused stream
// (certainly not processed) are retried, and the retry succeeds.
func TestHTTP2GoAway(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			s := h2fault.New(t, h2fault.Always(h2fault.GoAwayCovering))
			c := h2Client(t, s, quickRetries(3), tr.xnet)
			if err := c.Do(h2Ctx(t), load(), nil); !IsOutcomeUnknown(err) {
				t.Errorf("load after a GOAWAY covering it: %v, want outcome unknown", err)
			}
			if n := s.Processed.Load(); n != 1 {
				t.Errorf("load processed %d times, want once", n)
			}

			for _, act := range []h2fault.Act{h2fault.GoAwayBelow, h2fault.Refuse} {
				s := h2fault.New(t, h2fault.FirstThen(act))
				c := h2Client(t, s, quickRetries(3), tr.xnet)
				var out struct{ OK bool }
				if err := c.Do(h2Ctx(t), load(), &out); err != nil || !out.OK {
					t.Errorf("load after a stream certainly not processed (act %d): %v %+v, want it retried", act, err, out)
				}
				if n := s.Processed.Load(); n != 1 {
					t.Errorf("load processed %d times, want once", n)
				}
			}
		})
	}
}

// TestHTTP2DefaultTransportSpeaksHTTP2: the tests above run over
// HTTP/2 with New's default transport.
func TestHTTP2DefaultTransportSpeaksHTTP2(t *testing.T) {
	s := h2fault.New(t, h2fault.Always(h2fault.Answer))
	c := h2Client(t, s, quickRetries(0), false)
	var proto string
	r := get()
	r.Observe = func(resp *http.Response) { proto = resp.Proto }
	if err := c.Do(h2Ctx(t), r, nil); err != nil {
		t.Fatal(err)
	}
	if proto != "HTTP/2.0" {
		t.Errorf("answered over %q, want HTTP/2.0", proto)
	}
}
