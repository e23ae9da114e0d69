// Package transport is the one request pipeline of the SDK: it turns an
// operation into an HTTP exchange (URL and query, body encoding,
// Authorization, environment and user agent headers), sends it through
// go-retryablehttp with the retry rules of the operation, and decodes the
// answer or returns an *Error.
package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"golang.org/x/oauth2"
)

// EnvHeader is the default name of the header that selects the sandbox
// environment: the interface's neutral word. A deployment may use its
// own name (Config.EnvHeader).
const EnvHeader = "x-svc-env"

// SubscriptionKeyHeader is the default header of an API gateway's
// subscription key.
const SubscriptionKeyHeader = "Ocp-Apim-Subscription-Key"

// TokenSource gives the bearer token of a request. Invalidate drops tok
// from any cache when it is still the cached token, so that the next
// Token call fetches a new one; the transport calls it after a 401.
type TokenSource interface {
	Token(ctx context.Context) (*oauth2.Token, error)
	Invalidate(tok *oauth2.Token)
}

// Config holds what every request of a Client shares.
type Config struct {
	BaseURL    *url.URL
	HTTPClient *http.Client // nil: a pooled client with sane timeouts
	Tokens     TokenSource  // nil: requests carry no Authorization
	Env        string       // value of the environment header, if any
	// EnvHeader names the environment header ("" means EnvHeader).
	EnvHeader string
	// SubscriptionKey is the API gateway's subscription key, a secret:
	// sent to the service only, never logged or put in an error.
	SubscriptionKey string
	// SubscriptionKeyHeader names its header ("" means
	// SubscriptionKeyHeader).
	SubscriptionKeyHeader string
	UserAgent             string
	Header                http.Header // fixed extra headers on every request
	Logger                *slog.Logger
	Retry                 RetryPolicy
	// AllowInsecureHTTP allows plain http absolute URLs (signed upload
	// URLs, webhook callbacks) to hosts that are not loopback addresses.
	AllowInsecureHTTP bool
}

// Client sends requests. It is safe for concurrent use.
type Client struct {
	cfg    Config
	base   string   // cfg.BaseURL with a trailing slash, "" when none
	ua     []string // the User-Agent header's value, shared by every request
	auth   atomic.Pointer[authValue]
	hc     *http.Client // cfg.HTTPClient as go-retryablehttp uses it (wrapClient)
	budget *retryBudget // nil: no retry budget
	// testHookWait, when set, is told each wait before a retry.
	testHookWait func(time.Duration)
}

// New returns a Client for cfg.
func New(cfg Config) *Client {
	if cfg.HTTPClient == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// Exports keep many page requests in flight to one host; the
		// default of 2 idle connections per host would reopen most of them.
		tr.MaxIdleConnsPerHost = 32
		tr.DialContext = (&net.Dialer{Timeout: DefaultDialTimeout, KeepAlive: 30 * time.Second}).DialContext
		tr.TLSHandshakeTimeout = DefaultTLSHandshakeTimeout
		// A server that accepted the request but never answers would
		// otherwise hold the call until its context ends.
		tr.ResponseHeaderTimeout = DefaultResponseHeaderTimeout
		cfg.HTTPClient = &http.Client{Transport: tr}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Retry = cfg.Retry.withDefaults()
	if cfg.EnvHeader == "" {
		cfg.EnvHeader = EnvHeader
	}
	if cfg.SubscriptionKeyHeader == "" {
		cfg.SubscriptionKeyHeader = SubscriptionKeyHeader
	}
	c := &Client{
		cfg:    cfg,
		hc:     wrapClient(cfg.HTTPClient, cfg.serviceOnlyHeaders()),
		budget: newRetryBudget(cfg.Retry.Budget),
	}
	if cfg.BaseURL != nil {
		c.base = cfg.BaseURL.String()
		if !strings.HasSuffix(c.base, "/") {
			c.base += "/"
		}
	}
	if cfg.UserAgent != "" {
		c.ua = []string{cfg.UserAgent}
	}
	return c
}

// EnvQuery is the environment as a query parameter named after the
// environment header, which token requests carry beside the header as the
// deployed service's descriptions show; nil when no environment is set.
func (c *Client) EnvQuery() url.Values {
	if c.cfg.Env == "" {
		return nil
	}
	return url.Values{c.cfg.EnvHeader: {c.cfg.Env}}
}

// jsonValue is the value of the Accept and JSON Content-Type headers,
// shared by every request: net/http never changes a header value, and
// clones the header before a redirect.
var jsonValue = []string{"application/json"}

// authValue is the Authorization header of the latest token, built once
// per token rather than once per request.
type authValue struct {
	token string
	value []string
}

func (c *Client) authHeader(token string) []string {
	if a := c.auth.Load(); a != nil && a.token == token {
		return a.value
	}
	a := &authValue{token: token, value: []string{"Bearer " + token}}
	c.auth.Store(a)
	return a.value
}

// Share returns a Client for cfg that shares c's retry budget, so that
// token requests and API calls draw on one bucket.
func (c *Client) Share(cfg Config) *Client {
	n := New(cfg)
	n.budget = c.budget
	return n
}

// HTTPClient returns the underlying *http.Client.
func (c *Client) HTTPClient() *http.Client { return c.cfg.HTTPClient }

// Logger returns the client's logger (never nil).
func (c *Client) Logger() *slog.Logger { return c.cfg.Logger }

// Do sends r and decodes a 2xx answer into out: nil discards it, a
// Decoder reads it, anything else is decoded as JSON. Any other answer is
// returned as an *Error. A 401 on an authorized request drops the cached
// token and repeats the request once with a new one.
//
// The error of a request that is not Idempotent is marked with
// ErrOutcomeUnknown when the service may have processed it (see
// IsOutcomeUnknown), including a 2xx answer whose body could not be read.
func (c *Client) Do(ctx context.Context, r *Request, out any) error {
	resp, err := c.Send(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch d := out.(type) {
	case nil:
		_, err = io.Copy(io.Discard, resp.Body)
	case Decoder:
		err = d(resp.Body)
	default:
		if resp.StatusCode == http.StatusNoContent {
			return nil
		}
		if n := resp.ContentLength; n > 0 && n <= maxWholeBody {
			err = decodeWhole(resp.Body, n, out)
			break
		}
		err = json.NewDecoder(resp.Body).Decode(out)
		if errors.Is(err, io.EOF) {
			err = nil // an empty body decodes to the zero value
		}
		// Read what follows the value (a newline) so that the connection
		// can be reused; a long tail is not worth reading.
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	}
	if err != nil {
		if !c.repeatable(r) {
			// The service did the write; only its answer is lost.
			return With(fmt.Errorf("partner: %s %s: reading response: %w", r.Method, c.pathOf(r), err), ErrOutcomeUnknown)
		}
		return fmt.Errorf("partner: %s %s: reading response: %w", r.Method, c.pathOf(r), err)
	}
	return nil
}

// repeatable reports whether r may be repeated after the server may have
// processed it.
func (c *Client) repeatable(r *Request) bool {
	return r.Idempotent || r.Method == http.MethodGet || r.Method == http.MethodHead
}

// maxWholeBody is the largest answer Do reads whole before decoding it.
const maxWholeBody = 4 << 20

// decodeWhole reads a body of n bytes and decodes it into out: one
// allocation for the body, and a type with its own UnmarshalJSON (a SCIM
// user) gets the bytes at once instead of after a Decoder has scanned
// them twice.
func decodeWhole(body io.Reader, n int64, out any) error {
	b := make([]byte, n)
	if _, err := io.ReadFull(body, b); err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil // an empty body decodes to the zero value
	}
	var err error
	if u, ok := out.(json.Unmarshaler); ok && json.Valid(b) {
		err = u.UnmarshalJSON(b)
	} else {
		err = json.Unmarshal(b, out)
	}
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		// Something after the value: decode the first one, as a Decoder
		// over the body would.
		err = json.NewDecoder(bytes.NewReader(b)).Decode(out)
	}
	return err
}

// Send is Do without decoding: it returns the 2xx response, whose body the
// caller must close, or an error.
//
// A DELETE answered 404 after an earlier attempt whose outcome was unknown
// (the first attempt removed the resource, its answer was lost) counts as
// done: Send returns an empty 204 response.
func (c *Client) Send(ctx context.Context, r *Request) (*http.Response, error) {
	u, us, err := c.url(r)
	if err != nil {
		return nil, err
	}
	var raw []byte
	if r.JSON != nil {
		if raw, err = json.Marshal(r.JSON); err != nil {
			return nil, fmt.Errorf("partner: %s %s: encoding request: %w", r.Method, u.Path, err)
		}
	}
	b, err := newBody(r.Body, r.BodyFunc, raw)
	if err != nil {
		return nil, Wrap(err, "%s %s", r.Method, u.Path)
	}
	st := newAttemptState(c.repeatable(r), b, c.cfg.Retry, c.budget)
	auth := c.cfg.Tokens != nil && !r.NoAuth && r.URL == "" && r.Token == ""
	for try := 0; ; try++ {
		var tok *oauth2.Token
		if auth {
			if tok, err = c.cfg.Tokens.Token(ctx); err != nil {
				if st.ambiguous.Load() && !st.idempotent {
					err = With(err, ErrOutcomeUnknown)
				}
				return nil, err
			}
		}
		resp, err := c.send(ctx, r, u, us, st, tok)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return resp, nil
		}
		if resp.StatusCode == http.StatusNotFound && r.Method == http.MethodDelete && st.ambiguous.Load() {
			io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
			resp.Body.Close()
			c.cfg.Logger.LogAttrs(ctx, slog.LevelDebug, "partner: 404 after an attempt whose outcome was unknown: already deleted",
				slog.String("method", r.Method), slog.String("path", u.Path))
			return &http.Response{
				Status: "204 No Content", StatusCode: http.StatusNoContent,
				Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
				Header: http.Header{}, Body: http.NoBody, Request: resp.Request,
			}, nil
		}
		if resp.StatusCode == http.StatusUnauthorized && auth {
			// The token is bad whether or not the request can be repeated.
			c.cfg.Tokens.Invalidate(tok)
			if try == 0 {
				if !b.replayable() {
					return nil, With(c.newError(ctx, resp, r, u, st), ErrBodyNotReplayable)
				}
				io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
				resp.Body.Close()
				c.cfg.Logger.LogAttrs(ctx, slog.LevelDebug, "partner: 401, refreshing token and repeating",
					slog.String("method", r.Method), slog.String("path", u.Path))
				continue
			}
		}
		e := c.newError(ctx, resp, r, u, st)
		switch {
		case st.replayBlocked.Load():
			return nil, With(e, ErrBodyNotReplayable)
		case st.budgetExhausted:
			return nil, With(e, ErrRetryBudgetExhausted)
		}
		return nil, e
	}
}

// newError builds the *Error of a final answer outside 2xx.
func (c *Client) newError(ctx context.Context, resp *http.Response, r *Request, u *url.URL, st *attemptState) *Error {
	e := newError(resp, r.Method, u.Path)
	e.OutcomeUnknown = !st.idempotent && st.ambiguous.Load()
	if st.retryAfterLong {
		c.cfg.Logger.LogAttrs(ctx, slog.LevelDebug, "partner: Retry-After beyond the cap, not retrying",
			slog.String("method", r.Method), slog.String("path", u.Path), slog.Duration("retry_after", e.RetryAfter))
	}
	return e
}

// send makes one exchange through go-retryablehttp.
func (c *Client) send(ctx context.Context, r *Request, u *url.URL, us string, st *attemptState, tok *oauth2.Token) (*http.Response, error) {
	// Whether an attempt wrote its request matters only to requests that
	// are not repeated freely, and to a DELETE (a 404 after an attempt
	// that may have been processed means done).
	ctx = withAttemptState(ctx, st, !st.idempotent || r.Method == http.MethodDelete)
	st.observe = r.Observe
	var rawBody any
	switch {
	case st.body != nil && st.body.mem != nil:
		rawBody = st.body.mem
	case st.body != nil:
		rawBody = retryablehttp.ReaderFunc(st.body.attempt)
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, r.Method, us, rawBody)
	if err != nil {
		return nil, Wrap(unwrapURLError(err), "%s %s", r.Method, u.Path)
	}
	if st.body != nil && st.body.size >= 0 {
		req.ContentLength = st.body.size
	}
	h := req.Header
	// Fixed headers (a gateway's subscription key) and the environment go
	// to the service only, not to an absolute URL on another host.
	toService := r.URL == "" || (c.cfg.BaseURL != nil && strings.EqualFold(u.Host, c.cfg.BaseURL.Host))
	if toService {
		for k, vs := range c.cfg.Header {
			h[k] = append([]string(nil), vs...)
		}
	}
	for k, vs := range r.Header {
		h[k] = append([]string(nil), vs...)
	}
	if c.ua != nil {
		h["User-Agent"] = c.ua
	}
	if c.cfg.Env != "" && r.URL == "" {
		h.Set(c.cfg.EnvHeader, c.cfg.Env)
	}
	if c.cfg.SubscriptionKey != "" && toService {
		h.Set(c.cfg.SubscriptionKeyHeader, c.cfg.SubscriptionKey)
	}
	h["Accept"] = jsonValue
	switch {
	case r.JSON != nil:
		h["Content-Type"] = jsonValue
	case r.ContentType != "":
		h.Set("Content-Type", r.ContentType)
	}
	if tok != nil {
		h["Authorization"] = c.authHeader(tok.AccessToken)
	} else if r.Token != "" {
		h.Set("Authorization", "Bearer "+r.Token)
	}
	// One go-retryablehttp client per call: its Backoff sees no context,
	// so it is bound here to the wait this call's checkRetry chose.
	st.logger = c.cfg.Logger
	st.rc = retryablehttp.Client{
		HTTPClient:   c.hc,
		Logger:       nil, // we log ourselves, without URLs' query strings or headers
		RetryWaitMin: c.cfg.Retry.MinWait,
		RetryWaitMax: c.cfg.Retry.MaxWait,
		RetryMax:     c.cfg.Retry.MaxRetries,
		CheckRetry:   checkRetry,
		Backoff: func(mn, mx time.Duration, n int, resp *http.Response) time.Duration {
			d := st.backoff(mn, mx, n, resp)
			if c.testHookWait != nil {
				c.testHookWait(d)
			}
			return d
		},
		ErrorHandler:   retryablehttp.PassthroughErrorHandler,
		RequestLogHook: requestLogHook,
	}
	start := time.Now()
	resp, err := st.rc.Do(req)
	if err != nil {
		if resp != nil {
			// The pass-through error handler returns the last response
			// with the error (a context cancelled as it arrived).
			resp.Body.Close()
		}
		// The *url.Error layer repeats the full URL with its query
		// string, which may carry a signature or token: drop it before
		// the error is logged or returned.
		err = unwrapURLError(err)
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		if st.replayBlocked.Load() {
			err = With(err, ErrBodyNotReplayable)
		}
		if st.budgetExhausted {
			err = With(err, ErrRetryBudgetExhausted)
		}
		if !st.idempotent && st.ambiguous.Load() {
			err = With(err, ErrOutcomeUnknown)
		}
		c.cfg.Logger.LogAttrs(ctx, slog.LevelDebug, "partner: request failed",
			slog.String("method", r.Method), slog.String("path", u.Path), slog.String("error", err.Error()))
		return nil, Wrap(err, "%s %s", r.Method, u.Path)
	}
	c.cfg.Logger.LogAttrs(ctx, slog.LevelDebug, "partner: request done",
		slog.String("method", r.Method), slog.String("path", u.Path),
		slog.Int("status", resp.StatusCode), slog.Duration("elapsed", time.Since(start)))
	return resp, nil
}

// requestLogHook runs before every attempt of every request.
func requestLogHook(_ retryablehttp.Logger, req *http.Request, attempt int) {
	st := req.Context().Value(attemptKey{}).(*attemptState)
	st.wrote.Store(false)
	st.attempt = attempt
	if attempt > 0 {
		st.logger.LogAttrs(req.Context(), slog.LevelDebug, "partner: retrying request",
			slog.String("method", req.Method), slog.String("path", req.URL.Path), slog.Int("attempt", attempt+1))
	}
}

// unwrapURLError drops the *url.Error layer, whose text repeats the full
// URL with its query string.
func unwrapURLError(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}
