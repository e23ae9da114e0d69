package contract

import (
	"net/http"
	"testing"
)

// Check returns a Middleware for a fake that t talks to
// (fake.WithMiddleware(contract.Check(t))), for a fake with the named
// options on (Load): a violation fails t, or is only logged when
// PendingCorrections lists it (Fail).
func Check(t testing.TB, options ...string) func(http.Handler) http.Handler {
	t.Helper()
	c, err := Load(options...)
	if err != nil {
		t.Fatal(err)
	}
	return c.Middleware(Fail(t))
}
