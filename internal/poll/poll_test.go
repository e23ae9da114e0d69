package poll

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

var fast = Options{Initial: time.Microsecond, Max: 10 * time.Microsecond}

func TestUntilDone(t *testing.T) {
	n := 0
	err := Until(context.Background(), fast, func(context.Context) (bool, error) {
		n++
		return n == 3, nil
	})
	if err != nil || n != 3 {
		t.Fatalf("err %v after %d checks", err, n)
	}
}

func TestUntilCheckError(t *testing.T) {
	boom := errors.New("boom")
	n := 0
	err := Until(context.Background(), fast, func(context.Context) (bool, error) { n++; return false, boom })
	if !errors.Is(err, boom) || n != 1 {
		t.Fatalf("err %v after %d checks", err, n)
	}
}

// TestUntilCancelledWhileWaiting cancels during a long wait: Until returns
// the context's error at once and leaves no goroutine.
func TestUntilCancelledWhileWaiting(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	checked := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- Until(ctx, Options{Initial: time.Hour}, func(context.Context) (bool, error) {
			close(checked)
			return false, nil
		})
	}()
	<-checked
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Until still waiting after cancel")
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	if o.Initial != 500*time.Millisecond || o.Max != 10*time.Second || o.Multiplier != 1.5 {
		t.Fatalf("%+v", o)
	}
	if o := (Options{Initial: time.Minute}).withDefaults(); o.Max != time.Minute {
		t.Fatalf("Max below Initial kept: %+v", o)
	}
}

// TestStateRule: State keeps polling through unknown states, returns the
// terminal failure with the last state, and the last state beside a
// context error.
func TestStateRule(t *testing.T) {
	boom := errors.New("failed")
	states := []string{"", "weird", "running", "failed"}
	i := 0
	var seen []string
	last, err := State(context.Background(), fast,
		func(context.Context) (string, error) { s := states[i]; i++; return s, nil },
		func(s string) { seen = append(seen, s) },
		func(s string) (bool, error) {
			if s == "failed" {
				return false, boom
			}
			return s == "done", nil
		})
	if last != "failed" || !errors.Is(err, boom) || len(seen) != 4 {
		t.Fatalf("State = %q, %v after %v", last, err, seen)
	}

	ctx, cancel := context.WithCancel(context.Background())
	last, err = State(ctx, fast,
		func(context.Context) (string, error) { cancel(); return "running", nil },
		nil,
		func(string) (bool, error) { return false, nil })
	if last != "running" || !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %q, %v", last, err)
	}
}

// TestScheduleStartsFast pins the waits between checks (before jitter):
// work that is ready at once is seen after Initial/16, not after Initial.
func TestScheduleStartsFast(t *testing.T) {
	o := Options{Initial: 1600 * time.Millisecond, Max: 3 * time.Second, Multiplier: 2}.withDefaults()
	want := []time.Duration{100, 200, 400, 800, 1600, 3000, 3000}
	w := o.first()
	for i, ms := range want {
		if w != ms*time.Millisecond {
			t.Fatalf("wait %d = %v, want %v", i, w, ms*time.Millisecond)
		}
		w = o.next(w)
	}
	if got := (Options{Initial: 3 * time.Nanosecond}).withDefaults().first(); got != 1 {
		t.Fatalf("first wait of a tiny Initial = %v, want 1ns", got)
	}
	d := Options{Initial: 800 * time.Millisecond}.withDefaults()
	if w := d.next(d.first()); w != 75*time.Millisecond {
		t.Fatalf("second wait %v, want 75ms (50ms × the default 1.5)", w)
	}
}

// TestUnfinished: only the context's error is annotated, with the prefix
// once; a read error while ctx is live, or an error of another ctx, is
// returned as it is.
func TestUnfinished(t *testing.T) {
	live := context.Background()
	boom := errors.New("partner: boom")
	if got := Unfinished(live, boom, "bulk: execution %s still %s", "e1", "running"); got != boom {
		t.Errorf("live ctx: %v, want the error as it is", got)
	}
	if got := Unfinished(live, nil, "x"); got != nil {
		t.Errorf("nil error: %v", got)
	}
	ctx, cancel := context.WithCancel(live)
	cancel()
	if got := Unfinished(ctx, boom, "x"); got != boom {
		t.Errorf("ended ctx, other error: %v, want it as it is", got)
	}
	got := Unfinished(ctx, ctx.Err(), "bulk: execution %s still %s", "e1", StateText(""))
	if !errors.Is(got, context.Canceled) || got.Error() != "partner: bulk: execution e1 still without a status: context canceled" {
		t.Errorf("ended ctx: %q", got)
	}
}

// TestWaitNamesThePendingState: a wait that its context ends says which
// state it was still waiting in when one was read, and is the context's
// error either way.
func TestWaitNamesThePendingState(t *testing.T) {
	for _, readOK := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		w := Waiter[*string]{
			Read: func(context.Context) (*string, error) {
				cancel() // the wait ends after this read
				if !readOK {
					return nil, context.Canceled
				}
				s := "running"
				return &s, nil
			},
			Settle: func(*string) (bool, error) { return false, nil },
			Still:  func(s *string) string { return "thing 7 still " + *s },
		}
		last, err := Wait(ctx, Options{Initial: time.Millisecond}, w)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("read %v: err %v, want context.Canceled", readOK, err)
		}
		if got := strings.Contains(err.Error(), "thing 7 still running"); got != readOK || (last != nil) != readOK {
			t.Errorf("read %v: err %q, last %v", readOK, err, last)
		}
	}
}
