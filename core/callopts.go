package core

// This file is per-call control, carried by the context: the options one
// call (or every request of one iterator or Wait) sets for itself, read
// once into the call (readOptions), and the call's request id. The
// attempt timeout they set is applied in the send stage (send.go).

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
	"unsafe"

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

// newRequestID returns a random (version 4) UUID as the value of the
// request id header: the id's text and the slice that holds it are one
// allocation (the text is never written once made). Its bits come from
// math/rand/v2's generator (ChaCha8, seeded by the runtime from the
// system's entropy): an id marks a call in logs on both sides, it is no
// secret, and crypto/rand's reader costs some 700 instructions more a
// call.
func newRequestID() []string {
	var u [16]byte
	binary.LittleEndian.PutUint64(u[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(u[8:], rand.Uint64())
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	id := new(struct {
		value [1]string
		b     [36]byte
	})
	b := id.b[:]
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	id.value[0] = unsafe.String(&id.b[0], len(id.b))
	return id.value[:]
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
