package fakehttp

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// LoopbackHost reports whether a Host header (or an Origin's host) names
// a loopback address: localhost or a name under .localhost, or a loopback
// IP (127.0.0.0/8, ::1), with or without a port.
func LoopbackHost(host string) bool {
	host = hostName(host)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostName is host without its port and brackets, lower case, without a
// final dot.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
}

// LoopbackAddr reports whether a listener's address is a loopback one.
func LoopbackAddr(addr net.Addr) bool {
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.IP.IsLoopback()
	}
	return LoopbackHost(addr.String())
}

// LocalOnly serves h to requests a web page cannot have sent through a
// name of its own: the Host must be a loopback name or address, or one of
// allow (names, compared without port and case), and so must an Origin
// header's host, which browsers send on cross-origin requests; others get
// 403. A page whose DNS name an attacker rebinds to 127.0.0.1 is
// same-origin with a server on the developer's machine, but its requests
// carry the page's name as Host. A fake listening on a loopback address
// serves every route, service and admin, through it; it answers no CORS,
// so no page of another origin reads an answer either.
func LocalOnly(h http.Handler, allow []string) http.Handler {
	names := make([]string, 0, len(allow))
	for _, a := range allow {
		if a = hostName(strings.TrimSpace(a)); a != "" {
			names = append(names, a)
		}
	}
	ok := func(host string) bool { return LoopbackHost(host) || slices.Contains(names, hostName(host)) }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ok(r.Host) {
			WriteError(w, http.StatusForbidden, "forbidden", "this fake listens on a loopback address and answers only requests whose Host is a loopback name or address (localhost, 127.0.0.1, [::1]) or one it was told to allow (-allow-host), not %.100q", r.Host)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || u.Host == "" || !ok(u.Host) {
				WriteError(w, http.StatusForbidden, "forbidden", "this fake answers no request from a page of another origin (Origin %.100q)", o)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}
