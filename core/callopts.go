package core

// This file is per-call control, carried by the context: the options one
// call (or every request of one iterator or Wait) sets for itself, read
// once into the call (readOptions), the call's request id, and the
// attempt timeout, applied around each attempt's round trip.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/partnerapi/partner-go/internal/check"
)

// DefaultRequestIDHeader is the header that carries the request id the
// SDK generates for each call (Config.RequestIDHeader).
const DefaultRequestIDHeader = "X-Request-Id"

// CallOptions is what one call sets for itself, beside its deadline (the
// context's). Put them in the call's context with WithCallOptions; an
// iterator or a Wait given that context applies them to each of its
// requests. The zero value changes nothing.
//
// They never change whether a write is repeated after the service may
// have processed it: a write that is not safe to repeat is retried only
// when it certainly was not processed, whatever MaxRetries says, and its
// error still reports IsOutcomeUnknown when it may have been.
type CallOptions struct {
	// Header adds headers to the call's requests to the service (not to
	// an absolute URL on another host, nor past a redirect to one). The
	// headers the SDK sets itself (Authorization, Accept, Content-Type,
	// User-Agent, the environment, subscription key and request id
	// headers, the trace context) cannot be set here, nor
	// Idempotency-Key and X-Idempotency-Key, which would let net/http
	// send a write again after a broken connection: such a call fails
	// before sending.
	Header http.Header
	// AttemptTimeout bounds each attempt, from sending it until its
	// answer's headers and, for an answer the call decodes, its body are
	// read; zero means no bound but the context's. An attempt that runs
	// out is a failure like a lost answer: it is retried within the
	// call's deadline when the call is safe to repeat, or when nothing
	// of it was written.
	AttemptTimeout time.Duration
	// MaxRetries, when above zero, replaces the client's number of
	// retries after the first attempt; NoRetries sends each request
	// once (and once more after a 401, with a new token). The client's
	// other limits (retry time cap, Retry-After cap, retry budget) still
	// apply.
	MaxRetries int
	NoRetries  bool
	// Capture, when set, is filled with the final answer of the call
	// (of each request, for an iterator or a Wait: it then holds the
	// last one's), successful or not. Requests sent at once under one
	// context (an export's pages) write it one at a time: it holds the
	// answer of the request that ended last, leaving out the requests
	// the SDK itself abandoned (an export's read-ahead past the last
	// page, cancelled once it was known). Read it once the call has
	// returned. What the server sent is masked in it as in an Error (a
	// token the server echoes reads [redacted]).
	Capture *ResponseInfo
}

// ResponseInfo is what CallOptions.Capture receives: the final answer of a
// call and how it was reached.
type ResponseInfo struct {
	// StatusCode and Header are the final answer's (a value of Header
	// that holds one of the client's secrets is masked); zero and nil
	// when the call ended without an answer (a network error, a
	// timeout).
	StatusCode int
	Header     http.Header
	// Attempts counts the requests sent: the first, every retry, and the
	// repeat after a 401.
	Attempts int
	// Duration is the time the call took, retries and their waits
	// included, until its answer (read whole when the call decodes it)
	// or its error.
	Duration time.Duration
	// RequestID is the id the SDK sent in its request id header, the
	// same on every attempt; "" when that header is off.
	RequestID string
	// ServiceRequestID is the service's own id of the request, read from
	// the header Config.ServiceRequestIDHeader names (masked as Header
	// is); "" when none.
	ServiceRequestID string
}

type callOptionsKey struct{}

// WithCallOptions returns a context that carries o: every call made with
// it applies o (see CallOptions). It replaces the options an enclosing
// WithCallOptions put in ctx. A call's own token request (when the
// client fetches a token for it) does not take them.
func WithCallOptions(ctx context.Context, o CallOptions) context.Context {
	return context.WithValue(ctx, callOptionsKey{}, &o)
}

// callOptionsOf returns the options in ctx, nil when none.
func callOptionsOf(ctx context.Context) *CallOptions {
	o, _ := ctx.Value(callOptionsKey{}).(*CallOptions)
	return o
}

// checkCallHeader refuses per-call headers that the SDK sets itself.
func (c *Client) checkCallHeader(h http.Header) error {
	for k := range h {
		if c.reserved(k) {
			return fmt.Errorf("partner: CallOptions.Header: %q is set by the SDK", k)
		}
		if err := check.ReplayHeader(k); err != nil {
			return fmt.Errorf("partner: CallOptions.Header: %w", err)
		}
	}
	return nil
}

// reserved reports whether the SDK sets the header k itself.
func (c *Client) reserved(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Authorization", "Accept", "Content-Type", "Content-Length", "Host", "User-Agent",
		"Traceparent", "Tracestate", "Baggage", "Transfer-Encoding", "Connection":
		return true
	}
	for _, own := range []string{c.cfg.EnvHeader, c.cfg.SubscriptionKeyHeader, c.reqIDHeader} {
		if own != "" && strings.EqualFold(k, own) {
			return true
		}
	}
	for _, f := range c.tel.prop.Fields() {
		if strings.EqualFold(k, f) {
			return true
		}
	}
	return false
}

// newRequestID returns a random (version 4) UUID.
func newRequestID() string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// readOptions reads the CallOptions in ctx into the call's state, once:
// the only place that reads them. A call made for another call (its
// token request) takes none.
func (st *call) readOptions(ctx context.Context) error {
	st.maxRetries = st.c.cfg.Retry.maxRetries()
	if nested(ctx) {
		return nil
	}
	o := callOptionsOf(ctx)
	if o == nil {
		return nil
	}
	if err := st.c.checkCallHeader(o.Header); err != nil {
		return err
	}
	st.header, st.attemptTimeout, st.captureTo = o.Header, o.AttemptTimeout, o.Capture
	switch {
	case o.NoRetries:
		st.maxRetries = 0
	case o.MaxRetries > 0:
		st.maxRetries = o.MaxRetries
	}
	return nil
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

// notSent reports whether err says that the server did not process the
// request, from errors whose types net/http does not export: it closes
// a pooled connection the server closed while it was idle before the
// request is counted on it ("server closed idle connection"); an
// HTTP/2 server refused the stream (REFUSED_STREAM), or announced with
// GOAWAY that it stops below the stream's id. The HTTP/2 transports
// (net/http's and x/net's), which may not rewind the body (noReplay),
// report the last two as "cannot retry err [...]", with the cause
// formatted into the text.
//
// An error in err's chain must be one of these, whole (notSentText): a
// server can put any text in what an error quotes (GOAWAY debug data, a
// malformed HTTP/1.1 header line), but not make the transport's own
// error read exactly so.
func notSent(err error) bool { return notSentChain(err, 0) }

// notSentChain is notSent of err and the errors it wraps (Unwrap() error
// and Unwrap() []error), depth levels down already.
func notSentChain(err error, depth int) bool {
	if err == nil || depth > 64 {
		return false
	}
	if notSentText(err.Error()) {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return notSentChain(u.Unwrap(), depth+1)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if notSentChain(e, depth+1) {
				return true
			}
		}
	}
	return false
}

// The texts of the transports' errors that say a request was not
// processed: net/http's (HTTP/1 and its bundled HTTP/2) and x/net/http2's
// write them alike.
const (
	closedIdleText   = "http: server closed idle connection"
	goAwayText       = "http2: Transport received Server's graceful shutdown GOAWAY"
	cannotRetryText  = "http2: Transport: cannot retry err ["
	cannotRetryAfter = "] after Request.Body was written; define Request.GetBody to avoid this error"
)

// notSentText reports whether msg is, whole, the text of an error that
// says the request was not processed: the idle connection's, the
// graceful GOAWAY's or a stream refused by the peer, or one of the last
// two inside HTTP/2's "cannot retry err [...]".
func notSentText(msg string) bool {
	if msg == closedIdleText {
		return true
	}
	if inner, ok := strings.CutPrefix(msg, cannotRetryText); ok {
		if msg, ok = strings.CutSuffix(inner, cannotRetryAfter); !ok {
			return false
		}
	}
	return msg == goAwayText || refusedStreamText(msg)
}

// refusedStreamText reports whether msg is the text of an HTTP/2
// StreamError of code REFUSED_STREAM that the peer sent:
// "stream error: stream ID <n>; REFUSED_STREAM; received from peer".
func refusedStreamText(msg string) bool {
	id, ok := strings.CutPrefix(msg, "stream error: stream ID ")
	if !ok {
		return false
	}
	id, ok = strings.CutSuffix(id, "; REFUSED_STREAM; received from peer")
	if !ok || id == "" || len(id) > 10 {
		return false
	}
	for _, c := range id {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
