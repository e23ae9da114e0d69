package reports_test

import (
	"time"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/reports"
)

// viewClock returns a manual clock for a fake, stopped at a fixed time.
func viewClock() *fake.ManualClock {
	return fake.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}

// readyWait returns wait options under which the views of the fake on
// clock get ready as the wait reads them: every status read that finds a
// view PENDING or RUNNING moves the clock past the time the fake takes to
// prepare a view, so the next read finds it done, and the waits between
// reads are a microsecond. Tests that are not about the wait itself use
// them instead of waiting for the fake's views on the real clock.
func readyWait(clock *fake.ManualClock) reports.WaitOptions {
	return reports.WaitOptions{
		Interval:    time.Microsecond,
		MaxInterval: time.Microsecond,
		Progress: func(s *reports.ViewStatus) {
			if s.Status == reports.ViewPending || s.Status == reports.ViewRunning {
				clock.Advance(fake.ViewPendingFor + fake.ViewRunningFor)
			}
		},
	}
}
