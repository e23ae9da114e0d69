package core

// This file keeps the transport under the pipeline from sending a
// request again by itself once any of it may have reached the server:
// net/http and its HTTP/2 transport rewind a request through GetBody
// (an HTTP/2 stream the peer reset with PROTOCOL_ERROR, a pooled
// connection that broke), and replay a request without a body freely.
// The retry policy (checkRetry) is the one place that decides a retry.

import (
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
)

// noReplay makes hop, the request of one hop of an attempt as the
// transport gets it, one the transport cannot send again by itself once
// any of it may have reached the server: it cannot rewind its body
// (GetBody is nil), so a failure after its body was read is the
// attempt's failure, which checkRetry judges. A request without a body
// that is not safe to repeat gets an empty one-shot body, which the
// transport cannot rewind either (HTTP/2 would otherwise replay it). The
// client's http.Client keeps the request's own GetBody, with which it
// follows a 307 or 308 redirect.
func (st *call) noReplay(hop *http.Request) {
	hop.GetBody = nil
	if !st.idempotent && (hop.Body == nil || hop.Body == http.NoBody) {
		hop.Body, hop.ContentLength = emptyBody{}, 0
	}
}

// countResends returns ctx for a hop of req, which the transport may
// send again by itself when it is safe to repeat and has no body (HTTP/2
// does so after a refused or reset stream, HTTP/1 after a pooled
// connection broke): each such send counts as a retry of the policy, and
// once the policy allows no more, the hop is cancelled with
// errResendRefused. net/http may read the hop's trace after the call is
// over (when the answer's body is read), and WithClientTrace writes into
// it the hooks of a trace already in ctx: the call's own trace, which
// nothing writes, serves a hop whose context has none; any other hop gets
// a trace of its own.
func (st *call) countResends(ctx context.Context, req *http.Request, cancel context.CancelCauseFunc) context.Context {
	if !st.idempotent || (req.Body != nil && req.Body != http.NoBody) {
		return ctx
	}
	st.hopSent, st.hopCancel = false, cancel
	if httptrace.ContextClientTrace(ctx) == nil {
		return httptrace.WithClientTrace(ctx, &st.hooks.trace)
	}
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: st.hooks.trace.GotConn, WroteRequest: st.hooks.trace.WroteRequest})
}

// countResend is the GotConn of a hop's trace: from the hop's second
// connection on, each is a send made again by the transport.
func (st *call) countResend(httptrace.GotConnInfo) {
	if !st.hopSent {
		st.hopSent = true
		return
	}
	if !st.takeResend() {
		st.hopCancel(errResendRefused)
	}
}

// takeResend counts a send the transport makes again by itself as a
// retry of the call under its policy (MaxRetries, the retry time cap,
// the budget); false when the policy allows no more.
func (st *call) takeResend() bool {
	if !st.affordRetry(nil, nil) {
		return false
	}
	st.resends++
	return true
}

// emptyBody is the body of a request without one that is not safe to
// repeat (noReplay).
type emptyBody struct{}

func (emptyBody) Read([]byte) (int, error) { return 0, io.EOF }
func (emptyBody) Close() error             { return nil }
