package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/partnerapi/partner-go/internal/errs"
)

// This file is the report stage: the one place that turns a call's
// last attempt into its answer or error (finish, settle), the capture of
// its end (CallOptions.Capture) and its debug log. otel.go holds its
// spans and metrics, secrets.go the masking of what a server said.

// finish turns the end of a call's attempts into its answer: the 2xx
// response, or the error, marked by the call's state (call.settle).
func (c *Client) finish(ctx context.Context, r *Request, path string, st *call, resp *http.Response, err error) (*http.Response, error) {
	switch {
	case st.tokenErr != nil:
		// The token of a repeat could not be had: the token's error.
		st.captureEnd(ctx, nil)
		return nil, st.settle(st.tokenErr)
	case err != nil:
		// The *url.Error layer repeats the full URL with its query
		// string, which may carry a signature or token: drop it before
		// the error is logged or returned.
		err = c.secrets.maskErr(unwrapURLError(err))
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		err = st.settle(err)
		st.captureEnd(ctx, nil)
		st.logDebug(ctx, "partner: request failed", nil, slog.String("error", err.Error()))
		return nil, errs.Wrap(err, "%s %s", r.Method, path)
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		st.capture(resp)
		st.logDebug(ctx, "partner: request done", resp, slog.Duration("elapsed", time.Since(st.start)))
		return resp, nil
	case resp.StatusCode == http.StatusNotFound && r.Method == http.MethodDelete && st.ambiguous:
		st.logDebug(ctx, "partner: 404 after an attempt whose outcome was unknown: already deleted", resp)
		resp = alreadyDone(resp)
		st.capture(resp)
		return resp, nil
	}
	if st.stop != "" {
		st.logDebug(ctx, "partner: not retrying: "+st.stop, resp, slog.Duration("elapsed", time.Since(st.start)))
	} else {
		st.logDebug(ctx, "partner: request done", resp, slog.Duration("elapsed", time.Since(st.start)))
	}
	st.capture(resp)
	e := newError(resp, r.Method, path)
	e.RequestID, e.ServiceRequestID = st.requestID, st.serviceRequestID(resp)
	c.secrets.maskError(e)
	return nil, st.settle(e)
}

// alreadyDone closes resp and returns an empty 204 in its place.
func alreadyDone(resp *http.Response) *http.Response {
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	return &http.Response{
		Status: "204 No Content", StatusCode: http.StatusNoContent,
		Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
		Header: http.Header{}, Body: http.NoBody, Request: resp.Request,
	}
}

// unwrapURLError drops the *url.Error layer, whose text repeats the full
// URL with its query string.
func unwrapURLError(err error) error {
	if uerr, ok := errors.AsType[*url.Error](err); ok {
		return uerr.Err
	}
	return err
}

// outcomeUnknown reports whether the service may have done the call's
// write without the client learning the result.
func (st *call) outcomeUnknown() bool { return !st.idempotent && st.ambiguous }

// settle is the one place that marks a call's error with what its
// attempts learnt: ErrBodyNotReplayable, ErrRetryBudgetExhausted and
// ErrOutcomeUnknown (an *Error carries the last as OutcomeUnknown).
func (st *call) settle(err error) error {
	unknown := st.outcomeUnknown()
	if e, ok := err.(*Error); ok {
		e.OutcomeUnknown, unknown = unknown, false
	}
	if st.replayBlocked {
		err = errs.With(err, ErrBodyNotReplayable)
	}
	if st.budgetExhausted {
		err = errs.With(err, ErrRetryBudgetExhausted)
	}
	if unknown {
		err = errs.With(err, ErrOutcomeUnknown)
	}
	return err
}

// logDebug logs one event of the call at debug level: msg with the
// call's method and path, the number of its current attempt (attempt,
// from 1, as ResponseInfo.Attempts counts), its request id, and, when
// resp is an attempt's answer, its status and the service's request id.
// It builds no attribute when the logger does not log debug.
func (st *call) logDebug(ctx context.Context, msg string, resp *http.Response, attrs ...slog.Attr) {
	log := st.c.cfg.Logger
	if !log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	base := make([]slog.Attr, 0, 6+len(attrs))
	base = append(base, slog.String("method", st.method), slog.String("path", st.path), slog.Int("attempt", st.attempts()))
	if resp != nil {
		base = append(base, slog.Int("status", resp.StatusCode))
	}
	if st.requestID != "" {
		base = append(base, slog.String("request_id", st.requestID))
	}
	if id := st.serviceRequestID(resp); id != "" {
		base = append(base, slog.String("service_request_id", id))
	}
	log.LogAttrs(ctx, slog.LevelDebug, msg, append(base, attrs...)...)
}

// attempts is the number of the call's current attempt, from 1: the
// library's attempts and the sends the transport made again by itself
// (noReplay).
func (st *call) attempts() int { return st.attempt + 1 + st.resends }

// captureMu serialises the writes of every Capture: the requests of an
// export, sent at once under one context, share theirs.
var captureMu sync.Mutex

// captureEnd is capture, save for a request the SDK abandoned (an
// export's read-ahead, cancelled with errs.ErrAbandoned): it is not
// one the caller made, and the Capture keeps what it holds.
func (st *call) captureEnd(ctx context.Context, resp *http.Response) {
	if !errors.Is(context.Cause(ctx), errs.ErrAbandoned) {
		st.capture(resp)
	}
}

// capture fills the call's Capture, when it has one, with its end.
func (st *call) capture(resp *http.Response) {
	if st.captureTo == nil {
		return
	}
	info := ResponseInfo{Attempts: st.attempts(), Duration: time.Since(st.start), RequestID: st.requestID}
	if resp != nil {
		info.StatusCode, info.Header = resp.StatusCode, st.c.secrets.maskHeader(resp.Header)
		info.ServiceRequestID = st.serviceRequestID(resp)
	}
	captureMu.Lock()
	*st.captureTo = info
	captureMu.Unlock()
}

// serviceRequestID is the service's id of the request in resp, masked
// (a server may echo a token there), "" when the client reads none.
func (st *call) serviceRequestID(resp *http.Response) string {
	if st.c.cfg.ServiceRequestIDHeader == "" || resp == nil {
		return ""
	}
	return st.c.secrets.mask(resp.Header.Get(st.c.cfg.ServiceRequestIDHeader))
}
