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
	if tr.ResponseHeaderTimeout != DefaultResponseHeaderTimeout || tr.TLSHandshakeTimeout != DefaultTLSHandshakeTimeout || tr.DialContext == nil {
		t.Errorf("default timeouts not set: header %v, TLS %v", tr.ResponseHeaderTimeout, tr.TLSHandshakeTimeout)
	}
}
