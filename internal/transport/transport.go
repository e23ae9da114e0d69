// Package transport is the one request pipeline of the SDK: it turns an
// operation into an HTTP exchange (URL and query, body encoding,
// Authorization, environment and user agent headers), sends it through
// go-retryablehttp with the retry rules of the operation, and decodes the
// answer or returns an *Error.
package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/google/go-querystring/query"
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
}

// Client sends requests. It is safe for concurrent use.
type Client struct {
	cfg   Config
	retry *retryablehttp.Client
}

// New returns a Client for cfg.
func New(cfg Config) *Client {
	if cfg.HTTPClient == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// Exports keep many page requests in flight to one host; the
		// default of 2 idle connections per host would reopen most of them.
		tr.MaxIdleConnsPerHost = 32
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
	rc := &retryablehttp.Client{
		HTTPClient:   wrapClient(cfg.HTTPClient, cfg.serviceOnlyHeaders()),
		Logger:       nil, // we log ourselves, without URLs' query strings or headers
		RetryWaitMin: cfg.Retry.MinWait,
		RetryWaitMax: cfg.Retry.MaxWait,
		RetryMax:     cfg.Retry.MaxRetries,
		CheckRetry:   checkRetry,
		Backoff:      cfg.Retry.backoff,
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
		RequestLogHook: func(_ retryablehttp.Logger, req *http.Request, attempt int) {
			if st, _ := req.Context().Value(attemptKey{}).(*attemptState); st != nil {
				st.wrote.Store(false)
			}
			if attempt > 0 {
				cfg.Logger.LogAttrs(req.Context(), slog.LevelDebug, "partner: retrying request",
					slog.String("method", req.Method), slog.String("path", req.URL.Path), slog.Int("attempt", attempt+1))
			}
		},
	}
	return &Client{cfg: cfg, retry: rc}
}

// HTTPClient returns the underlying *http.Client.
func (c *Client) HTTPClient() *http.Client { return c.cfg.HTTPClient }

// Logger returns the client's logger (never nil).
func (c *Client) Logger() *slog.Logger { return c.cfg.Logger }

// Decoder reads a successful response body itself, for streaming answers.
type Decoder func(r io.Reader) error

// Request describes one operation.
type Request struct {
	Method string
	// Path is relative to the base URL and already escaped (see Pathf).
	Path string
	// URL, when set, is an absolute URL used instead of base URL and Path
	// (signed upload URLs). Authorization is never sent to it.
	URL string
	// Query is a struct with `url` tags (go-querystring) or url.Values.
	Query any
	// JSON is encoded as the request body when non-nil.
	JSON any
	// Body is sent as is when JSON is nil. An io.ReadSeeker is rewound for
	// each attempt; any other reader can be sent only once.
	Body io.Reader
	// BodyFunc, when set, opens a fresh body for each attempt.
	BodyFunc BodyFunc
	// ContentType of Body or BodyFunc ("application/json" for JSON).
	ContentType string
	// Header adds headers to this request only.
	Header http.Header
	// Idempotent marks an operation that is safe to repeat after the
	// server may have processed it (reads, PUT, PATCH that set a value).
	Idempotent bool
	// NoAuth sends no Authorization header (the token endpoint itself).
	NoAuth bool
	// Token, when set, is sent as the bearer token instead of the
	// client's (token invalidation names the token this way).
	Token string
	// Observe, when set, is called with every response the server sends
	// to this request, those that are retried included, before any retry
	// (an export slows down on 429 and 503 this way). It must not read or
	// close the body.
	Observe func(*http.Response)
}

// Pathf formats a path, escaping every string argument (of any string
// type, such as a named ID type) as one path segment: "/" and "?" inside
// it are escaped, and the dot segments "." and ".." are escaped too so
// that an identifier can never climb to another path.
func Pathf(format string, args ...any) string {
	esc := make([]any, len(args))
	for i, a := range args {
		if v := reflect.ValueOf(a); v.Kind() == reflect.String {
			esc[i] = escapeSegment(v.String())
		} else {
			esc[i] = a
		}
	}
	return fmt.Sprintf(format, esc...)
}

func escapeSegment(s string) string {
	switch s {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return url.PathEscape(s)
}

// Do sends r and decodes a 2xx answer into out: nil discards it, a
// Decoder reads it, anything else is decoded as JSON. Any other answer is
// returned as an *Error. A 401 on an authorized request drops the cached
// token and repeats the request once with a new one.
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
		err = json.NewDecoder(resp.Body).Decode(out)
		if errors.Is(err, io.EOF) {
			err = nil // an empty body decodes to the zero value
		}
		// Read what follows the value (a newline) so that the connection
		// can be reused; a long tail is not worth reading.
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	}
	if err != nil {
		return fmt.Errorf("partner: %s %s: reading response: %w", r.Method, c.pathOf(r), err)
	}
	return nil
}

// Send is Do without decoding: it returns the 2xx response, whose body the
// caller must close, or an error.
func (c *Client) Send(ctx context.Context, r *Request) (*http.Response, error) {
	u, err := c.url(r)
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
	auth := c.cfg.Tokens != nil && !r.NoAuth && r.URL == "" && r.Token == ""
	for try := 0; ; try++ {
		var tok *oauth2.Token
		if auth {
			if tok, err = c.cfg.Tokens.Token(ctx); err != nil {
				return nil, err
			}
		}
		resp, blocked, err := c.send(ctx, r, u, b, tok)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return resp, nil
		}
		if resp.StatusCode == http.StatusUnauthorized && auth {
			// The token is bad whether or not the request can be repeated.
			c.cfg.Tokens.Invalidate(tok)
			if try == 0 {
				if !b.replayable() {
					return nil, With(newError(resp, r.Method, u.Path), ErrBodyNotReplayable)
				}
				io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
				resp.Body.Close()
				c.cfg.Logger.LogAttrs(ctx, slog.LevelDebug, "partner: 401, refreshing token and repeating",
					slog.String("method", r.Method), slog.String("path", u.Path))
				continue
			}
		}
		if blocked {
			return nil, With(newError(resp, r.Method, u.Path), ErrBodyNotReplayable)
		}
		return nil, newError(resp, r.Method, u.Path)
	}
}

// send makes one exchange through go-retryablehttp. blocked reports that a
// retry was called for but the body could not be sent again.
func (c *Client) send(ctx context.Context, r *Request, u *url.URL, b *body, tok *oauth2.Token) (_ *http.Response, blocked bool, _ error) {
	ctx, st := withAttemptState(ctx, r.Idempotent || r.Method == http.MethodGet || r.Method == http.MethodHead, b)
	st.observe = r.Observe
	var rawBody any
	if b != nil {
		rawBody = retryablehttp.ReaderFunc(b.attempt)
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, r.Method, u.String(), rawBody)
	if err != nil {
		return nil, false, Wrap(unwrapURLError(err), "%s %s", r.Method, u.Path)
	}
	if b != nil && b.size >= 0 {
		req.ContentLength = b.size
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
	if c.cfg.UserAgent != "" {
		h.Set("User-Agent", c.cfg.UserAgent)
	}
	if c.cfg.Env != "" && r.URL == "" {
		h.Set(c.cfg.EnvHeader, c.cfg.Env)
	}
	if c.cfg.SubscriptionKey != "" && toService {
		h.Set(c.cfg.SubscriptionKeyHeader, c.cfg.SubscriptionKey)
	}
	h.Set("Accept", "application/json")
	switch {
	case r.JSON != nil:
		h.Set("Content-Type", "application/json")
	case r.ContentType != "":
		h.Set("Content-Type", r.ContentType)
	}
	if tok != nil {
		h.Set("Authorization", "Bearer "+tok.AccessToken)
	} else if r.Token != "" {
		h.Set("Authorization", "Bearer "+r.Token)
	}
	start := time.Now()
	resp, err := c.retry.Do(req)
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
		c.cfg.Logger.LogAttrs(ctx, slog.LevelDebug, "partner: request failed",
			slog.String("method", r.Method), slog.String("path", u.Path), slog.String("error", err.Error()))
		return nil, false, Wrap(err, "%s %s", r.Method, u.Path)
	}
	c.cfg.Logger.LogAttrs(ctx, slog.LevelDebug, "partner: request done",
		slog.String("method", r.Method), slog.String("path", u.Path),
		slog.Int("status", resp.StatusCode), slog.Duration("elapsed", time.Since(start)))
	return resp, st.replayBlocked.Load(), nil
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

func (c *Client) pathOf(r *Request) string {
	if r.URL != "" {
		if u, err := url.Parse(r.URL); err == nil {
			return u.Path
		}
	}
	p, _, _ := strings.Cut(r.Path, "?")
	return p
}

func (c *Client) url(r *Request) (*url.URL, error) {
	var u *url.URL
	if r.URL != "" {
		var err error
		if u, err = url.Parse(r.URL); err != nil {
			return nil, fmt.Errorf("partner: bad URL: %w", err)
		}
	} else {
		if c.cfg.BaseURL == nil {
			return nil, errors.New("partner: no base URL configured")
		}
		rel, err := url.Parse(strings.TrimPrefix(r.Path, "/"))
		if err != nil {
			return nil, fmt.Errorf("partner: bad path %q: %w", r.Path, err)
		}
		base := *c.cfg.BaseURL
		if !strings.HasSuffix(base.Path, "/") {
			base.Path += "/"
			if base.RawPath != "" {
				base.RawPath += "/"
			}
		}
		u = base.ResolveReference(rel)
	}
	if r.Query != nil {
		var vals url.Values
		switch q := r.Query.(type) {
		case url.Values:
			vals = q
		default:
			var err error
			if vals, err = query.Values(q); err != nil {
				return nil, fmt.Errorf("partner: encoding query: %w", err)
			}
		}
		if len(vals) > 0 {
			merged := u.Query()
			for k, vs := range vals {
				merged[k] = append(merged[k], vs...)
			}
			u.RawQuery = merged.Encode()
		}
	}
	return u, nil
}

// wrapClient returns a shallow copy of hc for go-retryablehttp:
//   - its transport hides CloseIdleConnections, which go-retryablehttp
//     calls whenever a request finally fails and which would empty the
//     connection pool every other request shares;
//   - a redirect to another host drops the headers meant for the service
//     only (fixed headers, the environment, a gateway's subscription key),
//     as net/http already drops Authorization.
func wrapClient(hc *http.Client, serviceOnly []string) *http.Client {
	cp := *hc
	rt := cp.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	cp.Transport = roundTripperOnly{rt}
	next := hc.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && req.URL.Host != via[0].URL.Host {
			for _, k := range serviceOnly {
				req.Header.Del(k)
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &cp
}

// serviceOnlyHeaders names the headers that must not follow a redirect to
// another host.
func (cfg *Config) serviceOnlyHeaders() []string {
	names := []string{cfg.EnvHeader, cfg.SubscriptionKeyHeader}
	for k := range cfg.Header {
		names = append(names, k)
	}
	return names
}

type roundTripperOnly struct{ rt http.RoundTripper }

func (r roundTripperOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	return r.rt.RoundTrip(req)
}
