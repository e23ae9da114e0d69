package core

// The plain-http rule, in one place: tokens and data travel over plain
// http only to this machine, unless the client allows insecure HTTP
// (partner.WithInsecureHTTP). partner.New applies it to the base URL,
// Client.resolve to absolute URLs (signed upload URLs), and package
// events to webhook callback URLs; each words the refusal in its own
// terms.

import (
	"fmt"
	"net/url"

	"github.com/partnerapi/partner-go/internal/urls"
)

// TowardLoopback reports whether the base URL's host is a loopback
// address (urls.IsLoopback).
//
// Deprecated: no behaviour of the SDK depends on it but the plain-http
// rule, which Client applies itself: a test against the fake takes the
// path production takes. Name a deployment's words explicitly
// (Config.EnvHeader, Config.PortalWord) instead of guessing them from the
// host.
func (c *Client) TowardLoopback() bool {
	return c.cfg.BaseURL != nil && urls.IsLoopback(c.cfg.BaseURL.Hostname())
}

// InsecureHTTPAllowed reports whether plain http URLs to hosts other than
// loopback addresses are allowed (Config.AllowInsecureHTTP).
//
// Deprecated: it is the SDK's own plumbing, which its area packages
// reach through an internal package; it stays for v1. A service of
// one's own over a Client needs Do and Send, which apply the
// plain-http rule themselves.
func (c *Client) InsecureHTTPAllowed() bool { return c.cfg.AllowInsecureHTTP }

// checkScheme refuses a URL the plain-http rule refuses
// (urls.PlainHTTPRefused). what names the URL in the error ("upload URL").
func (c *Client) checkScheme(what string, u *url.URL) error {
	if urls.PlainHTTPRefused(u, c.cfg.AllowInsecureHTTP) {
		return fmt.Errorf("partner: %s to %s is plain http; refused unless insecure HTTP is allowed", what, u.Host)
	}
	return nil
}
