package core

// This file is the send stage: the call's own go-retryablehttp client,
// whose hooks are the call's methods, and the call's HTTP client over the
// shared connection pool, whose transport and redirect rule are the
// call's too. Nothing here looks the call up in a context.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"go.opentelemetry.io/otel/propagation"
)

// sharedHTTP is what every call of a Client shares of its HTTP client:
// the given (or built) client, its transport, and the redirect rules'
// inputs.
type sharedHTTP struct {
	hc          http.Client       // the given client; Transport and CheckRedirect are the call's
	rt          http.RoundTripper // the given client's transport
	next        func(*http.Request, []*http.Request) error
	serviceOnly []string // headers dropped on a redirect to another host
	prop        propagation.TextMapPropagator
	stall       time.Duration
}

func newSharedHTTP(cfg *Config, prop propagation.TextMapPropagator) *sharedHTTP {
	h := &sharedHTTP{hc: *cfg.HTTPClient, rt: cfg.HTTPClient.Transport, next: cfg.HTTPClient.CheckRedirect,
		serviceOnly: cfg.serviceOnlyHeaders(), prop: prop, stall: cfg.StallTimeout}
	if h.rt == nil {
		h.rt = http.DefaultTransport
	}
	return h
}

// retryClient sets up the call's go-retryablehttp client and HTTP
// client, and returns the first. checkRetry decides every repeat (the
// retries for failures, a call's own CallOptions.MaxRetries, the repeat
// after a 401); the library's own limits are off.
func (st *call) retryClient() *retryablehttp.Client {
	sh := st.c.hc
	st.hop = hopTransport{st: st, rt: sh.rt, stall: sh.stall}
	st.hc = sh.hc
	st.hc.Transport = &st.hop
	st.hc.CheckRedirect = st.checkRedirect
	st.rc = retryablehttp.Client{
		HTTPClient:     &st.hc,
		Logger:         nil, // the call logs itself, without URLs' query strings or headers
		RetryMax:       math.MaxInt32,
		CheckRetry:     st.checkRetry,
		Backoff:        st.backoff,
		RequestLogHook: st.beforeAttempt,
		PrepareRetry:   st.prepareRetry,
		ErrorHandler:   dropResponse,
	}
	return &st.rc
}

// dropResponse is the go-retryablehttp ErrorHandler: a call that ends in
// an error returns no response.
func dropResponse(resp *http.Response, err error, _ int) (*http.Response, error) {
	if err != nil && resp != nil {
		resp.Body.Close()
		resp = nil
	}
	return resp, err
}

// checkRedirect is the call's redirect rule, before the given client's
// CheckRedirect:
//   - a redirect from https to http is refused (ErrInsecureRedirect);
//   - a redirect to another host drops Authorization (net/http would keep
//     it for a subdomain), the headers meant for the service only (fixed
//     headers, the environment, a gateway's subscription key, the call's
//     own) and those of the trace context;
//   - a redirect to another host that would carry the request's body,
//     and any redirect to another host of a request that forbids it, is
//     refused (ErrCrossHostRedirect).
func (st *call) checkRedirect(req *http.Request, via []*http.Request) error {
	sh := st.c.hc
	if len(via) > 0 {
		if req.URL.Scheme == "http" && via[len(via)-1].URL.Scheme == "https" {
			return ErrInsecureRedirect
		}
		if !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
			if err := st.crossHostRefused(req, via[0]); err != nil {
				return err
			}
			req.Header.Del("Authorization")
			for _, k := range sh.serviceOnly {
				req.Header.Del(k)
			}
			for _, k := range sh.prop.Fields() {
				req.Header.Del(k)
			}
			for k := range st.header {
				req.Header.Del(k)
			}
		}
	}
	if sh.next != nil {
		return sh.next(req, via)
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// crossHostRefused returns the error of a redirect of first to req on
// another host that the call refuses, nil when it may follow. net/http
// has set req's body for a 307 or 308 by then.
func (st *call) crossHostRefused(req, first *http.Request) error {
	if st.sameHost {
		return fmt.Errorf("%w: %s %s answered with a redirect to %s; a token request follows none",
			ErrCrossHostRedirect, first.Method, first.URL.Path, req.URL.Host)
	}
	if req.Body != nil && req.Body != http.NoBody {
		return fmt.Errorf("%w: %s %s answered with a redirect to %s that would carry the request's body",
			ErrCrossHostRedirect, first.Method, first.URL.Path, req.URL.Host)
	}
	return nil
}

// hopTransport is the transport of the call's HTTP client: the given
// one, without CloseIdleConnections (go-retryablehttp calls it whenever
// a request finally fails, which would empty the connection pool every
// other call shares). It gets requests it cannot replay (noreplay.go),
// bounded by the call's AttemptTimeout, and their answers' bodies fail
// with ErrAnswerStalled when they send nothing for stall.
type hopTransport struct {
	st    *call
	rt    http.RoundTripper
	stall time.Duration
}

func (h *hopTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// Each attempt (and each hop of a redirect) has a context of its own,
	// cancelled when its body stalls or is closed: cancelling is how
	// net/http stops a read blocked on the connection. It holds the
	// attempt's span, for the transport's own tracing.
	ctx, cancel := context.WithCancelCause(h.st.attemptContext(req.Context()))
	hop := req.WithContext(h.st.countResends(ctx, req, cancel))
	h.st.noReplay(hop)
	resp, err := h.st.roundTrip(h.rt, hop)
	if err != nil && errors.Is(context.Cause(ctx), errResendRefused) {
		err = errResendRefused
	}
	if err != nil || resp.Body == nil || resp.Body == http.NoBody {
		cancel(nil)
		return resp, err
	}
	resp.Body = newStallBody(resp.Body, h.stall, cancel)
	return resp, nil
}
