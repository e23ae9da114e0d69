package partner_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine is left once every test
// has ended: a parallel test, such as TestChaos, cannot check that on its
// own while other tests run beside it. Serial tests check it themselves
// (goleak.VerifyNone), which names the test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// ownWork is the context of a test's own work, to call once the test has
// its parallel slot (after t.Parallel()), so that no budget counts the wait
// for one. It bounds a hung run only: it ends a minute before the test
// binary's -timeout (t.Deadline; a tenth of the time left when that is
// less), so that such a test fails with its own report rather than the
// binary's panic, or after 10 minutes under -timeout 0. A test that
// asserts a duration measures it itself.
func ownWork(t *testing.T) context.Context {
	t.Helper()
	end := time.Now().Add(10 * time.Minute)
	if d, ok := t.Deadline(); ok {
		end = d.Add(-min(time.Minute, time.Until(d)/10))
	}
	ctx, cancel := context.WithDeadline(t.Context(), end)
	t.Cleanup(cancel)
	return ctx
}
