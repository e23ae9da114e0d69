package contract

import (
	"net/http"
	"testing"
)

// Check returns a Middleware for a fake that t talks to
// (fake.WithMiddleware(contract.Check(t))), checking in mode m (Lenient
// unless given): a violation fails t, or is only logged when
// PendingCorrections lists it (Fail).
func Check(t testing.TB, m ...Mode) func(http.Handler) http.Handler {
	t.Helper()
	c, err := Load(m...)
	if err != nil {
		t.Fatal(err)
	}
	return c.Middleware(Fail(t))
}
