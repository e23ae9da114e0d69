package oauth

import (
	"time"

	"github.com/partnerapi/partner-go/core"
)

// NewWithClock is New with the clock used for token expiry, for tests
// that drive expiry with a manual clock.
func NewWithClock(p *core.Client, opts Options, now func() time.Time) *Service {
	return newService(p, opts, now)
}

// OnWait makes s call f each time a Token caller starts to wait for
// another caller's fetch. It must be called before s is used.
func OnWait(s *Service, f func()) { s.cache.testHookWait = f }
