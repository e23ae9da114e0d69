package fake

import (
	"crypto/subtle"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

var allScopes = []string{scopeSCIM, scopeUsers, scopeReports, scopeObjects, scopeBulk, scopeEvents}

type oauthClient struct {
	id, secret string
	scopes     []string // nil: every scope
}

type accessToken struct {
	clientID    string
	scopes      []string
	expires     time.Time
	invalidated bool
}

type refreshToken struct {
	clientID string
	scopes   []string
}

// Token bookkeeping of a long-running fake: expired access tokens are
// swept (at each grant, once expired for tokenGrace, oldest first: O(1)
// amortised), at most Limits.AccessTokens are live (the oldest forgotten
// first), and a client keeps at most maxRefreshTokens unused refresh
// tokens, the oldest dropped first. All are the fake's own limits.
const (
	tokenGrace = time.Minute
	// maxRefreshTokens is how many unused refresh tokens one client keeps;
	// an older one is refused as unknown (invalid_grant).
	maxRefreshTokens = 1000
)

type authStore struct {
	mu      sync.Mutex
	clients map[string]*oauthClient
	access  map[string]*accessToken
	refresh map[string]*refreshToken
	// refreshOrder lists each client's refresh tokens, oldest first (some
	// may be spent already), to drop the oldest past maxRefreshTokens.
	refreshOrder map[string][]string
	// accessOrder lists the access tokens in the order they were issued,
	// which is the order they expire in (they share one lifetime); the
	// sweep and maxAccess drop from its front.
	accessOrder []string
	maxAccess   int
	issued      int
	// checkScopes turns on the per-area scopes (WithScopeChecks).
	checkScopes bool
	// redirects holds each client's registered redirect URIs
	// (WithRedirectURIs).
	redirects map[string][]string
}

func (s *authStore) init() {
	s.clients = map[string]*oauthClient{}
	s.access = map[string]*accessToken{}
	s.refresh = map[string]*refreshToken{}
	s.refreshOrder = map[string][]string{}
	s.maxAccess = defaultMaxAccessTokens
}

// sweep drops the access tokens expired for longer than tokenGrace, and
// the oldest past maxAccess. A dropped token is refused as unknown: still
// a 401, or a 403 on DELETE. Tokens expire in the order they were issued,
// so the sweep stops at the first live one.
func (s *authStore) sweep(now time.Time) {
	for len(s.accessOrder) > 0 {
		k := s.accessOrder[0]
		if t := s.access[k]; len(s.accessOrder) <= s.maxAccess && t != nil && !now.After(t.expires.Add(tokenGrace)) {
			break
		}
		delete(s.access, k)
		s.accessOrder[0] = ""
		s.accessOrder = s.accessOrder[1:]
	}
}

// keepRefresh records a new refresh token of client and drops the oldest
// beyond maxRefreshTokens.
func (s *authStore) keepRefresh(client, tok string) {
	order := append(s.refreshOrder[client], tok)
	for len(order) > maxRefreshTokens {
		delete(s.refresh, order[0])
		order = order[1:]
	}
	if cap(order) > 4*maxRefreshTokens {
		order = append([]string(nil), order...) // let the old backing array go
	}
	s.refreshOrder[client] = order
}

// tokensHeld counts the access and refresh tokens the fake holds (for
// tests of a long-running fake's memory).
func (f *Fake) tokensHeld() (access, refresh int) {
	f.auth.mu.Lock()
	defer f.auth.mu.Unlock()
	return len(f.auth.access), len(f.auth.refresh)
}

func (s *authStore) register(id, secret string, scopes []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sc []string
	if len(scopes) > 0 {
		sc = slices.Clone(scopes)
	}
	s.clients[id] = &oauthClient{id: id, secret: secret, scopes: sc}
}

// addClient registers an OAuth client after start; see WithClient.
func (f *Fake) addClient(id, secret string, scopes ...string) { f.auth.register(id, secret, scopes) }

// TokensIssued counts the access tokens issued so far, by either grant.
func (f *Fake) TokensIssued() int {
	f.auth.mu.Lock()
	defer f.auth.mu.Unlock()
	return f.auth.issued
}

// ExpireTokens makes every access token issued so far expired, as if
// their lifetime had run out.
func (f *Fake) ExpireTokens() {
	f.auth.mu.Lock()
	defer f.auth.mu.Unlock()
	past := f.clock.Now().Add(-time.Second)
	for _, t := range f.auth.access {
		t.expires = past
	}
}

// authorize checks r's bearer token, and its scope when scopes are checked. It returns the client id,
// or a status (401, 403) and a message.
func (s *authStore) authorize(r *http.Request, scope string, now time.Time) (string, int, string) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if h == "" {
		return "", http.StatusUnauthorized, "missing Authorization header"
	}
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return "", http.StatusUnauthorized, "Authorization must be a Bearer token"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.access[tok]
	switch {
	case t == nil:
		return "", http.StatusUnauthorized, "unknown access token"
	case t.invalidated:
		return t.clientID, http.StatusUnauthorized, "access token has been invalidated"
	case !now.Before(t.expires):
		return t.clientID, http.StatusUnauthorized, "access token has expired"
	case s.checkScopes && scope != "" && !slices.Contains(t.scopes, scope):
		return t.clientID, http.StatusForbidden, "token lacks the " + scope + " scope"
	}
	return t.clientID, 0, ""
}

type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
	URI         string `json:"error_uri,omitempty"`
}

type tokenRequest struct {
	GrantType    string `json:"grant_type"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	RedirectURI  string `json:"redirect_uri"`
	State        string `json:"state"`
}

type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int32  `json:"expires_in"`
	State        string `json:"state,omitempty"`
}

func (f *Fake) registerAuth() {
	f.handlePublic("POST /oauth/token", f.issueToken)
	f.handlePublic("DELETE /oauth/token", f.invalidateToken)
	f.handlePublic("GET /oauth/authorize", f.authorizeCode) // authorize.go
}

func oauthFail(w http.ResponseWriter, code, desc string) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusBadRequest, oauthError{Error: code, Description: desc})
}

// issueToken serves POST /oauth/token: a JSON body as the interface
// documents it, or a form body as RFC 6749 has it; client credentials in
// the body or as HTTP Basic authentication.
func (f *Fake) issueToken(w http.ResponseWriter, r *http.Request) {
	var req tokenRequest
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/x-www-form-urlencoded":
		r.Body = http.MaxBytesReader(w, r.Body, maxTokenBody)
		if err := r.ParseForm(); err != nil {
			oauthFail(w, "invalid_request", "malformed form body: "+err.Error())
			return
		}
		req = tokenRequest{
			GrantType: r.PostForm.Get("grant_type"), ClientID: r.PostForm.Get("client_id"),
			ClientSecret: r.PostForm.Get("client_secret"), RefreshToken: r.PostForm.Get("refresh_token"),
			Scope: r.PostForm.Get("scope"), RedirectURI: r.PostForm.Get("redirect_uri"), State: r.PostForm.Get("state"),
		}
	case "", "application/json":
		if err := readJSON(r, &req); err != nil {
			oauthFail(w, "invalid_request", err.Error())
			return
		}
	default:
		oauthFail(w, "invalid_request", "Content-Type must be application/json or application/x-www-form-urlencoded")
		return
	}
	if id, secret, ok := r.BasicAuth(); ok {
		// RFC 6749 section 2.3.1: both are form-urlencoded before Basic
		// encoding; a value that does not decode is taken as it is.
		if v, err := url.QueryUnescape(id); err == nil {
			id = v
		}
		if v, err := url.QueryUnescape(secret); err == nil {
			secret = v
		}
		if req.ClientID != "" && req.ClientID != id {
			oauthFail(w, "invalid_request", "client_id in the body differs from HTTP Basic authentication")
			return
		}
		req.ClientID, req.ClientSecret = id, secret
	}
	switch req.GrantType {
	case "":
		oauthFail(w, "invalid_request", "grant_type is required")
		return
	case "client_credentials", "refresh_token":
	default:
		oauthFail(w, "unsupported_grant_type", "grant_type must be client_credentials or refresh_token")
		return
	}

	resp, fail := f.auth.grant(req, f.clock.Now(), f.lifetime)
	if fail != nil {
		oauthFail(w, fail.Error, fail.Description)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, resp)
}

// grant checks a token request and issues the tokens.
func (s *authStore) grant(req tokenRequest, now time.Time, lifetime time.Duration) (tokenResponse, *oauthError) {
	fail := func(code, desc string) (tokenResponse, *oauthError) {
		return tokenResponse{}, &oauthError{Error: code, Description: desc}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var client *oauthClient
	var granted []string
	switch req.GrantType {
	case "client_credentials":
		if req.ClientID == "" || req.ClientSecret == "" {
			return fail("invalid_request", "client_id and client_secret are required")
		}
		client = s.clients[req.ClientID]
		// Compare in constant time even for an unknown client.
		want := "\x00no-such-client"
		if client != nil {
			want = client.secret
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(req.ClientSecret)) != 1 || client == nil {
			return fail("invalid_client", "unknown client or wrong client secret")
		}
		granted = client.allowed()
	case "refresh_token":
		rt := s.refresh[req.RefreshToken]
		if req.RefreshToken == "" || rt == nil {
			return fail("invalid_grant", "refresh token is unknown, used or revoked")
		}
		client = s.clients[rt.clientID]
		if req.ClientID != "" && req.ClientID != rt.clientID {
			return fail("invalid_grant", "refresh token was issued to another client")
		}
		if req.ClientSecret != "" && subtle.ConstantTimeCompare([]byte(client.secret), []byte(req.ClientSecret)) != 1 {
			return fail("invalid_client", "unknown client or wrong client secret")
		}
		delete(s.refresh, req.RefreshToken) // rotated: single use
		granted = rt.scopes
	}
	if req.Scope != "" && s.checkScopes {
		var asked []string
		for sc := range strings.FieldsSeq(req.Scope) {
			if !slices.Contains(granted, sc) {
				return fail("unauthorized_client", "scope "+sc+" is not allowed for this client")
			}
			asked = append(asked, sc)
		}
		granted = asked
	}
	access, refresh := newID("at_", 24), newID("rt_", 24)
	s.access[access] = &accessToken{clientID: client.id, scopes: granted, expires: now.Add(lifetime)}
	s.accessOrder = append(s.accessOrder, access)
	s.refresh[refresh] = &refreshToken{clientID: client.id, scopes: granted}
	s.keepRefresh(client.id, refresh)
	s.issued++
	s.sweep(now)
	return tokenResponse{
		AccessToken: access, RefreshToken: refresh, TokenType: "Bearer",
		ExpiresIn: int32(lifetime / time.Second), State: req.State,
	}, nil
}

func (c *oauthClient) allowed() []string {
	if c.scopes == nil {
		return allScopes
	}
	return c.scopes
}

// invalidateToken serves DELETE /oauth/token. The token is named by the
// Authorization bearer header or by a JSON body {"token": "..."}.
func (f *Fake) invalidateToken(w http.ResponseWriter, r *http.Request) {
	tok := ""
	if scheme, t, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		tok = t
	}
	if tok == "" && r.ContentLength != 0 {
		var body struct {
			Token string `json:"token"`
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxTokenBody)
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request", "%v", decodeProblem(r, err, &body))
			return
		}
		tok = body.Token
	}
	if tok == "" {
		writeError(w, http.StatusForbidden, "invalid_token", "no token given: send it as a Bearer token or as {\"token\": ...}")
		return
	}
	f.auth.mu.Lock()
	t := f.auth.access[tok]
	ok := t != nil && !t.invalidated
	if ok {
		t.invalidated = true
	}
	f.auth.mu.Unlock()
	if !ok {
		writeError(w, http.StatusForbidden, "invalid_token", "token is unknown or already invalidated")
		return
	}
	w.WriteHeader(http.StatusOK)
}
