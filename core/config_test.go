package core

import (
	"net/http"
	"testing"
)

// TestRetryableHTTPDefaultsReplaced pins the go-retryablehttp settings
// whose defaults are traps (DESIGN.md): a stderr logger, a policy that
// retries every POST, a backoff without jitter or Retry-After cap, an
// error handler that drops the last response.
func TestRetryableHTTPDefaultsReplaced(t *testing.T) {
	c := New(Config{})
	if c.cfg.Retry.MaxRetries != defaultRetryPolicy.MaxRetries || c.cfg.Retry.MaxRetryTime != defaultRetryPolicy.MaxRetryTime {
		t.Errorf("retry policy = %+v", c.cfg.Retry)
	}
	if c.budget == nil || c.budget.available() != defaultBudget.Capacity {
		t.Errorf("no default retry budget")
	}
	if c.cfg.HTTPClient == nil || c.Logger() == nil {
		t.Error("nil HTTP client or logger")
	}
	tr := c.cfg.HTTPClient.Transport.(*http.Transport)
	if tr.TLSHandshakeTimeout != DefaultTLSHandshakeTimeout || tr.DialContext == nil {
		t.Errorf("default timeouts not set: TLS %v", tr.TLSHandshakeTimeout)
	}
	// The wait for the headers is the client's watch, not a timer per
	// request in the transport (watch.go).
	if c.hc.headers == nil || c.hc.headers.timeout != DefaultResponseHeaderTimeout || tr.ResponseHeaderTimeout != 0 {
		t.Errorf("header wait: watch %+v, transport's %v; want a watch of %v", c.hc.headers, tr.ResponseHeaderTimeout, DefaultResponseHeaderTimeout)
	}
	if given := New(Config{HTTPClient: &http.Client{}}); given.hc.headers != nil {
		t.Error("a given HTTP client is watched: it keeps its own timeouts")
	}
}
