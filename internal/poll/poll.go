// Package poll is the one polling loop of the SDK, behind every Wait
// helper (bulk executions, report views).
package poll

import (
	"context"
	"math/rand/v2"
	"time"
)

// Options tune a poll loop. Zero fields take the defaults.
type Options struct {
	// Initial is the wait the loop settles to after its fast start
	// (default 500ms); see Until.
	Initial time.Duration
	// Max caps the wait between two checks (default 10s).
	Max time.Duration
	// Multiplier grows the wait after each check once it has reached
	// Initial (default 1.5).
	Multiplier float64
}

// fastStart is the number of short waits before the first wait of
// Initial: the first wait is Initial/2^fastStart, and each one doubles
// until Initial. Work that is done at once (a small view, an empty
// execution) is seen within a few milliseconds instead of a whole
// Initial, at the cost of fastStart extra checks for long work.
const fastStart = 4

func (o Options) withDefaults() Options {
	if o.Initial <= 0 {
		o.Initial = 500 * time.Millisecond
	}
	if o.Max <= 0 {
		o.Max = 10 * time.Second
	}
	if o.Max < o.Initial {
		o.Max = o.Initial
	}
	if o.Multiplier < 1 {
		o.Multiplier = 1.5
	}
	return o
}

// first is the first wait, before any jitter.
func (o Options) first() time.Duration {
	return max(o.Initial>>fastStart, 1)
}

// next is the wait after wait, before any jitter: doubling up to Initial,
// then growing by Multiplier up to Max.
func (o Options) next(wait time.Duration) time.Duration {
	if wait < o.Initial {
		return min(2*wait, o.Initial)
	}
	return min(time.Duration(float64(wait)*o.Multiplier), o.Max)
}

// Until calls check until it reports done or fails, waiting between calls.
// The first check is made at once. The waits start fast and back off: the
// first is Initial/16, each one doubles until Initial, then grows by
// Multiplier up to Max, each with ±10% jitter. Until returns check's
// error, or the context's error as soon as ctx is done.
func Until(ctx context.Context, opts Options, check func(ctx context.Context) (done bool, err error)) error {
	opts = opts.withDefaults()
	wait := opts.first()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		done, err := check(ctx)
		if err != nil || done {
			return err
		}
		// ±10% jitter keeps many waiters from polling in lockstep.
		jittered := time.Duration(float64(wait) * (0.9 + 0.2*rand.Float64()))
		if timer == nil {
			timer = time.NewTimer(jittered)
		} else {
			timer.Reset(jittered)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		wait = opts.next(wait)
	}
}
