package partner_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine is left once every test
// has ended: a parallel test, such as TestChaos, cannot check that on its
// own while other tests run beside it. Serial tests check it themselves
// (goleak.VerifyNone), which names the test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
