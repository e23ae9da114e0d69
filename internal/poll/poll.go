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
	// Initial is the first wait between two checks (default 500ms).
	Initial time.Duration
	// Max caps the wait between two checks (default 10s).
	Max time.Duration
	// Multiplier grows the wait after each check (default 1.5).
	Multiplier float64
}

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

// Until calls check until it reports done or fails, waiting between calls
// with a growing, jittered interval. It returns check's error, or the
// context's error as soon as ctx is done.
func Until(ctx context.Context, opts Options, check func(ctx context.Context) (done bool, err error)) error {
	opts = opts.withDefaults()
	wait := opts.Initial
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
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
		timer.Reset(jittered)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		wait = min(time.Duration(float64(wait)*opts.Multiplier), opts.Max)
	}
}
