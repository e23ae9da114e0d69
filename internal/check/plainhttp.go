// The plain-http rule: tokens and data travel over plain http only to
// this machine, unless the client allows insecure HTTP
// (partner.WithInsecureHTTP). partner.New applies it to the base URL,
// core to absolute URLs (signed upload URLs), and package events to
// webhook callback URLs; each words the refusal in its own terms.

package check

import (
	"net"
	"net/url"
	"strings"
)

// IsHTTPURL reports whether u is an absolute http or https URL with a
// host. url.Parse lowercases the scheme.
func IsHTTPURL(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// IsLoopback reports whether host certainly names this machine:
// "localhost" in any case, or an IPv4 or IPv6 loopback address
// (127.0.0.0/8, ::1, and 127.0.0.0/8 in IPv4-mapped form).
//
// Names under .localhost and "localhost." (with the root's dot) are not
// loopback here: Go's resolver may ask DNS for them, and
// http.ProxyFromEnvironment sends requests for them through a configured
// proxy (it goes direct only for "localhost" and loopback addresses), so
// a plain http request to them can leave the machine.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// PlainHTTPRefused reports whether the plain-http rule refuses u: a plain
// http URL to a host that is not a loopback address (IsLoopback) while
// insecure HTTP is not allowed.
func PlainHTTPRefused(u *url.URL, allowInsecure bool) bool {
	return u.Scheme == "http" && !allowInsecure && !IsLoopback(u.Hostname())
}
