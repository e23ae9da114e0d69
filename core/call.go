package core

// This file is the state of one call across its attempts, and the one
// place that turns what the attempts learnt into the call's error.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"

	"github.com/partnerapi/partner-go/internal/errs"
)

// call is the state of one call of Client.Send across its attempts (the
// retries and the repeat after a 401). It travels in the request's
// context (withCall, callOf): go-retryablehttp's hooks see the request or
// its context, not the call. Only wrote is touched by another goroutine
// (net/http's write loop); the rest belongs to the goroutine running the
// call.
type call struct {
	c            *Client
	method, path string                     // for the log
	idempotent   bool                       // safe to repeat after the server may have processed it
	auth         bool                       // the request carries the client's token
	body         *body                      // nil when the request has no body
	observe      func(*http.Response)       // Request.Observe
	read         func(*http.Response) error // Request.Read
	// decodes is set by Do when it decodes the answer: readAnswer then
	// reads a body of unknown length too.
	decodes bool
	// maxAnswer caps the 2xx answer's body (Request.MaxAnswerSize).
	maxAnswer int64
	// sameHost refuses any redirect to another host
	// (Request.NoCrossHostRedirect).
	sameHost bool
	start    time.Time
	// opts are the call's CallOptions, nil when it has none.
	opts *CallOptions
	// requestID is sent in the request id header, "" when it is off.
	requestID string
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

	// What the attempts learnt, for the call's error (settle).
	ambiguous       bool   // an attempt may have been processed without an answer
	replayBlocked   bool   // a repeat was called for but the body cannot be sent again
	budgetExhausted bool   // the retry budget refused a retry
	tokenErr        error  // getting the token of a repeat failed
	stop            string // why retries stopped before MaxRetries, for the log

	tel callTel // spans and metrics of the attempts (otel.go)
}

type callKey struct{}

// withCall puts st in ctx, with a trace that notes when an attempt has
// written its headers if traceWrites.
func withCall(ctx context.Context, st *call, traceWrites bool) context.Context {
	ctx = context.WithValue(ctx, callKey{}, st)
	if !traceWrites {
		return ctx
	}
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteHeaders: func() { st.wrote.Store(true) },
	})
}

// callOf returns the call that ctx belongs to.
func callOf(ctx context.Context) (*call, bool) {
	st, ok := ctx.Value(callKey{}).(*call)
	return st, ok && st != nil
}

// noteAttempt records what an attempt says about the call: whether the
// server may have processed it without the client learning the result
// (it wrote its request and got no answer, or a 5xx), and the response
// for Request.Observe.
func (st *call) noteAttempt(resp *http.Response, err error) {
	if (err != nil && st.wrote.Load() && !notSent(err)) || (err == nil && resp.StatusCode >= 500) {
		st.ambiguous = true
	}
	if resp != nil && st.observe != nil {
		st.observe(resp)
	}
}

// readAnswer reads the body of a 2xx answer inside the retry loop
// (checkRetry), so that an answer cut off mid-body is a failed attempt
// (cut) rather than an error after the call. Request.Read reads it when
// set; otherwise the body read replaces resp.Body: a body of known
// length up to maxWholeBody, and, when Do decodes the answer, one of
// unknown length (up to that size; a longer one streams on). A failure
// marks the call ambiguous: the service answered 2xx, so it did the
// work. An error of Request.Read's own (not cut) ends the call.
//
// It is also the one place that caps a 2xx answer (call.maxAnswer),
// whoever reads it: a body declared longer fails at once, and the body
// fails with ErrAnswerTooLarge past the cap, counting the bytes read
// after net/http's transparent gzip.
func (st *call) readAnswer(resp *http.Response) (cut bool, err error) {
	if resp.StatusCode/100 != 2 || st.method == http.MethodHead {
		return false, nil
	}
	n := resp.ContentLength
	if n > st.maxAnswer {
		return true, st.answerLost(tooLarge(st.maxAnswer))
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: st.maxAnswer, limit: st.maxAnswer}
	if st.read != nil {
		return st.readWith(resp)
	}
	if n == 0 || n > maxWholeBody || n < 0 && !st.decodes {
		return false, nil
	}
	var b []byte
	if n > 0 {
		b = make([]byte, n)
		_, err = io.ReadFull(resp.Body, b)
	} else {
		b, err = io.ReadAll(io.LimitReader(resp.Body, maxWholeBody+1))
	}
	if err != nil {
		return true, st.answerLost(err)
	}
	if len(b) > maxWholeBody {
		resp.Body = &wholeBody{Reader: io.MultiReader(bytes.NewReader(b), resp.Body), rest: resp.Body}
		return false, nil
	}
	resp.Body = &wholeBody{Reader: bytes.NewReader(b), b: b, rest: resp.Body}
	return false, nil
}

// readWith has Request.Read read the answer, and closes its body.
func (st *call) readWith(resp *http.Response) (bool, error) {
	body := &answerBody{ReadCloser: resp.Body}
	resp.Body = body
	err := st.read(resp)
	body.Close()
	resp.Body = http.NoBody
	switch {
	case err == nil:
		return false, nil
	case body.err != nil:
		return true, st.answerLost(err)
	}
	return false, err
}

// answerBody is a body that Request.Read reads: it keeps the error of a
// failed read (an answer cut off), which tells it from Read's own.
type answerBody struct {
	io.ReadCloser
	err error
}

func (b *answerBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// answerLost marks the call ambiguous after a 2xx answer whose body could
// not be read, and returns the error of the attempt.
func (st *call) answerLost(err error) error {
	st.ambiguous = true
	st.wrote.Store(true) // it was answered: never "not sent"
	return fmt.Errorf("reading response: %w", err)
}

// ErrAnswerTooLarge is returned when an answer's body is longer than the
// limit for its kind (DefaultMaxAnswerSize, MaxTokenAnswerSize, a
// Request's MaxAnswerSize), counted after decompression. It is not
// retried; a write that is not safe to repeat is marked with
// ErrOutcomeUnknown, since the service answered 2xx.
var ErrAnswerTooLarge = errors.New("partner: answer too large")

// Limits of a 2xx answer's body, counted after decompression
// (Request.MaxAnswerSize).
const (
	// DefaultMaxAnswerSize caps the answer of a request that sets no
	// MaxAnswerSize: 8 MiB.
	DefaultMaxAnswerSize = 8 << 20
	// MaxTokenAnswerSize caps the answer of a token request: 64 KiB.
	MaxTokenAnswerSize = 64 << 10
	// MaxPageAnswerSize caps a page of report data (an export's page):
	// 256 MiB.
	MaxPageAnswerSize = 256 << 20
)

func tooLarge(limit int64) error {
	return fmt.Errorf("%w: more than %d bytes, the limit for this kind of answer", ErrAnswerTooLarge, limit)
}

// cappedBody is an answer's body that fails with ErrAnswerTooLarge once
// more than left bytes would be read.
type cappedBody struct {
	io.ReadCloser
	left  int64
	limit int64
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, tooLarge(c.limit)
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n + int(c.left), tooLarge(c.limit)
	}
	return n, err
}

// wholeBody is an answer's body as readAnswer read it: b, when it is the
// whole body, and rest, the connection's body, closed with it.
type wholeBody struct {
	io.Reader
	b    []byte
	rest io.ReadCloser
}

func (w *wholeBody) Close() error { return w.rest.Close() }

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

// logDebug logs one event of a request at debug level. It builds no
// attribute when the logger does not log debug.
func (c *Client) logDebug(ctx context.Context, msg, method, path string, attrs ...slog.Attr) {
	if !c.cfg.Logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	base := []slog.Attr{slog.String("method", method), slog.String("path", path)}
	if st, ok := callOf(ctx); ok && st.requestID != "" {
		base = append(base, slog.String("request_id", st.requestID))
	}
	c.cfg.Logger.LogAttrs(ctx, slog.LevelDebug, msg, append(base, attrs...)...)
}
