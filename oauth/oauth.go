// Package oauth gets, caches, refreshes and invalidates the bearer tokens
// of the Partner Integration Service (POST and DELETE /oauth/token).
//
// A Service is a token source: Token returns the cached access token and
// fetches a new one shortly before it expires, with exactly one request in
// flight however many goroutines ask at once. It uses the refresh token
// when it holds one and falls back to the client credentials grant when the
// refresh fails. A failed early refresh leaves the cached token in use
// until it expires.
//
// With an environment (partner.WithEnvironment), every token request
// (getting, refreshing, invalidating) carries it twice, as the deployed
// service's descriptions show: in the environment header and as a query
// parameter of the same name.
package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/internal/plumbing"
)

// Grant types of the token endpoint.
const (
	GrantClientCredentials = "client_credentials"
	GrantRefreshToken      = "refresh_token"
)

// TokenPath is the path of the token endpoint.
const TokenPath = "/oauth/token"

// ErrClosed is returned by Token after Close.
var ErrClosed = errors.New("partner: client is closed")

// ErrStateMismatch is returned when the token endpoint's answer carries a
// `state` other than the one that was sent. An answer without `state` is
// accepted: the published token answer has none.
var ErrStateMismatch = errors.New("partner: token response state does not match the state sent")

// TokenParams is the body of POST /oauth/token.
type TokenParams struct {
	GrantType    string `json:"grant_type"`
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope,omitempty"`
	RedirectURI  string `json:"redirect_uri,omitempty"`
	State        string `json:"state,omitempty"`
}

// String describes the request without its secrets.
func (r TokenParams) String() string {
	return fmt.Sprintf("TokenParams{GrantType:%s ClientID:%s ClientSecret:%s RefreshToken:%s Scope:%q}",
		r.GrantType, r.ClientID, redacted(r.ClientSecret), redacted(r.RefreshToken), r.Scope)
}

// GoString keeps secrets out of %#v.
func (r TokenParams) GoString() string { return "oauth." + r.String() }

// LogValue keeps secrets out of slog output.
func (r TokenParams) LogValue() slog.Value { return slog.StringValue(r.String()) }

// TokenResult is the answer of POST /oauth/token.
type TokenResult struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token,omitempty"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int32  `json:"expires_in"`
	State        string `json:"state,omitempty"`
}

// String describes the response without its tokens.
func (r TokenResult) String() string {
	return fmt.Sprintf("TokenResult{AccessToken:%s RefreshToken:%s TokenType:%s ExpiresIn:%d}",
		redacted(r.AccessToken), redacted(r.RefreshToken), r.TokenType, r.ExpiresIn)
}

// GoString keeps tokens out of %#v.
func (r TokenResult) GoString() string { return "oauth." + r.String() }

// LogValue keeps tokens out of slog output.
func (r TokenResult) LogValue() slog.Value { return slog.StringValue(r.String()) }

func redacted(s string) string {
	if s == "" {
		return `""`
	}
	return "[redacted]"
}

// Service is the token source of a client and the /oauth/token operations.
// It is safe for concurrent use. A partner.Client built with
// WithTokenSource serves that source through its Service: Token returns
// the source's token and Close leaves it alone.
//
// A partner.Client has one as its OAuth field; New builds one over any
// core.Client, and core.Client.WithTokens makes it the token source of
// the other services.
type Service struct {
	t        *core.Client // sends without Authorization
	cfg      Options
	now      func() time.Time
	cache    tokenCache
	external bool // the tokens come from cfg.TokenSource
}

// Options says how a Service gets its tokens.
type Options struct {
	// ClientID and ClientSecret are the credentials of the client
	// credentials grant.
	ClientID     string
	ClientSecret string
	// Scopes are requested space-separated in `scope`.
	Scopes []string
	// State, when set, is sent with each token request. An answer that
	// carries a different `state` is refused with ErrStateMismatch (a
	// token answer meant for another request, as a misrouting proxy or
	// a shared cache could hand back); an answer without `state`, as the
	// deployed service publishes it, is accepted.
	State string
	// FormEncoded posts token requests as application/x-www-form-urlencoded
	// (RFC 6749) instead of the JSON body the interface documents.
	FormEncoded bool
	// TokenSource, when set, gives the tokens instead of the client
	// credentials grant (partner.WithTokenSource): the Service caches
	// them and Close leaves them alone.
	TokenSource oauth2.TokenSource
}

// New returns a Service that requests tokens through p as opts says. p
// must not itself authorize requests: the usual pipeline of the other
// services is p.WithTokens(s). With opts.TokenSource set, p serves only
// Revoke and may be nil.
func New(p *core.Client, opts Options) *Service { return newService(p, opts, time.Now) }

// newService is New with the clock used for token expiry.
func newService(t *core.Client, cfg Options, now func() time.Time) *Service {
	s := &Service{t: t, cfg: cfg, now: now, external: cfg.TokenSource != nil}
	if t != nil {
		plumbing.Of(t).MaskSecrets(cfg.ClientSecret)
	}
	s.cache = tokenCache{fetch: s.obtain, refreshAt: refreshAt, discard: s.discard, warn: s.warnKept, now: now}
	if s.external {
		s.cache.fetch = func(context.Context, *oauth2.Token) (*oauth2.Token, error) {
			tok, err := cfg.TokenSource.Token()
			if err == nil && tok == nil {
				return nil, errors.New("partner: token source returned neither a token nor an error")
			}
			return tok, err
		}
		s.cache.refreshAt = externalRefreshAt
		s.cache.discard = nil
	}
	s.cache.fetch = tracedFetch(t, s.external, s.cache.fetch)
	return s
}

// Token returns a valid access token, fetching or refreshing it when the
// cached one is missing or about to expire. Concurrent callers share one
// request; each waits under its own context.
//
// A token is refreshed early, when a tenth of its lifetime (at most a
// minute) is left. While one caller refreshes, the others keep using the
// cached token. When that early refresh fails, the caller still gets the
// cached token, the failure is logged (at warning level) and the next
// attempt waits (30s, or half the time left if that is shorter): only a
// token that has expired, or that the service refused with a 401, makes
// Token fail.
//
// On a client built with WithTokenSource it returns that source's token
// (see WithTokenSource), with the same rule: when the source fails while
// the cached token has not expired, the cached token is returned and the
// failure logged.
func (s *Service) Token(ctx context.Context) (*oauth2.Token, error) {
	return s.cache.token(ctx)
}

// warnKept logs that a refresh failed and the cached token, valid until
// expiry, is used meanwhile.
func (s *Service) warnKept(ctx context.Context, expiry time.Time, err error) {
	if s.t == nil {
		return
	}
	plumbing.Of(s.t).Logger().LogAttrs(ctx, slog.LevelWarn, "partner: early token refresh failed, using the cached token",
		slog.Time("expiry", expiry), slog.String("error", err.Error()))
}

// refreshAt is the early refresh of the client's own tokens: when a
// tenth of the lifetime (at most a minute) is left.
func refreshAt(tok *oauth2.Token, now time.Time) time.Time {
	return tok.Expiry.Add(-min(tok.Expiry.Sub(now)/10, time.Minute))
}

// expiryDelta is oauth2.Token.Valid's margin: a WithTokenSource token
// that expires within it is fetched again.
const expiryDelta = 10 * time.Second

// externalRefreshAt is the early refresh of a WithTokenSource token:
// oauth2.Token.Valid's margin before its expiry, never without one.
func externalRefreshAt(tok *oauth2.Token, _ time.Time) time.Time {
	if tok.Expiry.IsZero() {
		return never
	}
	return tok.Expiry.Add(-expiryDelta)
}

// discard revokes a token fetched after Close, so that it does not
// outlive the client on the server.
func (s *Service) discard(ctx context.Context, tok *oauth2.Token) {
	_ = s.Revoke(ctx, tok.AccessToken)
}

// obtain refreshes held when it carries a refresh token and falls back to
// the client credentials grant when the refresh fails for any reason but
// the context: refused, a 5xx, a lost answer. The client credentials
// grant is retried like a read.
func (s *Service) obtain(ctx context.Context, held *oauth2.Token) (*oauth2.Token, error) {
	if held != nil && held.RefreshToken != "" {
		tok, err := s.grant(ctx, TokenParams{GrantType: GrantRefreshToken, RefreshToken: held.RefreshToken})
		if err == nil {
			return tok, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		plumbing.Of(s.t).Logger().LogAttrs(ctx, slog.LevelDebug, "partner: refresh failed, using client credentials",
			slog.String("error", err.Error()))
	}
	return s.grant(ctx, TokenParams{GrantType: GrantClientCredentials})
}

func (s *Service) grant(ctx context.Context, req TokenParams) (*oauth2.Token, error) {
	req.ClientID = s.cfg.ClientID
	req.ClientSecret = s.cfg.ClientSecret
	req.Scope = strings.Join(s.cfg.Scopes, " ")
	req.State = s.cfg.State
	resp, err := s.Request(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp.AccessToken == "" {
		return nil, errors.New("partner: token endpoint answered without an access_token")
	}
	tok := &oauth2.Token{
		AccessToken:  resp.AccessToken,
		TokenType:    resp.TokenType,
		RefreshToken: resp.RefreshToken,
		ExpiresIn:    int64(resp.ExpiresIn),
	}
	if tok.TokenType == "" {
		tok.TokenType = "Bearer"
	}
	if resp.ExpiresIn > 0 {
		tok.Expiry = s.now().Add(time.Duration(resp.ExpiresIn) * time.Second)
	} else {
		tok.Expiry = s.now().Add(time.Hour) // no lifetime given: assume an hour, a 401 corrects it
	}
	return tok, nil
}

// Request sends one token request as it is (POST /oauth/token) and checks
// the echoed state. Most code wants Token, which caches.
//
// The client credentials grant is repeated on failure like a read; a
// refresh is not, since the server may rotate the refresh token. A
// refresh whose error is marked partner.IsOutcomeUnknown may have used up
// the refresh token: get a new token with the client credentials grant
// rather than sending the refresh again (Token does so).
func (s *Service) Request(ctx context.Context, p TokenParams) (*TokenResult, error) {
	if p.GrantType != GrantClientCredentials && p.GrantType != GrantRefreshToken {
		return nil, fmt.Errorf("partner: unsupported grant_type %q", p.GrantType)
	}
	if p.GrantType == GrantClientCredentials && (p.ClientID == "" || p.ClientSecret == "") {
		return nil, errors.New("partner: client credentials grant needs a client id and secret")
	}
	if p.GrantType == GrantRefreshToken && p.RefreshToken == "" {
		return nil, errors.New("partner: refresh_token grant needs a refresh token")
	}
	// What a server echoes of the secrets is masked (plumbing.Pipeline.MaskSecrets);
	// the answer is small, and no other host may give it.
	plumbing.Of(s.t).MaskSecrets(p.ClientSecret, p.RefreshToken)
	r := &core.Request{
		Op:                  "oauth.Request",
		Method:              http.MethodPost,
		Path:                TokenPath,
		Query:               envQuery(s.t),
		NoAuth:              true,
		Idempotent:          p.GrantType == GrantClientCredentials,
		MaxAnswerSize:       core.MaxTokenAnswerSize,
		NoCrossHostRedirect: true,
	}
	if s.cfg.FormEncoded {
		r.Body = strings.NewReader(formValues(p).Encode())
		r.ContentType = "application/x-www-form-urlencoded"
	} else {
		r.JSON = p
	}
	var resp TokenResult
	if err := s.t.Do(ctx, r, &resp); err != nil {
		return nil, err
	}
	plumbing.Of(s.t).MaskSecrets(resp.AccessToken, resp.RefreshToken)
	if p.State != "" && resp.State != "" && resp.State != p.State {
		return nil, ErrStateMismatch
	}
	return &resp, nil
}

// envQuery is the environment query parameter of a token request, or nil
// (an untyped nil, so that a request without one takes the plain path).
func envQuery(t *core.Client) any {
	if q := plumbing.Of(t).EnvQuery(); q != nil {
		return q
	}
	return nil
}

func formValues(req TokenParams) url.Values {
	v := url.Values{"grant_type": {req.GrantType}}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("client_id", req.ClientID)
	set("client_secret", req.ClientSecret)
	set("refresh_token", req.RefreshToken)
	set("scope", req.Scope)
	set("redirect_uri", req.RedirectURI)
	set("state", req.State)
	return v
}

// Invalidate drops tok from the cache when it is the cached token, so that
// the next Token call fetches a new one. The client calls it by itself
// when the service answers 401.
func (s *Service) Invalidate(tok *oauth2.Token) { s.cache.invalidate(tok) }

// Revoke invalidates accessToken on the server (DELETE /oauth/token, the
// token sent as the bearer token). A token that is unknown or already
// invalidated gives a 403 *Error.
func (s *Service) Revoke(ctx context.Context, accessToken string) error {
	if accessToken == "" {
		return errors.New("partner: no token to revoke")
	}
	return s.t.Do(ctx, &core.Request{
		Op:         "oauth.Revoke",
		Method:     http.MethodDelete,
		Path:       TokenPath,
		Query:      envQuery(s.t),
		Token:      accessToken,
		Idempotent: true,
		// The token endpoint follows no redirect to another host.
		NoCrossHostRedirect: true,
	}, nil)
}

// Close revokes the cached access token, if any, and makes Token return
// ErrClosed from then on. A second Close does nothing and returns nil.
// The tokens of a WithTokenSource source are not revoked: they belong to
// that source.
func (s *Service) Close(ctx context.Context) error {
	tok, first := s.cache.close()
	if !first || s.external || tok == nil || tok.AccessToken == "" {
		return nil
	}
	if err := s.Revoke(ctx, tok.AccessToken); err != nil && !core.HasStatus(err, http.StatusForbidden) {
		return err
	}
	return nil
}

// TokenSource adapts the Service to oauth2.TokenSource, for use with
// oauth2.NewClient. Its Token calls run under ctx.
func (s *Service) TokenSource(ctx context.Context) oauth2.TokenSource {
	return tokenSourceFunc(func() (*oauth2.Token, error) { return s.Token(ctx) })
}

type tokenSourceFunc func() (*oauth2.Token, error)

func (f tokenSourceFunc) Token() (*oauth2.Token, error) { return f() }
