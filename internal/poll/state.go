package poll

import (
	"context"
	"errors"

	"github.com/partnerapi/partner-go/internal/errs"
)

// State is the rule every Wait helper of the SDK follows. It reads a
// resource's state with read, hands each state read to progress (when
// set), and stops when settle reports a known terminal state: done with a
// nil error on success, or the typed error of a terminal failure. An
// empty or unknown state is not terminal: settle returns false, nil for
// it and polling goes on until ctx ends.
//
// It returns the last state read (the zero S when none was) beside any
// error: settle's, read's, or the context's.
func State[S any](ctx context.Context, opts Options, read func(context.Context) (S, error), progress func(S), settle func(S) (done bool, err error)) (S, error) {
	var last S
	err := Until(ctx, opts, func(ctx context.Context) (bool, error) {
		s, err := read(ctx)
		if err != nil {
			return false, err
		}
		last = s
		if progress != nil {
			progress(s)
		}
		return settle(s)
	})
	return last, err
}

// Waiter is what a Wait helper of the SDK waits on: how to read the
// resource's state, whom to tell each state read, when it is settled
// (see State), and how to say which state a wait that ctx ended was
// still waiting in.
type Waiter[S any] struct {
	Read     func(context.Context) (S, error)
	Progress func(S)
	Settle   func(S) (done bool, err error)
	// Still says what was still being waited for in the last state
	// read, as Unfinished's message: "reports: view 7 still running".
	Still func(S) string
}

// Wait is the one form of every Wait helper: State over w, and, when ctx
// ends the wait after a state was read, the context's error with w.Still
// of that state (Unfinished). It returns the last state read (the zero S
// when none was) beside any error.
func Wait[S any](ctx context.Context, opts Options, w Waiter[S]) (S, error) {
	read := false
	last, err := State(ctx, opts, func(ctx context.Context) (S, error) {
		s, err := w.Read(ctx)
		read = read || err == nil
		return s, err
	}, w.Progress, w.Settle)
	if read {
		err = Unfinished(ctx, err, "%s", w.Still(last))
	}
	return last, err
}

// Unfinished returns the error of a wait that ctx ended with the last state
// read noted in it (format and args, as errs.Wrap takes them), so that a
// "context deadline exceeded" says what was still being waited for. Any
// other error, and nil, is returned as it is; errors.Is still sees the
// context's error.
func Unfinished(ctx context.Context, err error, format string, args ...any) error {
	if err == nil || ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		return err
	}
	return errs.Wrap(err, format, args...)
}

// StateText is a state as Unfinished's message shows it: the state, or
// "without a status" when the service sent none.
func StateText(state string) string {
	if state == "" {
		return "without a status"
	}
	return state
}
