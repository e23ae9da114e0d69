package transport

import (
	"log/slog"

	"context"
	"crypto/x509"
	"errors"
	"github.com/hashicorp/go-retryablehttp"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RetryPolicy says how often and how patiently a request is repeated.
type RetryPolicy struct {
	// MaxRetries is the number of retries after the first attempt.
	// Zero disables retries; negative means the default (4).
	MaxRetries int
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
	// attempt (default 60s): a retry whose wait would end past it is not
	// made. Negative means no cap.
	MaxRetryTime time.Duration
	// Budget is the client-wide retry budget (see BudgetPolicy). Nil means
	// the default budget; a Budget with Capacity 0 disables it.
	Budget *BudgetPolicy
}

// BudgetPolicy sizes the client-wide retry budget, a token bucket in the
// manner of the AWS SDK's standard retryer: each retry takes RetryCost
// tokens (TimeoutCost after a timeout), a call that succeeds after
// retrying gives its last retry's tokens back, a call that succeeds at
// once adds one token, up to Capacity. When the bucket cannot pay for a
// retry, the call fails at once with the error of its last attempt,
// wrapped with ErrRetryBudgetExhausted. So while the service fails, the
// retries of many goroutines stop after about Capacity/RetryCost of them,
// instead of multiplying the load.
type BudgetPolicy struct {
	// Capacity is the size of the bucket (default 500); 0 disables the
	// budget.
	Capacity int
	// RetryCost and TimeoutCost are the tokens one retry takes (defaults
	// 5 and 10).
	RetryCost, TimeoutCost int
}

// DefaultBudget is the retry budget of a client that sets none.
var DefaultBudget = BudgetPolicy{Capacity: 500, RetryCost: 5, TimeoutCost: 10}

// DefaultRetryPolicy fills the zero durations of a RetryPolicy and a
// negative MaxRetries (a zero MaxRetries means no retries).
var DefaultRetryPolicy = RetryPolicy{
	MaxRetries: 4, MinWait: 250 * time.Millisecond, MaxWait: 10 * time.Second,
	MaxRetryAfter: 60 * time.Second, MaxRetryTime: 60 * time.Second,
}

// ErrRetryBudgetExhausted is wrapped into the error of a call that was
// not retried because the client-wide retry budget was empty: the
// service has been failing for many calls at once.
var ErrRetryBudgetExhausted = errors.New("partner: retry budget exhausted: the service is failing for many calls, not retrying")

// ErrOutcomeUnknown is wrapped into (or matched by) the error of a write
// that is not safe to repeat when the service may have processed it: the
// request was sent, but its answer was lost (a connection dropped after
// the request was written, a timeout), was a 5xx, or could not be read.
// Look the result up before doing the write again.
var ErrOutcomeUnknown = errors.New("partner: outcome unknown: the service may have processed the request")

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxRetries < 0 {
		p.MaxRetries = DefaultRetryPolicy.MaxRetries
	}
	if p.MinWait <= 0 {
		p.MinWait = DefaultRetryPolicy.MinWait
	}
	if p.MaxWait <= 0 {
		p.MaxWait = DefaultRetryPolicy.MaxWait
	}
	if p.MaxWait < p.MinWait {
		p.MaxWait = p.MinWait
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = DefaultRetryPolicy.MaxRetryAfter
	}
	if p.MaxRetryTime == 0 {
		p.MaxRetryTime = DefaultRetryPolicy.MaxRetryTime
	}
	return p
}

// retryBudget is the token bucket of BudgetPolicy; nil is no budget.
type retryBudget struct {
	policy BudgetPolicy
	mu     sync.Mutex
	tokens int
}

func newRetryBudget(p *BudgetPolicy) *retryBudget {
	bp := DefaultBudget
	if p != nil {
		bp = *p
	}
	if bp.Capacity <= 0 {
		return nil
	}
	if bp.RetryCost <= 0 {
		bp.RetryCost = DefaultBudget.RetryCost
	}
	if bp.TimeoutCost <= 0 {
		bp.TimeoutCost = max(bp.RetryCost, DefaultBudget.TimeoutCost)
	}
	return &retryBudget{policy: bp, tokens: bp.Capacity}
}

// take withdraws cost tokens, or reports that the bucket cannot pay.
func (b *retryBudget) take(cost int) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tokens < cost {
		return false
	}
	b.tokens -= cost
	return true
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

// attemptState is the retry state of one call, across all its attempts
// (the retries of go-retryablehttp and the repeat after a 401). It travels
// in the request context so that the retry policy, which only sees the
// context, knows how the request may be repeated and what its attempts
// did. Its fields other than wrote are used only by the goroutine running
// the call.
type attemptState struct {
	// rc sends the request: one go-retryablehttp client per exchange
	// (its Backoff sees no context), kept here to save an allocation.
	rc         retryablehttp.Client
	logger     *slog.Logger
	idempotent bool
	body       *body                // nil when the request has no body
	observe    func(*http.Response) // Request.Observe
	policy     RetryPolicy
	budget     *retryBudget
	start      time.Time

	wrote atomic.Bool // the current attempt wrote its headers
	// replayBlocked is set when a retry was called for but the body
	// could not be sent again.
	replayBlocked atomic.Bool
	// ambiguous is set once an attempt may have been processed by the
	// server without the client learning its result. Lost connections
	// count only where writes are traced (withAttemptState): requests
	// that are not repeated freely, and DELETEs.
	ambiguous atomic.Bool

	attempt         int           // the current attempt of this exchange, from 0
	nextWait        time.Duration // the wait checkRetry chose for the next retry
	cost            int           // tokens taken for the last retry, refunded on success
	budgetExhausted bool
	retryAfterLong  bool // the server asked for a wait beyond MaxRetryAfter
	timeCapped      bool // MaxRetryTime ended the retries
}

type attemptKey struct{}

func newAttemptState(idempotent bool, b *body, p RetryPolicy, budget *retryBudget) *attemptState {
	return &attemptState{idempotent: idempotent, body: b, policy: p, budget: budget, start: time.Now()}
}

// withAttemptState puts st in ctx, with a trace that notes when an attempt
// has written its headers if traceWrites.
func withAttemptState(ctx context.Context, st *attemptState, traceWrites bool) context.Context {
	ctx = context.WithValue(ctx, attemptKey{}, st)
	if !traceWrites {
		return ctx
	}
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteHeaders: func() { st.wrote.Store(true) },
	})
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

// checkRetry is the go-retryablehttp CheckRetry of every request. Reads and
// idempotent writes are retried on network errors and retryable statuses.
// Other writes are retried only when the server certainly did not process
// them: a 429, or an attempt that failed before anything was written.
//
// A retry is also refused when the body cannot be sent again (the
// transport then marks the error with ErrBodyNotReplayable), when the
// server asks with Retry-After for a wait beyond MaxRetryAfter, when the
// wait would end past MaxRetryTime, and when the retry budget cannot pay
// for it (ErrRetryBudgetExhausted). checkRetry also notes whether the
// attempt may have been processed by the server (ErrOutcomeUnknown) and
// settles the budget of an attempt that ends the call well.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	st, _ := ctx.Value(attemptKey{}).(*attemptState)
	if st == nil {
		st = newAttemptState(false, nil, DefaultRetryPolicy, nil)
	}
	// The server may have processed an attempt that wrote its request
	// and got no answer, or a 5xx.
	if (err != nil && st.wrote.Load()) || (err == nil && resp.StatusCode >= 500) {
		st.ambiguous.Store(true)
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, ctxErr
	}
	if resp != nil && st.observe != nil {
		st.observe(resp)
	}
	var retry bool
	if err != nil {
		if !isRetryableNetError(err) {
			return false, err
		}
		retry = st.idempotent || !st.wrote.Load()
	} else {
		retry = resp.StatusCode == http.StatusTooManyRequests ||
			(st.idempotent && retryableStatus(resp.StatusCode))
		if !retry && resp.StatusCode < 500 {
			// A definite answer: the service is working. Refund the last
			// retry, or reward a first attempt that needed none.
			if st.cost > 0 {
				st.budget.give(st.cost)
				st.cost = 0
			} else if st.attempt == 0 {
				st.budget.give(1)
			}
		}
	}
	if !retry {
		return false, err
	}
	if st.body != nil && !st.body.replayable() {
		st.replayBlocked.Store(true)
		return false, err
	}
	if st.attempt >= st.policy.MaxRetries {
		return false, err // retries used up: go-retryablehttp stops too
	}
	wait, fromServer := st.policy.wait(st.attempt, resp)
	if fromServer && wait > st.policy.MaxRetryAfter {
		st.retryAfterLong = true
		return false, err
	}
	if st.policy.MaxRetryTime > 0 && time.Since(st.start)+wait > st.policy.MaxRetryTime {
		st.timeCapped = true
		return false, err
	}
	cost := 0
	if st.budget != nil {
		cost = st.budget.policy.RetryCost
		if isTimeout(err) {
			cost = st.budget.policy.TimeoutCost
		}
		if !st.budget.take(cost) {
			st.budgetExhausted = true
			return false, err
		}
	}
	st.cost = cost
	st.nextWait = wait
	return true, nil
}

// backoff is the go-retryablehttp Backoff: the wait checkRetry chose.
func (st *attemptState) backoff(_, _ time.Duration, _ int, _ *http.Response) time.Duration {
	return st.nextWait
}

func isTimeout(err error) bool {
	var ne net.Error
	return err != nil && (errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded))
}

func isRetryableNetError(err error) bool {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		var certErr *x509.UnknownAuthorityError
		var hostErr x509.HostnameError
		var invalid x509.CertificateInvalidError
		switch {
		case errors.As(uerr.Err, &certErr), errors.As(uerr.Err, &hostErr), errors.As(uerr.Err, &invalid):
			return false
		case errors.Is(uerr.Err, ErrBodyNotReplayable), errors.Is(uerr.Err, ErrInsecureRedirect):
			return false
		}
		// Errors of the request itself, not of the network, repeat the
		// same way every time.
		msg := uerr.Err.Error()
		if strings.Contains(msg, "stopped after") && strings.Contains(msg, "redirects") ||
			strings.Contains(msg, "unsupported protocol scheme") ||
			strings.Contains(msg, "invalid header") {
			return false
		}
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// wait returns the wait before retry number attempt+1 (attempt counts
// from 0) and whether the server chose it: the server's Retry-After when
// it sent one; otherwise a jittered exponential step, uniform between
// MinWait/2 and MinWait·2^attempt capped at MaxWait.
func (p RetryPolicy) wait(attempt int, resp *http.Response) (time.Duration, bool) {
	if resp != nil {
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			return d, true
		}
	}
	step := p.MinWait << min(attempt, 30)
	if step <= 0 || step > p.MaxWait {
		step = p.MaxWait
	}
	return p.MinWait/2 + rand.N(step-p.MinWait/2+1), false
}
