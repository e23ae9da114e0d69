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
	// Initial sets the pace (default 500ms): the first wait between two
	// checks is Initial/16; see Until.
	Initial time.Duration
	// Max caps the wait between two checks (default 10s).
	Max time.Duration
	// Multiplier grows the wait after each check (default 1.5).
	Multiplier float64
}

// fastStart sets the first wait, Initial/2^fastStart. Work that is done
// at once (a small view, an empty execution) is seen within milliseconds
// instead of a whole Initial, at the cost of a few more checks of long
// work (about 7 before the waits reach Initial with a Multiplier of 1.5).
// Growing by Multiplier from there, not doubling, keeps a check from
// coming much later than the work is done: at most Multiplier times the
// time it took.
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

// next is the wait after wait, before any jitter.
func (o Options) next(wait time.Duration) time.Duration {
	return max(min(time.Duration(float64(wait)*o.Multiplier), o.Max), 1)
}

// Until calls check until it reports done or fails, waiting between calls.
// The first check is made at once. The waits start fast and back off: the
// first is Initial/16, each next one Multiplier times the previous, up to
// Max, each with ±10% jitter. Until returns check's
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
