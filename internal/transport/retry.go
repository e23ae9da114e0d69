package transport

import (
	"context"
	"crypto/x509"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
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
	// MaxRetryAfter caps a wait the server asks for with Retry-After
	// (default 60s).
	MaxRetryAfter time.Duration
}

// DefaultRetryPolicy fills the zero durations of a RetryPolicy and a
// negative MaxRetries (a zero MaxRetries means no retries).
var DefaultRetryPolicy = RetryPolicy{MaxRetries: 4, MinWait: 250 * time.Millisecond, MaxWait: 10 * time.Second, MaxRetryAfter: 60 * time.Second}

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
	return p
}

// attemptState travels in the request context so that the retry policy,
// which only sees the context, knows how the current request may be
// repeated and whether its current attempt wrote anything.
type attemptState struct {
	idempotent bool
	body       *body                // nil when the request has no body
	observe    func(*http.Response) // Request.Observe
	wrote      atomic.Bool          // the current attempt wrote its headers
	// replayBlocked is set when a retry was called for but the body
	// could not be sent again.
	replayBlocked atomic.Bool
}

type attemptKey struct{}

func withAttemptState(ctx context.Context, idempotent bool, b *body) (context.Context, *attemptState) {
	st := &attemptState{idempotent: idempotent, body: b}
	ctx = context.WithValue(ctx, attemptKey{}, st)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteHeaders: func() { st.wrote.Store(true) },
	})
	return ctx, st
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
// A request whose body cannot be sent again (a plain io.Reader already
// read) is not retried: the answer or error is returned as it is and the
// transport marks it with ErrBodyNotReplayable.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, ctxErr
	}
	st, _ := ctx.Value(attemptKey{}).(*attemptState)
	if st == nil {
		st = &attemptState{}
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
	}
	if retry && st.body != nil && !st.body.replayable() {
		st.replayBlocked.Store(true)
		return false, err
	}
	if !retry {
		return false, err
	}
	return true, nil
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
		case errors.Is(uerr.Err, ErrBodyNotReplayable):
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

// backoff returns the wait before retry number attempt+1 (attempt counts
// from 0): the server's Retry-After when it sent one, capped at
// MaxRetryAfter; otherwise a jittered exponential step, uniform between
// MinWait/2 and MinWait·2^attempt capped at MaxWait.
func (p RetryPolicy) backoff(_, _ time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil {
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			return min(d, p.MaxRetryAfter)
		}
	}
	step := p.MinWait << min(attempt, 30)
	if step <= 0 || step > p.MaxWait {
		step = p.MaxWait
	}
	return p.MinWait/2 + rand.N(step-p.MinWait/2+1)
}
