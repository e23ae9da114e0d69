package core

// The HTTP client under the pipeline: its default timeouts, its redirect
// rules, and the stall timeout of answer bodies.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/propagation"
)

// Default timeouts of the HTTP client New builds when Config.HTTPClient is
// nil. A client given through Config.HTTPClient keeps its own.
const (
	DefaultDialTimeout           = 10 * time.Second
	DefaultTLSHandshakeTimeout   = 10 * time.Second
	DefaultResponseHeaderTimeout = 60 * time.Second
	// DefaultStallTimeout is the longest an answer's body may send
	// nothing while it is read (Config.StallTimeout). It applies to every
	// client, one given through Config.HTTPClient too.
	DefaultStallTimeout = 60 * time.Second
	// DefaultIdleConnTimeout closes a pooled connection idle this long,
	// below the idle timeouts of common load balancers and NAT gateways
	// (60s and more), which drop a connection without telling either end.
	DefaultIdleConnTimeout = 30 * time.Second
	// DefaultHTTP2PingInterval and DefaultHTTP2PingTimeout are the
	// health check of an HTTP/2 connection: a ping after that long
	// without a frame, and the connection is closed when the ping gets
	// no answer within the timeout.
	DefaultHTTP2PingInterval = 15 * time.Second
	DefaultHTTP2PingTimeout  = 10 * time.Second
)

// ErrCrossHostRedirect is returned for a redirect to another host that
// the client refuses: one that would carry the request's body there (a
// 307 or 308 answer to a request with a body, whose body may hold a
// client secret, user data or a subscriber secret), and any redirect of
// a token request (Request.NoCrossHostRedirect), whose answer would be
// taken for a token.
var ErrCrossHostRedirect = errors.New("partner: refused a redirect to another host")

// ErrAnswerStalled is returned when an answer's body sent nothing for
// the stall timeout (Config.StallTimeout) while it was read. The attempt
// fails: a read is retried, a write that is not safe to repeat is
// marked with ErrOutcomeUnknown.
var ErrAnswerStalled = errors.New("partner: answer stalled: the server sent nothing for the stall timeout")

// ErrInsecureRedirect is returned for a redirect from https to plain
// http, which would send the request (and, on the same host, its
// Authorization header) in clear.
var ErrInsecureRedirect = errors.New("partner: refused a redirect from https to plain http")

// wrapClient returns a shallow copy of hc for go-retryablehttp:
//   - its transport hides CloseIdleConnections, which go-retryablehttp
//     calls whenever a request finally fails and which would empty the
//     connection pool every other request shares;
//   - a redirect from https to http is refused;
//   - a redirect to another host drops Authorization (net/http would keep
//     it for a subdomain), the headers meant for the service only (fixed
//     headers, the environment, a gateway's subscription key) and those
//     of prop, the trace context;
//   - a redirect to another host that would carry the request's body,
//     and any redirect to another host of a request that forbids it, is
//     refused (ErrCrossHostRedirect);
//   - an answer's body that sends nothing for stall while it is read
//     fails with ErrAnswerStalled;
//   - the transport gets requests it cannot send again by itself once
//     any of them may have reached the server (noreplay.go).
func wrapClient(hc *http.Client, serviceOnly []string, prop propagation.TextMapPropagator, stall time.Duration) *http.Client {
	cp := *hc
	rt := cp.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	cp.Transport = roundTripperOnly{rt: rt, stall: stall}
	next := hc.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 {
			if req.URL.Scheme == "http" && via[len(via)-1].URL.Scheme == "https" {
				return ErrInsecureRedirect
			}
			if !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
				if err := crossHostRefused(req, via[0]); err != nil {
					return err
				}
				req.Header.Del("Authorization")
				for _, k := range serviceOnly {
					req.Header.Del(k)
				}
				for _, k := range prop.Fields() {
					req.Header.Del(k)
				}
				if st, ok := callOf(req.Context()); ok && st.opts != nil {
					for k := range st.opts.Header {
						req.Header.Del(k)
					}
				}
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &cp
}

// serviceOnlyHeaders names the headers that must not follow a redirect to
// another host.
func (cfg *Config) serviceOnlyHeaders() []string {
	names := []string{cfg.EnvHeader, cfg.SubscriptionKeyHeader}
	for k := range cfg.Header {
		names = append(names, k)
	}
	return names
}

// crossHostRefused returns the error of a redirect of first to req on
// another host that the client refuses, nil when it may follow. net/http
// has set req's body for a 307 or 308 by then.
func crossHostRefused(req, first *http.Request) error {
	if st, ok := callOf(req.Context()); ok && st.sameHost {
		return fmt.Errorf("%w: %s %s answered with a redirect to %s; a token request follows none",
			ErrCrossHostRedirect, first.Method, first.URL.Path, req.URL.Host)
	}
	if req.Body != nil && req.Body != http.NoBody {
		return fmt.Errorf("%w: %s %s answered with a redirect to %s that would carry the request's body",
			ErrCrossHostRedirect, first.Method, first.URL.Path, req.URL.Host)
	}
	return nil
}

// roundTripperOnly is the transport of the pipeline's HTTP client: the
// given one without CloseIdleConnections (see wrapClient), which gets
// requests it cannot replay (noreplay.go), and whose answers' bodies
// fail with ErrAnswerStalled when they send nothing for stall.
type roundTripperOnly struct {
	rt    http.RoundTripper
	stall time.Duration
}

func (r roundTripperOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	// Each attempt (and each hop of a redirect) has a context of its own,
	// cancelled when its body stalls or is closed: cancelling is how
	// net/http stops a read blocked on the connection.
	ctx, cancel := context.WithCancelCause(req.Context())
	st, ok := callOf(req.Context())
	if ok {
		ctx = st.countResends(ctx, req, cancel)
	}
	hop := req.WithContext(ctx)
	if ok {
		st.noReplay(hop)
	}
	resp, err := roundTrip(r.rt, hop) // with the call's attempt timeout
	if err != nil && errors.Is(context.Cause(ctx), errResendRefused) {
		err = errResendRefused
	}
	if err != nil || resp.Body == nil || resp.Body == http.NoBody {
		cancel(nil)
		return resp, err
	}
	resp.Body = newStallBody(resp.Body, r.stall, cancel)
	return resp, nil
}

// stallBody fails a Read that receives nothing for stall: a timer armed
// while Read waits cancels the attempt's context. Time spent outside
// Read (the caller writing what it read to a slow disk) does not count.
type stallBody struct {
	rc      io.ReadCloser
	timer   *time.Timer
	stall   time.Duration
	cancel  context.CancelCauseFunc
	stalled atomic.Bool
}

func newStallBody(rc io.ReadCloser, stall time.Duration, cancel context.CancelCauseFunc) *stallBody {
	b := &stallBody{rc: rc, stall: stall, cancel: cancel}
	b.timer = time.AfterFunc(time.Hour, b.fire)
	b.timer.Stop()
	return b
}

func (b *stallBody) fire() {
	b.stalled.Store(true)
	b.cancel(ErrAnswerStalled)
}

func (b *stallBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return b.rc.Read(p)
	}
	b.timer.Reset(b.stall)
	n, err := b.rc.Read(p)
	b.timer.Stop()
	if b.stalled.Load() {
		return n, fmt.Errorf("%w (%v)", ErrAnswerStalled, b.stall)
	}
	return n, err
}

func (b *stallBody) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}
