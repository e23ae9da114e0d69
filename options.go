package partner

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"golang.org/x/oauth2"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/internal/check"
	"github.com/partnerapi/partner-go/oauth"
)

// Option configures a Client built by New.
type Option func(*settings)

// settings is what the options of New write: the pipeline's Config and
// the OAuth service's Options as New hands them over, and the two
// settings that build turns into Config fields.
type settings struct {
	cfg  core.Config   // BaseURL and UserAgent are set by build
	auth oauth.Options // given to oauth.New as it is
	// baseURL is WithBaseURL's text, which build parses into cfg.BaseURL.
	baseURL string
	// uaSuffix follows the SDK's name in cfg.UserAgent.
	uaSuffix string
}

// WithBaseURL sets the service's base URL, e.g. "https://api.example.com".
// It must be HTTPS unless the host is a loopback address ("localhost" in
// any case, 127.0.0.0/8 or ::1; not names under .localhost) or
// WithInsecureHTTP is given.
func WithBaseURL(u string) Option { return func(s *settings) { s.baseURL = u } }

// WithClientCredentials sets the OAuth client id and secret used for the
// client credentials grant.
func WithClientCredentials(id, secret string) Option {
	return func(s *settings) { s.auth.ClientID, s.auth.ClientSecret = id, secret }
}

// WithScopes sets the scopes requested with each token.
func WithScopes(scopes ...string) Option {
	return func(s *settings) { s.auth.Scopes = append([]string(nil), scopes...) }
}

// WithState sets the OAuth `state` sent with each token request. It
// protects against taking a token answer meant for another request (a
// misrouting proxy, a shared cache): an answer whose `state` differs is
// refused with oauth.ErrStateMismatch. An answer without `state` is
// accepted, since the deployed service's published token answer has none
// (RFC 6749 defines no `state` on the token endpoint).
func WithState(state string) Option { return func(s *settings) { s.auth.State = state } }

// WithEnvironment selects a sandbox environment by its host name (such as
// "sandbox.example.com", without scheme or path): the value is sent in
// the environment header of every request to the service, and token
// requests (getting, refreshing and invalidating a token) carry it also
// as a query parameter of the header's name, as the deployed service's
// descriptions do.
//
// A deployment reads the environment from a header named after its
// operator, which the interface's stand-in x-svc-env is not: a header of
// another name is ignored, and the request goes to the production
// environment. So New refuses WithEnvironment unless the header is named,
// toward any host: by WithEnvironmentHeader, WithWords or WithConnection
// (a fake's fake.Fake.Connection names the fake's, x-svc-env unless it was
// given another).
func WithEnvironment(env string) Option { return func(s *settings) { s.cfg.Env = env } }

// WithEnvironmentHeader sets the name of the environment header (and of
// the token requests' query parameter) that WithEnvironment's value
// travels in. The interface's x-svc-env is a neutral stand-in; a
// deployment names the header after its operator, and that name goes
// here.
func WithEnvironmentHeader(name string) Option { return func(s *settings) { s.cfg.EnvHeader = name } }

// WithSubscriptionKey sends an API gateway's subscription key with every
// request to the service, token requests included, in the header
// Ocp-Apim-Subscription-Key (or the one WithSubscriptionKeyHeader names).
// The key is a secret: it is never logged, never put in an error, and
// never sent to another host (signed upload URLs, redirects elsewhere).
func WithSubscriptionKey(key string) Option { return func(s *settings) { s.cfg.SubscriptionKey = key } }

// WithSubscriptionKeyHeader sets the header WithSubscriptionKey's key
// travels in, for a gateway that names it otherwise.
func WithSubscriptionKeyHeader(name string) Option {
	return func(s *settings) { s.cfg.SubscriptionKeyHeader = name }
}

// WithWords gives the client the deployment's words: the environment
// header's name (as WithEnvironmentHeader), the portal word, and the
// subscription key's header (as WithSubscriptionKeyHeader). A field left
// empty leaves that setting alone. With a portal word, objects.Service.Audit
// writes the deployment's audit field (deployment.Words.AuditField) when
// its params name none.
//
// Give the fake and the client the same words: fake.Fake.Connection
// returns the fake's, and WithConnection takes them with its address and
// credentials.
func WithWords(w deployment.Words) Option {
	return func(s *settings) {
		set := func(dst *string, v string) {
			if v != "" {
				*dst = v
			}
		}
		set(&s.cfg.EnvHeader, w.EnvHeader)
		set(&s.cfg.PortalWord, w.PortalWord)
		set(&s.cfg.SubscriptionKeyHeader, w.SubscriptionKeyHeader)
	}
}

// WithConnection sets the base URL, the client credentials, the
// subscription key (when c has one), the words (WithWords) and the
// environment (when c has one) from c, as WithBaseURL,
// WithClientCredentials, WithSubscriptionKey, WithWords and
// WithEnvironment would. A program hands it the deployment the PARTNER_*
// variables name (deployment.FromEnv); a test hands it a fake's
// (fake.Fake.Connection), so the client speaks the fake's words on the
// path it takes toward a deployment:
//
//	srv := fake.NewServer()
//	c, err := partner.New(partner.WithConnection(srv.Connection()))
//
// Options after it override what it set.
func WithConnection(c deployment.Connection) Option {
	return func(s *settings) {
		s.baseURL = c.BaseURL
		s.auth.ClientID, s.auth.ClientSecret = c.ClientID, c.ClientSecret
		if c.SubscriptionKey != "" {
			s.cfg.SubscriptionKey = c.SubscriptionKey
		}
		WithWords(c.Words)(s)
		if c.Environment != "" {
			s.cfg.Env = c.Environment
		}
	}
}

// WithHTTPClient sets the *http.Client requests go through (its Transport,
// Timeout, proxies). Its CheckRedirect and Jar are used as they are, after
// the client's own redirect rules: a redirect from https to http is
// refused, and one to another host carries neither the bearer token nor
// the fixed headers.
//
// Without it the client uses a pooled transport with these timeouts: 10s
// to dial, 10s for the TLS handshake, and 60s for the response headers
// once the request is written (kept by the client, like net/http's
// ResponseHeaderTimeout but without a timer per request). A client given
// here keeps its own timeouts.
func WithHTTPClient(c *http.Client) Option { return func(s *settings) { s.cfg.HTTPClient = c } }

// WithMaxRetries sets how many times a failed request may be repeated
// (default 4; 0 disables retries).
func WithMaxRetries(n int) Option {
	return func(s *settings) { s.cfg.Retry.MaxRetries, s.cfg.Retry.NoRetries = n, n == 0 }
}

// WithRetryWait bounds the backoff between retries (defaults 250ms, 10s).
func WithRetryWait(minWait, maxWait time.Duration) Option {
	return func(s *settings) { s.cfg.Retry.MinWait, s.cfg.Retry.MaxWait = minWait, maxWait }
}

// WithMaxRetryAfter sets the longest wait a server may ask for with
// Retry-After (default 60s). When it asks for more, the call does not
// retry: it returns the answer at once, an *Error whose RetryAfter says
// how long the server asked to wait.
func WithMaxRetryAfter(d time.Duration) Option {
	return func(s *settings) { s.cfg.Retry.MaxRetryAfter = d }
}

// WithMaxRetryTime caps the time one call spends retrying, counted from
// its first attempt (default 60s): a retry whose wait would end later is
// not made and the call returns its last error. Zero or less removes the
// cap (MaxRetries and the context still bound the call).
func WithMaxRetryTime(d time.Duration) Option {
	return func(s *settings) { s.cfg.Retry.MaxRetryTime, s.cfg.Retry.NoRetryTimeCap = d, d <= 0 }
}

// WithRetryBudget sizes the client-wide retry budget, a token bucket
// shared by every call of the client (and its token requests): a retry
// costs 5 tokens (10 after a timeout), a call that succeeds after
// retrying gives its last retry's tokens back, a call that succeeds at
// once adds one, up to capacity. When the bucket cannot pay for a retry,
// the call fails at once with its last error, wrapped with
// ErrRetryBudgetExhausted. The default capacity is 500 (about 100 retries
// in a row while the service fails); 0 disables the budget.
func WithRetryBudget(capacity int) Option {
	return func(s *settings) { s.cfg.Retry.Budget.Capacity, s.cfg.Retry.NoBudget = capacity, capacity <= 0 }
}

// WithLogger logs requests, retries and token refreshes at debug level:
// one record per attempt of a request, with its method, path, attempt,
// status, request ids and the wait before a retry (core.Config.Logger
// lists them). Nothing secret is ever logged. Without it the client logs
// nothing.
func WithLogger(l *slog.Logger) Option { return func(s *settings) { s.cfg.Logger = l } }

// WithUserAgent appends suffix to the SDK's User-Agent.
func WithUserAgent(suffix string) Option { return func(s *settings) { s.uaSuffix = suffix } }

// WithHeader adds a fixed header to every request to the service. It
// cannot set Authorization, nor Idempotency-Key or X-Idempotency-Key,
// which would let net/http send a write again after a broken connection
// (New fails). An API gateway's subscription key goes through
// WithSubscriptionKey, which treats it as a secret.
func WithHeader(key, value string) Option {
	return func(s *settings) {
		if s.cfg.Header == nil {
			s.cfg.Header = http.Header{}
		}
		s.cfg.Header.Add(key, value)
	}
}

// WithTokenSource authorizes requests with ts instead of the client
// credentials grant. The client caches ts's token while it is valid
// (oauth2.Token.Valid), asks ts one caller at a time, and asks it again
// after a 401; pass the bare source, not one wrapped in
// oauth2.ReuseTokenSource, so that a refused token is really replaced.
// When ts fails while the cached token has not expired yet, calls go on
// with the cached token, the failure is logged at warning level and ts is
// asked again after 30s (or half the time left), as with the client's own
// grants.
// Client.OAuth then serves ts: its Token returns ts's token, and
// Client.Close leaves ts's tokens alone (calls after it fail with
// oauth.ErrClosed).
func WithTokenSource(ts oauth2.TokenSource) Option {
	return func(s *settings) { s.auth.TokenSource = ts }
}

// WithInsecureHTTP allows plain http:// URLs to hosts that are not
// loopback addresses: the base URL, signed upload URLs, and webhook
// callback URLs given to Events.Subscribe. Tokens and data then travel
// unencrypted: use it only on trusted networks.
func WithInsecureHTTP() Option { return func(s *settings) { s.cfg.AllowInsecureHTTP = true } }

// WithStallTimeout sets the longest an answer's body may send nothing
// while it is read (zero: 60s, core.DefaultStallTimeout): past it the
// attempt fails with ErrAnswerStalled, and is retried like a lost answer
// (a write that is not safe to repeat says its outcome is unknown). It
// applies to a client given with WithHTTPClient too.
func WithStallTimeout(d time.Duration) Option { return func(s *settings) { s.cfg.StallTimeout = d } }

// WithFormEncodedTokenRequests posts token requests form-encoded, as RFC
// 6749 has it, instead of the JSON body the interface documents.
func WithFormEncodedTokenRequests() Option { return func(s *settings) { s.auth.FormEncoded = true } }

// WithRequestIDHeader names the header in which every call sends the
// request id the client generates for it, the same on every attempt
// (default X-Request-Id); "" sends none. The id is also on the call's
// span (partner.request_id), its log records (request_id) and its *Error
// (RequestID).
func WithRequestIDHeader(name string) Option {
	return func(s *settings) { s.cfg.RequestIDHeader, s.cfg.NoRequestID = name, name == "" }
}

// WithServiceRequestIDHeader names the header in which the service
// answers with its own id of a request (the interface publishes none, so
// by default none is read). Its value is put in Error.ServiceRequestID
// and ResponseInfo.ServiceRequestID.
func WithServiceRequestIDHeader(name string) Option {
	return func(s *settings) { s.cfg.ServiceRequestIDHeader = name }
}

// build checks the settings, each kind in its own function, and returns
// the pipeline's Config.
func (s *settings) build() (core.Config, error) {
	var cfg core.Config
	u, err := s.checkBaseURL()
	if err != nil {
		return cfg, err
	}
	if s.auth.TokenSource == nil && (s.auth.ClientID == "" || s.auth.ClientSecret == "") {
		return cfg, errors.New("partner: no client credentials: use WithClientCredentials or WithTokenSource")
	}
	if err := s.checkFixedHeaders(); err != nil {
		return cfg, err
	}
	for _, h := range []struct{ opt, name string }{
		{"WithEnvironmentHeader", s.cfg.EnvHeader}, {"WithSubscriptionKeyHeader", s.cfg.SubscriptionKeyHeader},
		{"WithRequestIDHeader", s.cfg.RequestIDHeader}, {"WithServiceRequestIDHeader", s.cfg.ServiceRequestIDHeader},
	} {
		if h.name == "" {
			continue
		}
		if !check.HeaderName(h.name) {
			return cfg, fmt.Errorf("partner: %s: %q is not a valid header name", h.opt, h.name)
		}
		if strings.EqualFold(h.name, "Authorization") {
			return cfg, fmt.Errorf("partner: %s cannot name Authorization", h.opt)
		}
	}
	if err := s.checkEnvironment(u); err != nil {
		return cfg, err
	}
	if err := s.checkValues(); err != nil {
		return cfg, err
	}
	cfg = s.cfg
	cfg.BaseURL = u
	cfg.UserAgent = "partner-go/" + Version
	if s.uaSuffix != "" {
		cfg.UserAgent += " " + s.uaSuffix
	}
	return cfg, nil
}

// checkBaseURL parses the base URL and refuses one the client cannot
// use: not an absolute http(s) URL, with credentials, a query or a
// fragment, or plain http to a host other than this machine without
// WithInsecureHTTP. Messages name it without its password
// (check.RedactedURL).
func (s *settings) checkBaseURL() (*url.URL, error) {
	if s.baseURL == "" {
		return nil, errors.New("partner: no base URL: use WithBaseURL")
	}
	u, err := url.Parse(s.baseURL)
	if err != nil {
		return nil, fmt.Errorf("partner: bad base URL %q: %w", check.RedactedURL(s.baseURL), check.URLParseError(err))
	}
	switch {
	case !check.IsHTTPURL(u):
		return nil, fmt.Errorf("partner: base URL %q must be an absolute http(s) URL", check.RedactedURL(s.baseURL))
	case u.User != nil:
		return nil, errors.New("partner: base URL must not carry credentials; use WithClientCredentials")
	case u.RawQuery != "" || u.Fragment != "":
		return nil, errors.New("partner: base URL must not have a query or fragment")
	case check.PlainHTTPRefused(u, s.cfg.AllowInsecureHTTP):
		return nil, fmt.Errorf("partner: base URL %q is not HTTPS; tokens would travel in clear (use WithInsecureHTTP to allow it)", u.Redacted())
	}
	return u, nil
}

// checkFixedHeaders refuses a WithHeader header that the client sets
// itself (Authorization) or that would let net/http send a write again.
func (s *settings) checkFixedHeaders() error {
	for k := range s.cfg.Header {
		if strings.EqualFold(k, "Authorization") {
			return errors.New("partner: WithHeader cannot set Authorization")
		}
		if err := check.ReplayHeader(k); err != nil {
			return fmt.Errorf("partner: WithHeader cannot set %w", err)
		}
	}
	return nil
}

// checkValues refuses values that would go wrong on the wire or in a
// field name: a portal word that is not one word, a subscription key
// with a line break, a negative stall timeout or retry count.
func (s *settings) checkValues() error {
	if w := s.cfg.PortalWord; w != "" && (strings.ContainsAny(w, ". \t\r\n") || strings.ContainsFunc(w, unicode.IsControl)) {
		return fmt.Errorf("partner: WithWords: portal word %q is not one word: it names fields as <word>.integration_status, without dots or spaces", w)
	}
	if k := s.cfg.SubscriptionKey; k != "" && strings.ContainsAny(k, "\r\n") {
		return errors.New("partner: WithSubscriptionKey: the key must not contain a line break")
	}
	if s.cfg.StallTimeout < 0 {
		return errors.New("partner: WithStallTimeout needs a duration >= 0")
	}
	if s.cfg.Retry.MaxRetries < 0 {
		return errors.New("partner: WithMaxRetries needs a number >= 0")
	}
	return nil
}

// checkEnvironment refuses an environment that would silently miss: one
// that is not a host name, or one whose header is not named, which would
// go in the interface's stand-in header that a deployment does not read.
// It refuses the same toward any host: a test against the fake takes the
// path production takes.
func (s *settings) checkEnvironment(base *url.URL) error {
	env := s.cfg.Env
	if env == "" {
		return nil
	}
	if strings.ContainsAny(env, "/\\?#@ \t\r\n") || strings.ContainsFunc(env, unicode.IsControl) {
		return fmt.Errorf("partner: WithEnvironment: %q is not a host name: name the environment by its host name, such as sandbox.example.com, without scheme or path", env)
	}
	if s.cfg.EnvHeader == "" {
		return fmt.Errorf("partner: WithEnvironment needs WithEnvironmentHeader toward %s: a deployment reads the environment from a header named after its operator, not from the interface's stand-in %s, and would send the request to production; set WithEnvironmentHeader to the deployment's header name",
			base.Hostname(), core.EnvHeader)
	}
	return nil
}
