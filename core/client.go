package core

// This file is the pipeline's face and one call top to bottom: Config,
// Client and New; Do and Send, and send, which builds the call
// (build.go), hands it to the call's go-retryablehttp client, and
// reports its end (report.go). The library owns the attempt loop and
// calls the stages of each attempt back (see the package doc): the
// call's transport sends it (send.go), CheckRetry reads the answer
// (answer.go) and decides (retry.go).

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

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
	// Logger logs each attempt of a request at debug level, never a
	// secret; nil logs nothing. Every attempt ends in one record with
	// the attributes method, path, attempt (its number, from 1), status
	// (or error), request_id and service_request_id (when there are
	// any). An attempt that is repeated logs "partner: retrying request"
	// (after a 401, "partner: 401, refreshing token and repeating") with
	// wait, the wait before the next attempt; the last one logs
	// "partner: request done" (an answer), "partner: request failed"
	// (an error, without a status) or why the retries stopped.
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
	base string // cfg.BaseURL with a trailing slash, "" when none
	// baseURL is base parsed as net/http parses a request's URL, once:
	// a request's URL is a copy with its path appended (newRequest);
	// nil when base holds more than a scheme, host and plain path.
	baseURL *url.URL
	ua      []string // the User-Agent header's value, shared by every request
	auth    atomic.Pointer[authValue]
	// hc is the HTTP client every call copies (send.go): the given one,
	// or the pooled one New builds; a Client made by WithTokens shares
	// it, and with it the connection pool.
	hc     *sharedHTTP
	budget *retryBudget // nil: no retry budget; shared like hc
	tel    *telemetry   // spans and metrics; shared like hc
	// reqIDHeader is the canonical request id header, "" when off.
	reqIDHeader string
	// secrets are masked in what the client repeats of a server's words
	// (secrets.go); shared like hc.
	secrets *secretSet
	// testHookWait, when set on the Client New returned, is told each
	// wait before a retry.
	testHookWait func(time.Duration)
}

// New returns a Client for cfg. It does no I/O.
func New(cfg Config) *Client {
	built := cfg.HTTPClient == nil
	if built {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// Exports keep many page requests in flight to one host; the
		// default of 2 idle connections per host would reopen most of them.
		tr.MaxIdleConnsPerHost = 32
		tr.DialContext = (&net.Dialer{Timeout: DefaultDialTimeout, KeepAlive: 30 * time.Second}).DialContext
		tr.TLSHandshakeTimeout = DefaultTLSHandshakeTimeout
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
	c.hc = newSharedHTTP(&cfg, c.tel.prop)
	if built {
		// A server that accepted the request but never answers would
		// otherwise hold the call until its context ends: the watch
		// bounds the wait for the headers (watch.go), as
		// ResponseHeaderTimeout would with a timer per request.
		c.hc.headers = newHeaderWatch(DefaultResponseHeaderTimeout)
	}
	if cfg.BaseURL != nil {
		c.base = cfg.BaseURL.String()
		if !strings.HasSuffix(c.base, "/") {
			c.base += "/"
		}
		c.baseURL = parseBase(c.base)
	}
	if cfg.UserAgent != "" {
		c.ua = []string{cfg.UserAgent}
	}
	return c
}

// EnvQuery is the environment as a query parameter named after the
// environment header, which token requests carry beside the header as the
// deployed service's descriptions show; nil when no environment is set.
//
// Deprecated: Do and Send send the environment header themselves; a
// request that also needs it as a query parameter puts
// url.Values{Config.EnvHeader: {Config.Env}} in Request.Query.
// It stays for v1; the SDK's area packages reach it through
// internal/plumbing.
func (c *Client) EnvQuery() url.Values {
	if c.cfg.Env == "" {
		return nil
	}
	return url.Values{c.cfg.EnvHeader: {c.cfg.Env}}
}

// PortalWord is the deployment's portal word the client was given
// (Config.PortalWord), "" when it was given none: a service names the
// deployment's own fields with it (deployment.Words.AuditField).
func (c *Client) PortalWord() string { return c.cfg.PortalWord }

// WithTokens returns a Client like c that authorizes its requests with
// ts. Both send through one HTTP client, one retry policy and one retry
// budget: one connection pool, and token requests (sent by c) and API
// calls draw on the same bucket.
func (c *Client) WithTokens(ts TokenSource) *Client {
	cfg := c.cfg
	cfg.Tokens = ts
	return &Client{cfg: cfg, base: c.base, baseURL: c.baseURL, ua: c.ua, hc: c.hc, budget: c.budget, tel: c.tel, secrets: c.secrets, reqIDHeader: c.reqIDHeader}
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
//
// Deprecated: log with the logger given as Config.Logger; Do and Send
// log each attempt through it themselves, the client's secrets masked.
// It stays for v1; the SDK's area packages reach it through
// internal/plumbing.
func (c *Client) Logger() *slog.Logger { return c.cfg.Logger }

// Do sends r and decodes a 2xx answer into out: nil discards it (or
// leaves it to Request.Read), a Decoder reads it, anything else is
// decoded as JSON. Any other answer is returned as an *Error. A 401 on
// an authorized request drops the cached token and repeats the request
// once with a new one.
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
	defer st.release()
	defer resp.Body.Close()
	if err := decode(resp, out, st.answer); err != nil {
		// The service answered 2xx: it did the work, only the answer is lost.
		st.ambiguous = true
		return st.settle(c.secrets.maskErr(fmt.Errorf("partner: %s %s: reading response: %w", r.Method, st.path, err)))
	}
	return nil
}

// Send is Do without decoding: it returns the 2xx response, whose body the
// caller must close, or an error.
//
// A DELETE answered 404 after an earlier attempt whose outcome was unknown
// (the first attempt removed the resource, its answer was lost) counts as
// done: Send returns an empty 204 response.
func (c *Client) Send(ctx context.Context, r *Request) (*http.Response, error) {
	ctx, span := c.startOp(ctx, r)
	resp, st, err := c.send(ctx, r, false)
	st.release()
	EndSpan(span, err)
	return resp, err
}

// send makes one call: its attempts go through the call's
// go-retryablehttp client, which calls back the call's stages (send.go);
// finish turns the last attempt into the call's answer. decodes says
// that Do decodes the answer (call.decodes).
func (c *Client) send(ctx context.Context, r *Request, decodes bool) (*http.Response, *call, error) {
	u, us, err := c.url(r)
	if err != nil {
		return nil, nil, err
	}
	st := getCall()
	req, err := c.newRequest(ctx, st, r, u, us)
	if err != nil {
		st.release()
		return nil, nil, err
	}
	u = req.URL
	var raw []byte
	if r.JSON != nil {
		if raw, err = json.Marshal(r.JSON); err != nil {
			st.release()
			return nil, nil, fmt.Errorf("partner: %s %s: encoding request: %w", r.Method, u.Path, err)
		}
	}
	b, err := newBody(r.Body, r.BodyFunc, raw)
	if err != nil {
		st.release()
		return nil, nil, errs.Wrap(err, "%s %s", r.Method, u.Path)
	}
	if err := c.newCall(ctx, st, r, u, b, decodes); err != nil {
		st.release()
		return nil, nil, err
	}
	if cctx := withCall(ctx, st, st.tracesWrites()); cctx != ctx {
		ctx, req.Request = cctx, req.Request.WithContext(cctx)
	}
	if err := c.prepare(req, st, r, u, b); err != nil {
		st.release()
		return nil, nil, err
	}
	if st.auth {
		if err := st.sign(ctx, req.Header); err != nil {
			st.release()
			return nil, nil, err
		}
	}
	resp, err := st.retryClient().Do(req)
	resp, err = c.finish(ctx, r, u.Path, st, resp, err)
	if err != nil {
		st.release()
		return nil, nil, err
	}
	return resp, st, nil
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
