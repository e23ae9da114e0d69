// Package core is the request pipeline every service of the SDK sends
// through, and the error type its calls return. A service (scim.Service,
// reports.Service, ...) is a thin layer over a *Client: it describes each
// operation as a Request (method, path, query, body, whether it is safe
// to repeat) and calls Client.Do, which builds the URL and headers
// (Authorization, environment, user agent), sends through
// go-retryablehttp under the RetryPolicy (retries, the retry budget, the
// repeat with a new token after a 401), and decodes a 2xx answer or
// returns an *Error.
//
// partner.New builds one Client for a partner.Client and every service
// over it. A service can also be built alone over a Client made here:
//
//	tokens := core.New(core.Config{BaseURL: base})
//	auth := oauth.New(tokens, oauth.Options{ClientID: id, ClientSecret: secret})
//	svc := scim.New(tokens.WithTokens(auth))
//
// Writing an operation of a new service takes a Request and Do; a path
// with variable segments is a Route, its template and values in one
// statement (PathOf):
//
//	var u User
//	err := p.Do(ctx, &core.Request{Method: http.MethodGet, Route: core.PathOf("/api/scim/v2/Users/{id}", id)}, &u)
//
// A GET is repeated freely; a write says whether it is (Idempotent).
//
// Errors of the SDK start with "partner: " once: Wrap and With add
// context to an error without repeating it.
package core

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/oauth2"

	"github.com/partnerapi/partner-go/internal/errs"
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
// Token call fetches a new one; Client calls it after a 401.
type TokenSource interface {
	Token(ctx context.Context) (*oauth2.Token, error)
	Invalidate(tok *oauth2.Token)
}

// Config holds what every request of a Client shares. Only BaseURL is
// needed; the zero value of every other field is a working default.
type Config struct {
	// BaseURL is the service's base URL; a Request's Path is relative to
	// it.
	BaseURL *url.URL
	// HTTPClient sends the requests (its Transport, Timeout, proxies).
	// Nil means a pooled client with the Default timeouts. Its
	// CheckRedirect and Jar are used after the Client's own redirect
	// rules (see ErrInsecureRedirect).
	HTTPClient *http.Client
	// Tokens gives the bearer token of each request; nil sends no
	// Authorization. WithTokens sets it on a Client that shares the
	// pipeline.
	Tokens TokenSource
	// Env, when set, is sent in the environment header of every request
	// to the service.
	Env string
	// EnvHeader names the environment header ("" means EnvHeader).
	EnvHeader string
	// SubscriptionKey is the API gateway's subscription key, a secret:
	// sent to the service only, never logged or put in an error.
	SubscriptionKey string
	// SubscriptionKeyHeader names its header ("" means
	// SubscriptionKeyHeader).
	SubscriptionKeyHeader string
	// PortalWord is the deployment's word for the interface's
	// partner_portal (deployment.Words.PortalWord), when the client was
	// given one: services read it (PortalWord) to name the deployment's own
	// fields, such as the audit field.
	PortalWord string
	// UserAgent is the User-Agent header of every request, when set.
	UserAgent string
	// Header holds fixed extra headers of every request to the service
	// (not to an absolute URL on another host).
	Header http.Header
	// Logger logs requests and retries at debug level, never a secret;
	// nil logs nothing.
	Logger *slog.Logger
	// Retry says how often and how patiently requests are repeated.
	Retry RetryPolicy
	// StallTimeout is the longest an answer's body may send nothing while
	// it is read (default DefaultStallTimeout): past it the attempt fails
	// with ErrAnswerStalled.
	StallTimeout time.Duration
	// AllowInsecureHTTP allows plain http absolute URLs (signed upload
	// URLs, webhook callbacks) to hosts that are not loopback addresses.
	AllowInsecureHTTP bool
	// TracerProvider and MeterProvider receive the client's spans and
	// metrics (otel.go); nil means the global providers, read by New.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// RequestIDHeader names the header that carries the id the client
	// generates for each call, the same on every attempt ("" means
	// DefaultRequestIDHeader); NoRequestID sends none.
	RequestIDHeader string
	NoRequestID     bool
	// ServiceRequestIDHeader names the header in which the service
	// answers with its own id of a request; "" reads none (the interface
	// publishes none).
	ServiceRequestIDHeader string
}

// Client is the pipeline: it sends the Requests of every service over
// one HTTP client, one retry policy and one retry budget. It is safe for
// concurrent use.
type Client struct {
	cfg  Config
	base string   // cfg.BaseURL with a trailing slash, "" when none
	ua   []string // the User-Agent header's value, shared by every request
	auth atomic.Pointer[authValue]
	// rc sends every request, with the retry policy in its hooks; a
	// Client made by WithTokens shares it.
	rc     *retryablehttp.Client
	budget *retryBudget // nil: no retry budget; shared like rc
	tel    *telemetry   // spans and metrics; shared like rc
	// reqIDHeader is the canonical request id header, "" when off.
	reqIDHeader string
	// secrets are masked in what the client repeats of a server's words
	// (secrets.go); shared like rc.
	secrets *secretSet
	// testHookWait, when set on the Client New returned, is told each
	// wait before a retry.
	testHookWait func(time.Duration)
}

// New returns a Client for cfg. It does no I/O.
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
		// A pooled connection that a NAT or load balancer dropped
		// silently is closed before they would drop it (HTTP/1), and
		// found by a ping (HTTP/2), instead of costing a request.
		tr.IdleConnTimeout = DefaultIdleConnTimeout
		tr.HTTP2 = &http.HTTP2Config{SendPingTimeout: DefaultHTTP2PingInterval, PingTimeout: DefaultHTTP2PingTimeout}
		cfg.HTTPClient = &http.Client{Transport: tr}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	secrets := &secretSet{}
	secrets.add(cfg.SubscriptionKey)
	if cfg.Logger.Handler() != slog.DiscardHandler {
		cfg.Logger = slog.New(maskHandler{withTraceIDs(cfg.Logger).Handler(), secrets})
	}
	cfg.Retry = cfg.Retry.withDefaults()
	cfg.StallTimeout = orDefault(cfg.StallTimeout, DefaultStallTimeout)
	if cfg.EnvHeader == "" {
		cfg.EnvHeader = EnvHeader
	}
	if cfg.SubscriptionKeyHeader == "" {
		cfg.SubscriptionKeyHeader = SubscriptionKeyHeader
	}
	c := &Client{cfg: cfg, budget: newRetryBudget(cfg.Retry), secrets: secrets}
	if !cfg.NoRequestID {
		c.reqIDHeader = http.CanonicalHeaderKey(cmp.Or(cfg.RequestIDHeader, DefaultRequestIDHeader))
	}
	c.tel = newTelemetry(&cfg, c.budget)
	c.rc = &retryablehttp.Client{
		HTTPClient: wrapClient(cfg.HTTPClient, cfg.serviceOnlyHeaders(), c.tel.prop, cfg.StallTimeout),
		Logger:     nil, // we log ourselves, without URLs' query strings or headers
		// checkRetry decides every repeat (the retries for failures, a
		// call's own CallOptions.MaxRetries, the repeat after a 401).
		RetryMax:       math.MaxInt32,
		CheckRetry:     checkRetry,
		Backoff:        c.backoff,
		RequestLogHook: beforeAttempt,
		PrepareRetry:   prepareRetry,
		ErrorHandler:   dropResponse,
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

// WithTokens returns a Client like c that authorizes its requests with
// ts. Both send through one go-retryablehttp client: one connection pool,
// one retry policy and one retry budget, so that token requests (sent by
// c) and API calls draw on the same bucket.
func (c *Client) WithTokens(ts TokenSource) *Client {
	cfg := c.cfg
	cfg.Tokens = ts
	return &Client{cfg: cfg, base: c.base, ua: c.ua, rc: c.rc, budget: c.budget, tel: c.tel, secrets: c.secrets, reqIDHeader: c.reqIDHeader}
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
	c.secrets.add(token)
	a := &authValue{token: token, value: []string{"Bearer " + token}}
	c.auth.Store(a)
	return a.value
}

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
func (c *Client) Do(ctx context.Context, r *Request, out any) (err error) {
	ctx, span := c.startOp(ctx, r)
	defer func() { EndSpan(span, err) }()
	_, streams := out.(Decoder)
	resp, st, err := c.send(ctx, r, !streams)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := decode(resp, out); err != nil {
		// The service answered 2xx: it did the work, only the answer is lost.
		st.ambiguous = true
		return st.settle(c.secrets.maskErr(fmt.Errorf("partner: %s %s: reading response: %w", r.Method, st.path, err)))
	}
	return nil
}

// decode reads a 2xx answer into out (see Do).
func decode(resp *http.Response, out any) error {
	switch d := out.(type) {
	case nil:
		_, err := io.Copy(io.Discard, resp.Body)
		return err
	case Decoder:
		return d(resp.Body)
	}
	if resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if w, ok := resp.Body.(*wholeBody); ok && w.b != nil {
		// Read whole in the retry loop (call.readAnswer).
		return decodeBytes(w.b, out)
	}
	err := json.NewDecoder(resp.Body).Decode(out)
	if errors.Is(err, io.EOF) {
		err = nil // an empty body decodes to the zero value
	}
	// Read what follows the value (a newline) so that the connection can
	// be reused; a long tail is not worth reading.
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	return err
}

// repeatable reports whether r may be repeated after the server may have
// processed it.
func (c *Client) repeatable(r *Request) bool {
	return r.Idempotent || r.Method == http.MethodGet || r.Method == http.MethodHead
}

// maxWholeBody is the largest answer call.readAnswer reads whole.
const maxWholeBody = 4 << 20

// decodeBytes decodes a whole body into out: a type with its own
// UnmarshalJSON (a SCIM user) gets the bytes at once instead of after a
// Decoder has scanned them twice.
func decodeBytes(b []byte, out any) error {
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
	ctx, span := c.startOp(ctx, r)
	resp, _, err := c.send(ctx, r, false)
	EndSpan(span, err)
	return resp, err
}

// send makes one call: its attempts go through go-retryablehttp, whose
// hooks (retry.go) follow the call's state; finish turns the last
// attempt into the call's answer. decodes says that Do decodes the
// answer (call.decodes).
func (c *Client) send(ctx context.Context, r *Request, decodes bool) (*http.Response, *call, error) {
	u, us, err := c.url(r)
	if err != nil {
		return nil, nil, err
	}
	var raw []byte
	if r.JSON != nil {
		if raw, err = json.Marshal(r.JSON); err != nil {
			return nil, nil, fmt.Errorf("partner: %s %s: encoding request: %w", r.Method, u.Path, err)
		}
	}
	b, err := newBody(r.Body, r.BodyFunc, raw)
	if err != nil {
		return nil, nil, errs.Wrap(err, "%s %s", r.Method, u.Path)
	}
	st, err := c.newCall(ctx, r, u, b, decodes)
	if err != nil {
		return nil, nil, err
	}
	// Whether an attempt wrote its request matters only to requests that
	// are not repeated freely, and to a DELETE (a 404 after an attempt
	// that may have been processed means done).
	ctx = withCall(ctx, st, !st.idempotent || r.Method == http.MethodDelete)
	req, err := c.newRequest(ctx, st, r, u, us, b)
	if err != nil {
		return nil, nil, err
	}
	if st.auth {
		if err := st.sign(ctx, req.Header); err != nil {
			return nil, nil, err
		}
	}
	resp, err := c.rc.Do(req)
	resp, err = c.finish(ctx, r, u.Path, st, resp, err)
	return resp, st, err
}

// newCall returns the state of a call of r, sent to u with body b: its
// options (those of ctx, unless it is a call made for another call, such
// as its token request), its request id and its telemetry.
func (c *Client) newCall(ctx context.Context, r *Request, u *url.URL, b *body, decodes bool) (*call, error) {
	st := &call{
		c: c, method: r.Method, path: u.Path, idempotent: c.repeatable(r), body: b, observe: r.Observe, read: r.Read, start: time.Now(), decodes: decodes,
		auth:      c.cfg.Tokens != nil && !r.NoAuth && r.URL == "" && r.Token == "",
		maxAnswer: orDefault(r.MaxAnswerSize, DefaultMaxAnswerSize), sameHost: r.NoCrossHostRedirect,
	}
	c.secrets.add(r.Token)
	if _, nested := callOf(ctx); !nested {
		if st.opts = callOptionsOf(ctx); st.opts != nil {
			if err := c.checkCallHeader(st.opts.Header); err != nil {
				return nil, err
			}
		}
	}
	if c.reqIDHeader != "" {
		st.requestID = newRequestID()
	}
	st.initTel(ctx, r, u, c.toService(r, u))
	return st, nil
}

// newRequest builds the request of every attempt of r, without
// Authorization for the client's token (call.sign adds it).
func (c *Client) newRequest(ctx context.Context, st *call, r *Request, u *url.URL, us string, b *body) (*retryablehttp.Request, error) {
	var rawBody any
	switch {
	case b != nil && b.mem != nil:
		rawBody = b.mem
	case b != nil:
		rawBody = retryablehttp.ReaderFunc(b.attempt)
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, r.Method, us, rawBody)
	if err != nil {
		return nil, errs.Wrap(unwrapURLError(err), "%s %s", r.Method, u.Path)
	}
	if b != nil && b.size >= 0 {
		req.ContentLength = b.size
	}
	c.setHeaders(req.Header, st, r, u)
	return req, nil
}

// setHeaders sets the headers of r on h.
func (c *Client) setHeaders(h http.Header, st *call, r *Request, u *url.URL) {
	// Fixed headers (a gateway's subscription key), the call's own, its
	// request id and the environment go to the service only, not to an
	// absolute URL on another host.
	toService := c.toService(r, u)
	if toService {
		for k, vs := range c.cfg.Header {
			h[k] = append([]string(nil), vs...)
		}
		if st.opts != nil {
			for k, vs := range st.opts.Header {
				h[k] = append([]string(nil), vs...)
			}
		}
		if st.requestID != "" {
			h[c.reqIDHeader] = []string{st.requestID}
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
	if r.Token != "" {
		h.Set("Authorization", "Bearer "+r.Token)
	}
}

// toService reports whether r, sent to u, goes to the service: a path,
// or an absolute URL on the base URL's host.
func (c *Client) toService(r *Request, u *url.URL) bool {
	return r.URL == "" || (c.cfg.BaseURL != nil && strings.EqualFold(u.Host, c.cfg.BaseURL.Host))
}

// finish turns the end of a call's attempts into its answer: the 2xx
// response, or the error, marked by the call's state (call.settle).
func (c *Client) finish(ctx context.Context, r *Request, path string, st *call, resp *http.Response, err error) (*http.Response, error) {
	switch {
	case st.tokenErr != nil:
		// The token of a repeat could not be had: the token's error.
		st.capture(nil)
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
		st.capture(nil)
		c.logDebug(ctx, "partner: request failed", r.Method, path, slog.String("error", err.Error()))
		return nil, errs.Wrap(err, "%s %s", r.Method, path)
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		st.capture(resp)
		c.logDebug(ctx, "partner: request done", r.Method, path,
			slog.Int("status", resp.StatusCode), slog.Duration("elapsed", time.Since(st.start)))
		return resp, nil
	case resp.StatusCode == http.StatusNotFound && r.Method == http.MethodDelete && st.ambiguous:
		c.logDebug(ctx, "partner: 404 after an attempt whose outcome was unknown: already deleted", r.Method, path)
		resp = alreadyDone(resp)
		st.capture(resp)
		return resp, nil
	}
	if st.stop != "" {
		c.logDebug(ctx, "partner: not retrying: "+st.stop, r.Method, path, slog.Int("status", resp.StatusCode))
	}
	st.capture(resp)
	e := newError(resp, r.Method, path)
	c.secrets.maskError(e)
	e.RequestID, e.ServiceRequestID = st.requestID, st.serviceRequestID(resp)
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
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}

// DoNew sends r and decodes a 2xx answer into a new T (as Do), which it
// returns: the body of the operations that answer with one thing.
func DoNew[T any](ctx context.Context, c *Client, r *Request) (*T, error) {
	out := new(T)
	if err := c.Do(ctx, r, out); err != nil {
		return nil, err
	}
	return out, nil
}
