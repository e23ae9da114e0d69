package fake

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"strings"
	"syscall"

	"github.com/partnerapi/partner-go/internal/fakeserver/fakehttp"
)

// A subscriber's callback must never reach the fake itself: a client
// without admin rights could otherwise make a delivery call the admin API
// (POST /_fake/reset, /_fake/tokens/expire) when the fake is served with
// one, as cmd/partnerfake does. The fake refuses such a callback when the
// subscriber registers (400), and checks again when it delivers, on the
// address the callback's host resolves to then (a name may resolve
// elsewhere later): a delivery to the fake's own listener, or to a path
// under /_fake/ (fakehttp.AdminPrefix) on any host, is not sent and not
// retried.

// errSelfCallback is why a delivery to the fake itself was not sent.
var errSelfCallback = errors.New("refused: the callback reaches the fake itself")

// adminPath reports whether the URL path p, once cleaned, is under
// fakehttp.AdminPrefix.
func adminPath(p string) bool {
	c := path.Clean("/" + p)
	return c+"/" == fakehttp.AdminPrefix || strings.HasPrefix(c, fakehttp.AdminPrefix)
}

// selfPort returns the port of the fake's own listener, from URL; "" when
// the fake does not know where it is served.
func (f *Fake) selfPort() string {
	u, err := url.Parse(f.URL())
	if err != nil || u.Host == "" {
		return ""
	}
	return portOf(u)
}

// portOf returns the port of u, the scheme's default when u names none.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// selfIP reports whether a connection to ip reaches this machine: a
// loopback or unspecified address, or one of the machine's interfaces.
func selfIP(ip net.IP) bool {
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true // cannot tell: refuse rather than risk the admin API
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// checkSelfCallback returns an error when the callback u points at the
// fake's own listener or at an admin path. A host name is resolved only
// when the port is the fake's own; a name that does not resolve now is left
// to the check at delivery time.
func (f *Fake) checkSelfCallback(ctx context.Context, u *url.URL) error {
	if adminPath(u.Path) {
		return fmt.Errorf("%s: a callback must not name a path under %s", maskCallbackURL(u.String()), fakehttp.AdminPrefix)
	}
	own := f.selfPort()
	if own == "" || portOf(u) != own {
		return nil
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil {
		if selfIP(ip) {
			return fmt.Errorf("%s points at the fake itself; a callback must reach a subscriber", maskCallbackURL(u.String()))
		}
		return nil
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if selfIP(a.IP) {
			return fmt.Errorf("%s points at the fake itself; a callback must reach a subscriber", maskCallbackURL(u.String()))
		}
	}
	return nil
}

// dialControl refuses, at connection time, a delivery whose resolved
// address is the fake's own listener.
func (f *Fake) dialControl(network, address string, _ syscall.RawConn) error {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if own := f.selfPort(); own != "" && port == own {
		if ip := net.ParseIP(host); ip == nil || selfIP(ip) {
			return errSelfCallback
		}
	}
	return nil
}
