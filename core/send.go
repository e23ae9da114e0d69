package core

// This file is the send stage: the call's go-retryablehttp client, whose
// hooks are the call's methods, and the call's HTTP client over the
// shared connection pool, whose transport and redirect rule are the
// call's too, both bound once per pooled call (sendHooks); the default
// timeouts of the HTTP client New builds, the attempt timeout
// (CallOptions.AttemptTimeout) around each attempt's round trip, and the
// stall timeout of answer bodies. Nothing here looks the call up in a
// context.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"go.opentelemetry.io/otel/propagation"
)

// sharedHTTP is what every call of a Client shares of its HTTP client:
// the given (or built) client, its transport, and the redirect rules'
// inputs.
type sharedHTTP struct {
	hc          http.Client       // the given client; Transport and CheckRedirect are the call's
	rt          http.RoundTripper // the given client's transport
	next        func(*http.Request, []*http.Request) error
	serviceOnly []string // headers dropped on a redirect to another host
	prop        propagation.TextMapPropagator
	// stall bounds the wait of every Read of an answer's body
	// (Config.StallTimeout).
	stall *waitWatch
	// headers bounds the wait for answers' headers on the HTTP client
	// New builds; nil on a given one, which keeps its own timeouts.
	headers *waitWatch
}

func newSharedHTTP(cfg *Config, prop propagation.TextMapPropagator) *sharedHTTP {
	h := &sharedHTTP{hc: *cfg.HTTPClient, rt: cfg.HTTPClient.Transport, next: cfg.HTTPClient.CheckRedirect,
		serviceOnly: cfg.serviceOnlyHeaders(), prop: prop, stall: newStallWatch(cfg.StallTimeout)}
	if h.rt == nil {
		h.rt = http.DefaultTransport
	}
	return h
}

// sendHooks are the go-retryablehttp client, HTTP client and transport
// of one pooled call, and the method values they hold, bound to it once
// (bindHooks): checkRetry decides every repeat (the retries for
// failures, a call's own CallOptions.MaxRetries, the repeat after a 401);
// the library's own limits are off.
type sendHooks struct {
	// req is the call's request (newRequest), emptied by release.
	req retryablehttp.Request
	rc  retryablehttp.Client
	hc  http.Client
	hop hopTransport
	// trace is the trace of a hop whose context has no other
	// (countResends): its GotConn is the call's countResend, its
	// WroteRequest the hop's hopWait's. wroteTrace has only the
	// latter, for a hop whose writes no other trace notes (hopContext).
	// They are never written once bound, so that net/http may read them
	// after the call.
	trace, wroteTrace httptrace.ClientTrace
}

// bindHooks makes st's hooks.
func (st *call) bindHooks() {
	h := new(sendHooks)
	h.hop.st = st
	h.trace = httptrace.ClientTrace{GotConn: st.countResend, WroteRequest: h.hop.wait.wroteRequest}
	h.wroteTrace = httptrace.ClientTrace{WroteRequest: h.trace.WroteRequest}
	h.rc = retryablehttp.Client{
		HTTPClient:     &h.hc,
		Logger:         nil, // the call logs itself, without URLs' query strings or headers
		RetryMax:       math.MaxInt32,
		CheckRetry:     st.checkRetry,
		Backoff:        st.backoff,
		RequestLogHook: st.beforeAttempt,
		PrepareRetry:   st.prepareRetry,
		ErrorHandler:   dropResponse,
	}
	h.hc.CheckRedirect = st.checkRedirect
	st.hooks = h
}

// retryClient returns the call's go-retryablehttp client, over an HTTP
// client like its Client's, whose transport and redirect rule are the
// call's.
func (st *call) retryClient() *retryablehttp.Client {
	sh, h := st.c.hc, st.hooks
	h.hop.rt = sh.rt
	checkRedirect := h.hc.CheckRedirect
	h.hc = sh.hc
	h.hc.Transport, h.hc.CheckRedirect = &h.hop, checkRedirect
	return &h.rc
}

// dropResponse is the go-retryablehttp ErrorHandler: a call that ends in
// an error returns no response.
func dropResponse(resp *http.Response, err error, _ int) (*http.Response, error) {
	if err != nil && resp != nil {
		resp.Body.Close()
		resp = nil
	}
	return resp, err
}

// checkRedirect is the call's redirect rule, before the given client's
// CheckRedirect:
//   - a redirect from https to http is refused (ErrInsecureRedirect);
//   - a redirect to another host drops Authorization (net/http would keep
//     it for a subdomain), the headers meant for the service only (fixed
//     headers, the environment, a gateway's subscription key, the call's
//     own) and those of the trace context;
//   - a redirect to another host that would carry the request's body,
//     and any redirect to another host of a request that forbids it, is
//     refused (ErrCrossHostRedirect).
func (st *call) checkRedirect(req *http.Request, via []*http.Request) error {
	sh := st.c.hc
	if len(via) > 0 {
		if req.URL.Scheme == "http" && via[len(via)-1].URL.Scheme == "https" {
			return ErrInsecureRedirect
		}
		if !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
			if err := st.crossHostRefused(req, via[0]); err != nil {
				return err
			}
			req.Header.Del("Authorization")
			for _, k := range sh.serviceOnly {
				req.Header.Del(k)
			}
			for _, k := range sh.prop.Fields() {
				req.Header.Del(k)
			}
			for k := range st.header {
				req.Header.Del(k)
			}
		}
	}
	if sh.next != nil {
		return sh.next(req, via)
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// crossHostRefused returns the error of a redirect of first to req on
// another host that the call refuses, nil when it may follow. net/http
// has set req's body for a 307 or 308 by then.
func (st *call) crossHostRefused(req, first *http.Request) error {
	if st.sameHost {
		return fmt.Errorf("%w: %s %s answered with a redirect to %s; a token request follows none",
			ErrCrossHostRedirect, first.Method, first.URL.Path, req.URL.Host)
	}
	if req.Body != nil && req.Body != http.NoBody {
		return fmt.Errorf("%w: %s %s answered with a redirect to %s that would carry the request's body",
			ErrCrossHostRedirect, first.Method, first.URL.Path, req.URL.Host)
	}
	return nil
}

// hopTransport is the transport of the call's HTTP client: the given
// one, without CloseIdleConnections (go-retryablehttp calls it whenever
// a request finally fails, which would empty the connection pool every
// other call shares). It gets requests it cannot replay (noreplay.go),
// bounded by the call's AttemptTimeout, and their answers' bodies fail
// with ErrAnswerStalled when they send nothing for the stall timeout.
type hopTransport struct {
	st *call
	rt http.RoundTripper
	// body is the call's own stallBody, for the hops whose answer only
	// core reads (call.ownsAnswer).
	body stallBody
	// wait is the hop's wait for its answer's headers, when the Client
	// watches them (sharedHTTP.headers).
	wait hopWait
}

// hopContext returns ctx for a hop of req, cancelled by cancel: with the
// trace that counts its resends (countResends), or, when the Client
// watches the wait for answers' headers and no trace of the call notes
// when the hop's request was written, with one that does.
func (h *hopTransport) hopContext(ctx context.Context, req *http.Request, cancel context.CancelCauseFunc) context.Context {
	st := h.st
	if rctx := st.countResends(ctx, req, cancel); rctx != ctx || st.c.hc.headers == nil || st.tracesWrites() {
		return rctx
	}
	if httptrace.ContextClientTrace(ctx) == nil {
		return httptrace.WithClientTrace(ctx, &st.hooks.wroteTrace)
	}
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: st.hooks.wroteTrace.WroteRequest})
}

func (h *hopTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// Each attempt (and each hop of a redirect) has a context of its own,
	// cancelled when its body stalls or is closed: cancelling is how
	// net/http stops a read blocked on the connection. It holds the
	// attempt's span, for the transport's own tracing.
	ctx, cancel := context.WithCancelCause(h.st.attemptContext(req.Context()))
	hop := req.WithContext(h.hopContext(ctx, req, cancel))
	h.st.noReplay(hop)
	watch := h.st.c.hc.headers
	if watch != nil {
		watch.begin(&h.wait, cancel)
	}
	resp, err := h.st.roundTrip(h.rt, hop)
	if watch != nil && watch.end(&h.wait) {
		if err == nil {
			resp.Body.Close()
		}
		resp, err = nil, &headerTimeoutError{watch.timeout}
	}
	if err != nil && errors.Is(context.Cause(ctx), errResendRefused) {
		err = errResendRefused
	}
	if err != nil || resp.Body == nil || resp.Body == http.NoBody {
		cancel(nil)
		return resp, err
	}
	body := &h.body
	if !h.st.ownsAnswer() {
		body = new(stallBody)
	}
	resp.Body = body.use(resp.Body, h.st.c.hc.stall, cancel)
	return resp, nil
}

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

// serviceOnlyHeaders names the headers that must not follow a redirect to
// another host.
func (cfg *Config) serviceOnlyHeaders() []string {
	names := []string{cfg.EnvHeader, cfg.SubscriptionKeyHeader}
	for k := range cfg.Header {
		names = append(names, k)
	}
	return names
}

// stallBody fails a Read that receives nothing for the stall timeout:
// the client's stall watch, which holds the body from its hop's answer
// until it is closed or read to its end, cancels the hop's context once
// a Read has waited that long (watch.go). A Read only notes when it began to wait:
// no timer is armed per Read. Time spent outside Read (the caller
// writing what it read to a slow disk) does not count. A call whose
// answer only core reads (Do decoding it) uses its own stallBody for
// each of its hops, and the next call taken from the pool does too
// (hopTransport.body); any other hop gets a new one, since its body is
// handed on.
type stallBody struct {
	rc    io.ReadCloser
	watch *waitWatch
	wait  hopWait
	// cancel ends the hop's context.
	cancel context.CancelCauseFunc
}

// use makes b the body of a hop whose answer's body is rc, cancelled
// with cancel, watched by watch: of a new hop, once the last one's body
// was closed.
func (b *stallBody) use(rc io.ReadCloser, watch *waitWatch, cancel context.CancelCauseFunc) *stallBody {
	b.rc, b.watch, b.cancel = rc, watch, cancel
	watch.begin(&b.wait, cancel)
	return b
}

func (b *stallBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return b.rc.Read(p)
	}
	b.wait.began.Store(b.watch.now().UnixNano())
	n, err := b.rc.Read(p)
	b.wait.began.Store(0)
	// A body that ended (read whole, or failed) waits no more: it
	// leaves the watch, which would otherwise hold it until closed.
	if err != nil && b.watch.end(&b.wait) && err != io.EOF {
		return n, fmt.Errorf("%w (%v)", ErrAnswerStalled, b.watch.timeout)
	}
	return n, err
}

func (b *stallBody) Close() error {
	b.watch.end(&b.wait)
	err := b.rc.Close()
	b.cancel(nil)
	return err
}

// attemptTimeoutError is the failure of an attempt that ran past
// CallOptions.AttemptTimeout.
type attemptTimeoutError struct{ d time.Duration }

func (e *attemptTimeoutError) Error() string {
	return fmt.Sprintf("partner: attempt timed out after %s (CallOptions.AttemptTimeout)", e.d)
}

// Timeout marks it a timeout (net.Error), for the retry budget's cost.
func (e *attemptTimeoutError) Timeout() bool   { return true }
func (e *attemptTimeoutError) Temporary() bool { return true }

// attemptTimer bounds the current attempt of a call with an
// AttemptTimeout: it cancels the attempt's context when the time is up.
type attemptTimer struct {
	t        *time.Timer
	cancel   context.CancelFunc
	timedOut atomic.Bool
}

// stop stops the timer; the attempt's context stays alive until its body
// is closed (attemptBody.Close).
func (a *attemptTimer) stop() { a.t.Stop() }

// expired reports whether the attempt ran out of time.
func (a *attemptTimer) expired() bool { return a.timedOut.Load() }

// roundTrip sends req through rt, bounded by the call's AttemptTimeout
// when it has one.
func (st *call) roundTrip(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	if st.attemptTimeout <= 0 {
		return rt.RoundTrip(req)
	}
	ctx, cancel := context.WithCancel(req.Context())
	a := &attemptTimer{cancel: cancel}
	a.t = time.AfterFunc(st.attemptTimeout, func() {
		a.timedOut.Store(true)
		cancel()
	})
	st.timer = a
	resp, err := rt.RoundTrip(req.WithContext(ctx))
	if err != nil {
		a.stop()
		cancel()
		return nil, err
	}
	resp.Body = &attemptBody{ReadCloser: resp.Body, a: a}
	return resp, nil
}

// attemptBody releases the attempt's timer and context when closed.
type attemptBody struct {
	io.ReadCloser
	a *attemptTimer
}

func (b *attemptBody) Close() error {
	b.a.stop()
	b.a.cancel()
	return b.ReadCloser.Close()
}

// attemptErr turns the failure of an attempt that ran out of time into
// the attempt timeout's error.
func (st *call) attemptErr(err error) error {
	if err != nil && st.timer != nil && st.timer.expired() && errors.Is(err, context.Canceled) {
		return &attemptTimeoutError{st.attemptTimeout}
	}
	return err
}
