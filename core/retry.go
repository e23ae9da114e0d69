package core

// This file is the decision: what a RetryPolicy says, the client-wide
// retry budget, and the hooks that go-retryablehttp calls around each
// attempt of a call (CheckRetry, Backoff, RequestLogHook, PrepareRetry),
// methods of the call.

import (
	"context"
	"crypto/x509"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// RetryPolicy says how often and how patiently a request is repeated.
//
// A zero field means the default its doc gives.
// What a zero cannot say, "none", has its own switch: NoRetries,
// NoRetryTimeCap, NoBudget.
type RetryPolicy struct {
	// MaxRetries is the number of retries after the first attempt
	// (default 4).
	MaxRetries int
	// NoRetries turns retries off: every request is sent once (and once
	// more after a 401, with a new token).
	NoRetries bool
	// MinWait and MaxWait bound the exponential backoff between attempts
	// (defaults 250ms and 10s). The step before retry n (from 0) is
	// MinWait·2^n, capped at MaxWait; each wait is drawn uniformly between
	// MinWait/2 and that step (jitter, with a floor so that a retry never
	// comes at once).
	MinWait, MaxWait time.Duration
	// MaxRetryAfter is the longest wait the server may ask for with
	// Retry-After (default 60s). A longer one ends the retries at once:
	// the call returns the answer, whose *Error carries the RetryAfter.
	MaxRetryAfter time.Duration
	// MaxRetryTime caps the time one call spends retrying, from its first
	// attempt (default 60s): a retry whose wait could end past it is not
	// made.
	MaxRetryTime time.Duration
	// NoRetryTimeCap removes the MaxRetryTime cap (MaxRetries and the
	// context still bound a call).
	NoRetryTimeCap bool
	// Budget sizes the client-wide retry budget (see BudgetPolicy).
	Budget BudgetPolicy
	// NoBudget turns the retry budget off.
	NoBudget bool
}

// BudgetPolicy sizes the client-wide retry budget, a token bucket in the
// manner of the AWS SDK's standard retryer: each retry takes RetryCost
// tokens (TimeoutCost after a timeout), a call that succeeds after
// retrying gives its last retry's tokens back, a call that succeeds at
// once adds one token, up to Capacity. When the bucket cannot pay for a
// retry, the call fails at once with the error of its last attempt,
// wrapped with ErrRetryBudgetExhausted. So while the service fails, the
// retries of many goroutines stop after about Capacity/RetryCost of them,
// instead of multiplying the load. A zero field means the default its
// doc gives.
type BudgetPolicy struct {
	// Capacity is the size of the bucket (default 500).
	Capacity int
	// RetryCost and TimeoutCost are the tokens one retry takes (defaults
	// 5 and 10; TimeoutCost is at least RetryCost).
	RetryCost, TimeoutCost int
}

// defaultBudget holds the defaults of BudgetPolicy's zero fields.
var defaultBudget = BudgetPolicy{Capacity: 500, RetryCost: 5, TimeoutCost: 10}

// defaultRetryPolicy holds the defaults of RetryPolicy's zero fields.
var defaultRetryPolicy = RetryPolicy{
	MaxRetries: 4, MinWait: 250 * time.Millisecond, MaxWait: 10 * time.Second,
	MaxRetryAfter: 60 * time.Second, MaxRetryTime: 60 * time.Second,
	Budget: defaultBudget,
}

// withDefaults fills the zero fields.
func (p RetryPolicy) withDefaults() RetryPolicy {
	d := defaultRetryPolicy
	p.MaxRetries = orDefault(p.MaxRetries, d.MaxRetries)
	p.MinWait = orDefault(p.MinWait, d.MinWait)
	p.MaxWait = max(orDefault(p.MaxWait, d.MaxWait), p.MinWait)
	p.MaxRetryAfter = orDefault(p.MaxRetryAfter, d.MaxRetryAfter)
	p.MaxRetryTime = orDefault(p.MaxRetryTime, d.MaxRetryTime)
	p.Budget.Capacity = orDefault(p.Budget.Capacity, d.Budget.Capacity)
	p.Budget.RetryCost = orDefault(p.Budget.RetryCost, d.Budget.RetryCost)
	p.Budget.TimeoutCost = max(orDefault(p.Budget.TimeoutCost, d.Budget.TimeoutCost), p.Budget.RetryCost)
	return p
}

// orDefault returns v, or def when v is zero (or negative, which no
// setting means).
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// maxRetries is the number of retries a call may make for failures.
func (p RetryPolicy) maxRetries() int {
	if p.NoRetries {
		return 0
	}
	return p.MaxRetries
}

// retryBudget is the token bucket of BudgetPolicy; nil is no budget.
type retryBudget struct {
	policy BudgetPolicy
	mu     sync.Mutex
	tokens int
}

// newRetryBudget returns the budget of p (with its defaults), nil when
// p.NoBudget.
func newRetryBudget(p RetryPolicy) *retryBudget {
	if p.NoBudget {
		return nil
	}
	return &retryBudget{policy: p.Budget, tokens: p.Budget.Capacity}
}

// take withdraws the tokens of a retry after err, and returns them, or
// reports that the bucket cannot pay.
func (b *retryBudget) take(err error) (int, bool) {
	if b == nil {
		return 0, true
	}
	cost := b.policy.RetryCost
	if isTimeout(err) {
		cost = b.policy.TimeoutCost
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tokens < cost {
		return 0, false
	}
	b.tokens -= cost
	return cost, true
}

// give returns n tokens, up to the capacity.
func (b *retryBudget) give(n int) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	b.tokens = min(b.tokens+n, b.policy.Capacity)
	b.mu.Unlock()
}

// available is the number of tokens in the bucket (-1 without a budget).
func (b *retryBudget) available() int {
	if b == nil {
		return -1
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tokens
}

// retryableStatus lists the answers worth repeating an idempotent request for.
func retryableStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// checkRetry is the go-retryablehttp CheckRetry of the call, the one
// place that decides whether an attempt is repeated. Reads and
// idempotent writes are retried on network errors and retryable statuses.
// Other writes are retried only when the server certainly did not process
// them: a 429, or an attempt that failed before anything was written. A
// 401 on a request that carries the client's token drops that token and
// repeats the request once (PrepareRetry signs it with a new token),
// whatever its kind: the server refused it before processing it.
//
// A 2xx answer's body is read here first (call.readAttempt, with
// Request.Read when set), so that one cut off mid-body is retried like a
// lost answer for a request safe to repeat, and marks the outcome
// unknown for another. docs/DESIGN.md (Wiring) says why the read is in
// this hook rather than after the library's loop or in its
// ResponseHandler.
//
// A retry is also refused when the body cannot be sent again (the call's
// error then wraps ErrBodyNotReplayable), when the server asks with
// Retry-After for a wait beyond MaxRetryAfter, when the wait could end
// past MaxRetryTime, and when the retry budget cannot pay for it
// (ErrRetryBudgetExhausted).
func (st *call) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	err = st.attemptErr(err)
	st.endAttempt(ctx, resp, err)
	st.noteAttempt(resp, err)
	if err == nil {
		var final bool
		if resp, final, err = st.readAttempt(resp); final {
			return false, err
		}
	}
	if st.timer != nil {
		st.timer.stop() // the attempt is over; a streamed body is the context's
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, ctxErr
	}
	if err != nil && !isRetryableNetError(err) {
		return false, err
	}
	if !st.wantsRetry(resp, err) {
		if resp != nil && resp.StatusCode < 500 {
			st.settleBudget()
		}
		return false, err
	}
	if st.body != nil && !st.body.replayable() {
		st.replayBlocked = true
		st.stop = "the body cannot be sent again"
		return false, err
	}
	if resp != nil && resp.StatusCode == http.StatusUnauthorized {
		st.replayed, st.wait = true, 0
		st.logDebug(ctx, "partner: 401, refreshing token and repeating", resp, slog.Duration("wait", 0))
		return true, nil
	}
	if !st.affordRetry(resp, err) {
		return false, err
	}
	st.wait, _ = st.c.cfg.Retry.wait(st.attempt, resp)
	st.logRetry(ctx, resp, err)
	return true, err
}

// logRetry logs the end of an attempt that is retried: its answer's
// status or its error, and the wait before the retry.
func (st *call) logRetry(ctx context.Context, resp *http.Response, err error) {
	attrs := []slog.Attr{slog.Duration("wait", st.wait)}
	if err != nil {
		// The *url.Error layer repeats the URL's query string (see finish).
		attrs = append(attrs, slog.String("error", st.c.secrets.maskErr(unwrapURLError(err)).Error()))
	}
	st.logDebug(ctx, "partner: retrying request", resp, attrs...)
}

// wantsRetry reports whether the attempt's failure is worth repeating,
// before the limits of the policy. A 401 drops the token it carried.
func (st *call) wantsRetry(resp *http.Response, err error) bool {
	switch {
	case err != nil:
		return st.idempotent || !st.wrote.Load() || notSent(err)
	case resp.StatusCode == http.StatusUnauthorized && st.auth:
		// The token is bad whether or not the request is repeated.
		st.c.cfg.Tokens.Invalidate(st.tok)
		return !st.replayed
	case resp.StatusCode == http.StatusTooManyRequests:
		return true
	}
	return st.idempotent && retryableStatus(resp.StatusCode)
}

// settleBudget is called on a definite answer (the service is working):
// it refunds the call's last retry, or rewards a first attempt that
// needed none.
func (st *call) settleBudget() {
	switch {
	case st.cost > 0:
		st.c.budget.give(st.cost)
		st.cost = 0
	case st.attempt == 0:
		st.c.budget.give(1)
	}
}

// affordRetry applies the limits of the policy to a retry for a failure:
// MaxRetries, MaxRetryAfter, MaxRetryTime and the budget.
func (st *call) affordRetry(resp *http.Response, err error) bool {
	p := &st.c.cfg.Retry
	if st.retries >= st.maxRetries {
		return false
	}
	wait, fromServer := p.longestWait(st.attempt, resp)
	if fromServer && wait > p.MaxRetryAfter {
		st.stop = "Retry-After beyond the cap"
		return false
	}
	if !p.NoRetryTimeCap && time.Since(st.start)+wait > p.MaxRetryTime {
		st.stop = "the retry time cap"
		return false
	}
	cost, ok := st.c.budget.take(err)
	if !ok {
		st.budgetExhausted = true
		st.stop = "the retry budget is exhausted"
		return false
	}
	st.cost = cost
	st.retries++
	return true
}

// backoff is the go-retryablehttp Backoff of the call: the wait that
// checkRetry chose with its decision (call.wait; none before the repeat
// after a 401). go-retryablehttp's own bounds (RetryWaitMin and
// RetryWaitMax, unset) play no part.
func (st *call) backoff(_, _ time.Duration, _ int, _ *http.Response) time.Duration {
	if st.c.testHookWait != nil {
		st.c.testHookWait(st.wait)
	}
	return st.wait
}

// beforeAttempt is the go-retryablehttp RequestLogHook of the call, run
// before every attempt.
func (st *call) beforeAttempt(_ retryablehttp.Logger, req *http.Request, attempt int) {
	st.wrote.Store(false)
	st.attempt = attempt
	st.timer = nil
	st.startAttempt(req, attempt)
}

// prepareRetry is the go-retryablehttp PrepareRetry of the call: a
// request that carries the client's token is signed again with the
// current one (a new one after a 401). go-retryablehttp shares the
// header map between attempts, so the retry gets a copy.
func (st *call) prepareRetry(req *http.Request) error {
	if !st.auth {
		return nil
	}
	req.Header = req.Header.Clone()
	return st.sign(req.Context(), req.Header)
}

func isTimeout(err error) bool {
	var ne net.Error
	return err != nil && (errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded))
}

func isRetryableNetError(err error) bool {
	var uerr *url.Error
	if errors.As(err, &uerr) && !retryableURLError(uerr) {
		return false
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) &&
		!errors.Is(err, ErrAnswerTooLarge)
}

// retryableURLError reports whether a failure of net/http's client is
// one of the network, not of the request itself (which fails the same
// way every time).
func retryableURLError(uerr *url.Error) bool {
	var certErr *x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(uerr.Err, &certErr), errors.As(uerr.Err, &hostErr), errors.As(uerr.Err, &invalid):
		return false
	case errors.Is(uerr.Err, ErrBodyNotReplayable), errors.Is(uerr.Err, ErrInsecureRedirect),
		errors.Is(uerr.Err, ErrCrossHostRedirect):
		return false
	}
	msg := uerr.Err.Error()
	return !(strings.Contains(msg, "stopped after") && strings.Contains(msg, "redirects") ||
		strings.Contains(msg, "unsupported protocol scheme") ||
		strings.Contains(msg, "invalid header"))
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

// wait returns the wait before retry number attempt+1 (attempt counts
// from 0) and whether the server chose it: the server's Retry-After when
// it sent one; otherwise a jittered exponential step, uniform between
// MinWait/2 and the longest wait (longestWait).
func (p RetryPolicy) wait(attempt int, resp *http.Response) (time.Duration, bool) {
	d, fromServer := p.longestWait(attempt, resp)
	if fromServer {
		return d, true
	}
	return p.MinWait/2 + rand.N(d-p.MinWait/2+1), false
}

// longestWait is the longest wait that wait may return: the server's
// Retry-After, or MinWait·2^attempt capped at MaxWait.
func (p RetryPolicy) longestWait(attempt int, resp *http.Response) (time.Duration, bool) {
	if d, ok := retryAfterOf(resp); ok {
		return d, true
	}
	return p.step(attempt), false
}

// step is MinWait·2^attempt, capped at MaxWait.
func (p RetryPolicy) step(attempt int) time.Duration {
	step := p.MinWait << min(attempt, 30)
	if step <= 0 || step > p.MaxWait {
		step = p.MaxWait
	}
	return step
}

func retryAfterOf(resp *http.Response) (time.Duration, bool) {
	if resp == nil {
		return 0, false
	}
	return parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
}

// parseRetryAfter reads a Retry-After header given in seconds or as an
// HTTP date. A date in the past means no wait.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := max(t.Sub(now), 0)
		return d, true
	}
	return 0, false
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
