package transport

import (
	"testing"
)

// TestRetryableHTTPDefaultsReplaced pins the go-retryablehttp settings
// whose defaults are traps (DESIGN.md): a stderr logger, a policy that
// retries every POST, a backoff without jitter or Retry-After cap, an
// error handler that drops the last response.
func TestRetryableHTTPDefaultsReplaced(t *testing.T) {
	c := New(Config{Retry: RetryPolicy{MaxRetries: -1}})
	if c.retry.Logger != nil {
		t.Error("go-retryablehttp logs on its own")
	}
	if c.retry.CheckRetry == nil || c.retry.Backoff == nil || c.retry.ErrorHandler == nil {
		t.Error("a go-retryablehttp default is in use")
	}
	if c.retry.RetryMax != DefaultRetryPolicy.MaxRetries {
		t.Errorf("RetryMax = %d", c.retry.RetryMax)
	}
	if c.HTTPClient() == nil || c.Logger() == nil {
		t.Error("nil HTTP client or logger")
	}
}
