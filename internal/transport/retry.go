package transport

import (
	"context"
	"crypto/x509"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync/atomic"
	"time"
)

// RetryPolicy says how often and how patiently a request is repeated.
type RetryPolicy struct {
	// MaxRetries is the number of retries after the first attempt.
	// Zero disables retries; negative means the default (4).
	MaxRetries int
	// MinWait and MaxWait bound the exponential backoff between attempts
	// (defaults 250ms and 10s). Each wait is drawn at random between zero
	// and the exponential step ("full jitter").
	MinWait, MaxWait time.Duration
	// MaxRetryAfter caps a wait the server asks for with Retry-After
	// (default 60s).
	MaxRetryAfter time.Duration
}

// DefaultRetryPolicy is used for every zero field of a RetryPolicy.
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
	wrote      atomic.Bool // the current attempt wrote its headers
}

type attemptKey struct{}

func withAttemptState(ctx context.Context, idempotent bool) (context.Context, *attemptState) {
	st := &attemptState{idempotent: idempotent}
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
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, ctxErr
	}
	st, _ := ctx.Value(attemptKey{}).(*attemptState)
	if st == nil {
		st = &attemptState{}
	}
	if err != nil {
		if !isRetryableNetError(err) {
			return false, err
		}
		if st.idempotent || !st.wrote.Load() {
			return true, nil
		}
		return false, err
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return true, nil
	}
	return st.idempotent && retryableStatus(resp.StatusCode), nil
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
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// backoff returns the wait before retry number attempt+1: the server's
// Retry-After when it sent one (capped), otherwise a full-jitter
// exponential step between zero and min·2^attempt, capped at max.
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
