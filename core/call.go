package core

// This file is the state of one call across its attempts, which every
// stage reads and writes, and the signing of its attempts.

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"golang.org/x/oauth2"
)

// call is the state of one call of Client.Send across its attempts (the
// retries and the repeat after a 401). Its go-retryablehttp client and
// HTTP client (send.go), whose hooks, transport and redirect rule are
// its methods, are made once per pooled call (sendHooks): none looks the
// call up. Only wrote is touched by another goroutine (net/http's write
// loop); the rest belongs to the goroutine running the call.
//
// Its fields are grouped by what they hold (the request, the options,
// the current attempt and hop, what the attempts learnt, telemetry, the
// pooled hooks); its methods sit in the file of the stage they belong to
// (callopts.go, send.go, noreplay.go, answer.go, retry.go, report.go,
// otel.go), each stage reading and writing the one state that the
// library's hooks share, rather than a type per stage handing it on.
type call struct {
	c            *Client
	method, path string                     // for the log
	idempotent   bool                       // safe to repeat after the server may have processed it
	auth         bool                       // the request carries the client's token
	body         *body                      // nil when the request has no body
	observe      func(*http.Response)       // Request.Observe
	read         func(*http.Response) error // Request.Read
	// decodes is set by Do when it decodes the answer: readAnswer then
	// reads a body of unknown length too, and keeps a body it read whole
	// in answer.
	decodes bool
	answer  []byte
	// maxAnswer caps the 2xx answer's body (Request.MaxAnswerSize).
	maxAnswer int64
	// sameHost refuses any redirect to another host
	// (Request.NoCrossHostRedirect).
	sameHost bool
	start    time.Time
	// What the call's CallOptions say, read once (readOptions).
	header         http.Header   // CallOptions.Header
	attemptTimeout time.Duration // CallOptions.AttemptTimeout
	maxRetries     int           // retries for failures: CallOptions' or the policy's
	captureTo      *ResponseInfo // CallOptions.Capture
	// requestID is sent in the request id header (requestIDValue), ""
	// when it is off.
	requestID      string
	requestIDValue []string
	// timer bounds the current attempt (CallOptions.AttemptTimeout).
	timer *attemptTimer

	wrote   atomic.Bool   // the current attempt wrote its headers
	tok     *oauth2.Token // the token of the current attempt
	attempt int           // the current attempt, from 0
	retries int           // retries made for a failure (not the repeat after a 401)
	resends int           // of them, sends the transport made again by itself (noReplay)
	// replayed is set once the request was repeated after a 401.
	replayed bool
	cost     int // tokens taken for the last retry, refunded on success
	// wait is the wait before the next attempt, chosen with the decision
	// to make it (checkRetry).
	wait time.Duration
	// The current hop, for its resends (noreplay.go): whether it got a
	// connection, and the cancel of its context.
	hopSent   bool
	hopCancel context.CancelCauseFunc

	// What the attempts learnt, for the call's error (settle).
	ambiguous       bool   // an attempt may have been processed without an answer
	replayBlocked   bool   // a repeat was called for but the body cannot be sent again
	budgetExhausted bool   // the retry budget refused a retry
	tokenErr        error  // getting the token of a repeat failed
	stop            string // why retries stopped before MaxRetries, for the log

	tel callTel // spans and metrics of the attempts (otel.go)

	// hooks are the call's go-retryablehttp client, HTTP client and
	// transport (send.go), bound to this call once, nil until bindHooks.
	hooks *sendHooks
	// kept is set when something outside the call may still reach it
	// once the call is over (the trace of a write, whose write loop may
	// outlive it): it is then not reused.
	kept bool
}

// callPool holds the calls that ended, for reuse (getCall, release): a new
// call takes one with its hooks already bound instead of making its
// go-retryablehttp client, HTTP client and their method values anew.
var callPool sync.Pool

// getCall returns a call in its zero state, with its hooks bound.
func getCall() *call {
	if st, ok := callPool.Get().(*call); ok {
		return st
	}
	st := new(call)
	st.bindHooks()
	return st
}

// ownsAnswer reports whether only core reads the answers' bodies: Do
// decodes them (a Decoder and Request.Read are handed them). The
// call's hops may then share one stallBody, which goes back to the pool
// with the call.
func (st *call) ownsAnswer() bool { return st.decodes && st.read == nil && st.hooks != nil }

// release returns st for reuse, in its zero state, once its call is
// over: when Do has decoded the answer, when Send returns. Nothing the
// call handed on (the response and its body, an error, a capture) points
// to st. net/http may still read the trace of a hop once its body is
// read: the call's own trace is never written once bound, and a hop
// under another trace gets one of its own (countResends). A call that
// is kept is left to the collector.
func (st *call) release() {
	if st == nil || st.kept {
		return
	}
	h := st.hooks
	*st = call{hooks: h}
	h.req = retryablehttp.Request{}
	callPool.Put(st)
}

type callKey struct{}

// withCall marks ctx as the context of a call when it carries
// CallOptions: a call made for it (its token request) finds that it is
// nested (newCall) and does not take them; without options there is
// nothing it could take. When traceWrites, it adds a trace that notes
// when an attempt has written its headers; the call is then kept (its
// write loop may still call the trace once the call is over).
func withCall(ctx context.Context, st *call, traceWrites bool) context.Context {
	if callOptionsOf(ctx) != nil {
		ctx = context.WithValue(ctx, callKey{}, callKey{})
	}
	if !traceWrites {
		return ctx
	}
	st.kept = true
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteHeaders: func() { st.wrote.Store(true) },
		WroteRequest: st.hooks.trace.WroteRequest,
	})
}

// tracesWrites reports whether the call's context carries withCall's
// trace, which notes when an attempt wrote its headers and its request:
// whether an attempt wrote its request matters only to requests that are
// not repeated freely, and to a DELETE (a 404 after an attempt that may
// have been processed means done).
func (st *call) tracesWrites() bool { return !st.idempotent || st.method == http.MethodDelete }

// nested reports whether ctx belongs to a call: a request made in it is
// made for that call.
func nested(ctx context.Context) bool {
	_, ok := ctx.Value(callKey{}).(callKey)
	return ok
}

// sign sets the Authorization header to the client's current token.
func (st *call) sign(ctx context.Context, h http.Header) error {
	tok, err := st.c.cfg.Tokens.Token(ctx)
	if err != nil {
		st.tokenErr = err
		return err
	}
	st.tok = tok
	h["Authorization"] = st.c.authHeader(tok.AccessToken)
	return nil
}
