package mocktest

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/contract"
)

// FakeClient starts a fake.Server with opts, closed when the test ends,
// and returns a client of it made from the fake's Connection (its URL,
// client credentials and words) and clientOpts, and the server.
//
// The fake is wrapped in ContractCheck: a request of the SDK or an
// answer of the fake that breaks api/openapi.yaml fails the test.
func FakeClient(t testing.TB, opts []fake.Option, clientOpts ...partner.Option) (*partner.Client, *fake.Server) {
	t.Helper()
	srv := fake.NewServer(append(opts, ContractCheck(t))...)
	t.Cleanup(srv.Close)
	c, err := partner.New(append([]partner.Option{partner.WithConnection(srv.Connection())}, clientOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

// ContractCheck is a fake option that checks every exchange against the
// contract (contract.Checker.Middleware) for the options that fake has on
// (fake.Fake.Extensions: a member only another option adds is a
// violation) and fails t on a violation, unless
// contract.PendingCorrections lists it, which is only logged
// (contract.Fail).
func ContractCheck(t testing.TB) fake.Option {
	t.Helper()
	return func(f *fake.Fake) {
		// The wrapper is built once all options are applied.
		fake.WithMiddleware(func(next http.Handler) http.Handler {
			return contract.Check(t, f.Extensions()...)(next)
		})(f)
	}
}

// NoWaits returns fake options under which the fake's
// asynchronous work needs no real wait: report views are ready at once
// (fake.WithViewDelay(0)), and a manual clock moves on by half of
// fake.DefaultBulkDelay after every bulk status read is answered (an
// execution of the default delay shows running at its first two reads
// and is done at the third). It is for tests that are not about those
// waits.
func NoWaits() []fake.Option {
	clock := fake.NewManualClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	return []fake.Option{fake.WithViewDelay(0), fake.WithClock(clock), fake.WithMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r)
			if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/bulk/v1/status/") {
				clock.Advance(fake.DefaultBulkDelay / 2)
			}
		})
	})}
}

// Failures is a testing.TB that keeps what is reported to it with Errorf
// instead of failing its test, for tests of a check that reports to a
// testing.TB (ContractCheck, contract.Check). Its other methods are TB's.
type Failures struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

// Errorf keeps the message.
func (f *Failures) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

// Errors returns the messages kept so far.
func (f *Failures) Errors() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.errs...)
}
