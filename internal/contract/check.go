package contract

import (
	"fmt"
	"net/http"
	"os"
	"sync"
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

// examples holds what ExampleCheck found, for Main.
var examples struct {
	mu         sync.Mutex
	running    bool
	violations []string
}

// ExampleCheck returns a Middleware for the fake of an Example function,
// which has no testing.T: each violation is written to stderr at once
// (under the example's name with -v) and kept, and Main fails the run
// with the list once the package's tests and examples are done. A fake
// built with it outside Main panics, so that no violation goes unseen.
func ExampleCheck() func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		examples.mu.Lock()
		running := examples.running
		examples.mu.Unlock()
		if !running {
			panic("contract: ExampleCheck needs the package's TestMain to return contract.Main(m)")
		}
		c, err := Load()
		if err != nil {
			panic(err)
		}
		return c.Middleware(func(v *Violation) {
			if why := Pending(v.Key); why != "" {
				fmt.Fprintf(os.Stderr, "%v (pending: %s)\n", v, why)
				return
			}
			fmt.Fprintf(os.Stderr, "%v\n", v)
			examples.mu.Lock()
			examples.violations = append(examples.violations, v.Error())
			examples.mu.Unlock()
		})(next)
	}
}

// Main runs a package's tests and examples for its TestMain
// (os.Exit(contract.Main(m))) and returns the exit code: 1 when the fake
// of an Example broke the contract (ExampleCheck), after listing the
// violations.
func Main(m *testing.M) int {
	examples.mu.Lock()
	examples.running = true
	examples.mu.Unlock()
	code := m.Run()
	examples.mu.Lock()
	defer examples.mu.Unlock()
	if len(examples.violations) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the fakes of Example functions saw %d exchanges that break api/openapi.yaml:\n", len(examples.violations))
		for _, v := range examples.violations {
			fmt.Fprintf(os.Stderr, "\t%s\n", v)
		}
		if code == 0 {
			code = 1
		}
	}
	return code
}
