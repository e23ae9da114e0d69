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

	"github.com/partnerapi/partner-go/internal/check"
)

// TowardLoopback reports whether the base URL's host is a loopback
// address (check.IsLoopback).
//
// Deprecated: no behaviour of the SDK depends on it but the plain-http
// rule, which Client applies itself: a test against the fake takes the
// path production takes. Name a deployment's words explicitly
// (Config.EnvHeader, Config.PortalWord) instead of guessing them from the
// host.
func (c *Client) TowardLoopback() bool {
	return c.cfg.BaseURL != nil && check.IsLoopback(c.cfg.BaseURL.Hostname())
}

// InsecureHTTPAllowed reports whether plain http URLs to hosts other than
// loopback addresses are allowed (Config.AllowInsecureHTTP).
//
// Deprecated: read Config.AllowInsecureHTTP, which the Client was made
// with; Do and Send apply the plain-http rule themselves.
// It stays for v1; the SDK's area packages reach it through
// internal/plumbing.
func (c *Client) InsecureHTTPAllowed() bool { return c.cfg.AllowInsecureHTTP }

// checkScheme refuses a URL the plain-http rule refuses
// (check.PlainHTTPRefused). what names the URL in the error ("upload URL").
func (c *Client) checkScheme(what string, u *url.URL) error {
	if check.PlainHTTPRefused(u, c.cfg.AllowInsecureHTTP) {
		return fmt.Errorf("partner: %s to %s is plain http; refused unless insecure HTTP is allowed", what, u.Host)
	}
	return nil
}
