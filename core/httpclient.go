package core

// The HTTP client under the pipeline: its default timeouts and its
// redirect rules.

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"
)

// Default timeouts of the HTTP client New builds when Config.HTTPClient is
// nil. A client given through Config.HTTPClient keeps its own.
const (
	DefaultDialTimeout           = 10 * time.Second
	DefaultTLSHandshakeTimeout   = 10 * time.Second
	DefaultResponseHeaderTimeout = 60 * time.Second
	// DefaultIdleConnTimeout closes a pooled connection idle this long,
	// below the idle timeouts of common load balancers and NAT gateways
	// (60s and more), which drop a connection without telling either end.
	DefaultIdleConnTimeout = 30 * time.Second
	// DefaultHTTP2PingInterval and DefaultHTTP2PingTimeout are the
	// health check of an HTTP/2 connection: a ping after that long
	// without a frame, and the connection is closed when the ping gets
	// no answer within the timeout.
	DefaultHTTP2PingInterval = 15 * time.Second
	DefaultHTTP2PingTimeout  = 10 * time.Second
)

// ErrInsecureRedirect is returned for a redirect from https to plain
// http, which would send the request (and, on the same host, its
// Authorization header) in clear.
var ErrInsecureRedirect = errors.New("partner: refused a redirect from https to plain http")

// wrapClient returns a shallow copy of hc for go-retryablehttp:
//   - its transport hides CloseIdleConnections, which go-retryablehttp
//     calls whenever a request finally fails and which would empty the
//     connection pool every other request shares;
//   - a redirect from https to http is refused;
//   - a redirect to another host drops Authorization (net/http would keep
//     it for a subdomain), the headers meant for the service only (fixed
//     headers, the environment, a gateway's subscription key) and those
//     of prop, the trace context.
func wrapClient(hc *http.Client, serviceOnly []string, prop propagation.TextMapPropagator) *http.Client {
	cp := *hc
	rt := cp.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	cp.Transport = roundTripperOnly{rt}
	next := hc.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 {
			if req.URL.Scheme == "http" && via[len(via)-1].URL.Scheme == "https" {
				return ErrInsecureRedirect
			}
			if !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
				req.Header.Del("Authorization")
				for _, k := range serviceOnly {
					req.Header.Del(k)
				}
				for _, k := range prop.Fields() {
					req.Header.Del(k)
				}
				if st, ok := callOf(req.Context()); ok && st.opts != nil {
					for k := range st.opts.Header {
						req.Header.Del(k)
					}
				}
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &cp
}

// serviceOnlyHeaders names the headers that must not follow a redirect to
// another host.
func (cfg *Config) serviceOnlyHeaders() []string {
	names := []string{cfg.EnvHeader, cfg.SubscriptionKeyHeader}
	for k := range cfg.Header {
		names = append(names, k)
	}
	return names
}

type roundTripperOnly struct{ rt http.RoundTripper }

func (r roundTripperOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	return roundTrip(r.rt, req)
}
