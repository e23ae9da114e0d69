package fake

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// This file is the sign-in path of the deployed service's low-code
// connector: GET /oauth/authorize, which the gateway export publishes as
// "Request Authorization Code", "Provide Authorization code (dummy)",
// answered 302 (gw authentication: get-authorize), and which the
// connector's OAuth settings name as their authorization URL (conn props:
// authorizationUrlTemplate; conn def: securityDefinitions, flow
// accessCode). The connector then posts the code to POST /oauth/token
// with grant_type client_credentials and the client's id and secret
// (conn props: tokenBodyTemplate, refreshBodyTemplate), the only grants
// the interface lists (interface 2, token request): the client
// credentials authenticate, and the code, a dummy, is taken as it comes.
// The SDK signs in with the client credentials grant and never calls it.

// WithRedirectURIs registers redirect URIs of the client id for GET
// /oauth/authorize, the connector's sign-in: it redirects only to a
// redirect_uri equal to one of them (compared as strings, RFC 6749
// 3.1.2.3), or to an http or https URL whose host is localhost or a
// loopback address (any port and path, as RFC 8252 7.3 lets native
// applications use), so that the fake redirects nobody to a site of an
// attacker's choosing. Others are answered 400 and not redirected.
// partnerfake's -redirect-uri registers them for its client.
func WithRedirectURIs(clientID string, uris ...string) Option {
	return func(f *Fake) {
		if f.auth.redirects == nil {
			f.auth.redirects = map[string][]string{}
		}
		f.auth.redirects[clientID] = append(f.auth.redirects[clientID], uris...)
	}
}

// redirectAllowed reports whether the client id may be redirected to
// raw, parsed as to: a URI registered for it, or a loopback one.
func (s *authStore) redirectAllowed(id, raw string, to *url.URL) bool {
	host := to.Hostname()
	if ip := net.ParseIP(host); strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback() {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.redirects[id], raw)
}

// authorizeCode serves GET /oauth/authorize: a 302 to redirect_uri with a
// code and the caller's state. As RFC 6749 (4.1.2.1) has it, a request
// whose client_id or redirect_uri is missing or wrong (not registered for
// the client, nor a loopback URL: WithRedirectURIs) is answered 400 (an
// OAuth error object, the fake's own answer: the export shows none) and
// not redirected; one with another response_type than code is redirected
// with error unsupported_response_type (invalid_request when it has none)
// and the state.
func (f *Fake) authorizeCode(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	clientID, redirect := q.Get("client_id"), q.Get("redirect_uri")
	switch {
	case clientID == "":
		authorizeFail(w, "invalid_request", "client_id is required")
		return
	case !f.auth.known(clientID):
		authorizeFail(w, "invalid_client", "unknown client_id")
		return
	case redirect == "":
		authorizeFail(w, "invalid_request", "redirect_uri is required")
		return
	}
	to, err := url.Parse(redirect)
	if err != nil || !to.IsAbs() || (to.Scheme != "https" && to.Scheme != "http") || to.Host == "" || to.Fragment != "" || to.RawFragment != "" {
		authorizeFail(w, "invalid_request", "redirect_uri must be an absolute http or https URL without a fragment")
		return
	}
	if !f.auth.redirectAllowed(clientID, redirect, to) {
		authorizeFail(w, "invalid_request", "redirect_uri is not registered for the client (the fake redirects to a registered URI, fake.WithRedirectURIs or partnerfake -redirect-uri, or to a loopback one)")
		return
	}
	back := to.Query()
	switch rt := q.Get("response_type"); rt {
	case "code":
		back.Set("code", newID("code_", 16))
	case "":
		back.Set("error", "invalid_request")
		back.Set("error_description", "response_type is required: code")
	default:
		back.Set("error", "unsupported_response_type")
		back.Set("error_description", "response_type must be code")
	}
	if st := q.Get("state"); st != "" {
		back.Set("state", st)
	}
	to.RawQuery = back.Encode()
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Location", to.String())
	w.WriteHeader(http.StatusFound)
}

// authorizeFail answers an authorization request that must not be
// redirected: 400 with an OAuth error object.
func authorizeFail(w http.ResponseWriter, code, desc string) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusBadRequest, oauthError{Error: code, Description: desc})
}

// known reports whether id is a registered client.
func (s *authStore) known(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients[id] != nil
}
