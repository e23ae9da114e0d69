package core

// This file bounds the waits of hops in flight with one timer per
// Client instead of one per request: the wait for an answer's headers on
// the HTTP client New builds (DefaultResponseHeaderTimeout), in place of
// http.Transport.ResponseHeaderTimeout, which arms and stops a runtime
// timer for every request, and, on every client, the wait of a Read of
// an answer's body for its next bytes (Config.StallTimeout, stallBody in
// send.go), in place of a timer reset for every Read. On loopback a
// runtime timer per request costs a few percent of a call. The watch's
// timer is armed when a hop begins while none is pending, and re-armed,
// when it fires, for the earliest deadline of the hops still waiting.

import (
	"context"
	"fmt"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// waitWatch ends the hops whose wait has lasted timeout: for the
// header watch, the answer's headers have not come within timeout of the
// request's last byte being written (the hop fails with a
// *headerTimeoutError); for the stall watch, a Read of the answer's body
// has received nothing for timeout (ErrAnswerStalled). Their context is
// cancelled with cause(timeout). Its timer runs only while hops are in
// flight, and goes unarmed once it fires and finds none: an idle Client
// holds no timer for more than one timeout.
type waitWatch struct {
	timeout time.Duration
	// now is the watch's clock, monoNow (a test's clock runs ahead of
	// it). The waits' start times (hopWait.began) are its UnixNano.
	now   func() time.Time
	cause func(timeout time.Duration) error

	mu    sync.Mutex
	head  *hopWait    // the hops in flight, a list through next and prev
	timer *time.Timer // runs fire
	armed bool        // the timer is pending
}

// newHeaderWatch returns the watch of the waits for answers' headers: a
// hop whose headers have not come within timeout of its request being
// written fails with a *headerTimeoutError.
func newHeaderWatch(timeout time.Duration) *waitWatch {
	return newWatch(timeout, monoNow, func(d time.Duration) error { return &headerTimeoutError{d} })
}

// newStallWatch returns the watch of the Reads of answers' bodies
// (stallBody): a Read that receives nothing for timeout ends its hop
// with ErrAnswerStalled.
func newStallWatch(timeout time.Duration) *waitWatch {
	return newWatch(timeout, monoNow, func(time.Duration) error { return ErrAnswerStalled })
}

func newWatch(timeout time.Duration, now func() time.Time, cause func(time.Duration) error) *waitWatch {
	w := &waitWatch{timeout: timeout, now: now, cause: cause}
	w.timer = time.AfterFunc(time.Hour, w.fire)
	w.timer.Stop()
	return w
}

// monoEpoch is a reading of the clock when the package was loaded, and
// monoEpochNano its wall time: monoNow counts from them.
var (
	monoEpoch     = time.Now()
	monoEpochNano = monoEpoch.UnixNano()
)

// monoNow is the time as the monotonic clock runs: monoEpoch's wall
// time plus the monotonic time elapsed since. Both watches count on it,
// as time.Since does: a change of the wall clock neither ends a wait
// early nor lets one last longer.
func monoNow() time.Time { return time.Unix(0, monoEpochNano+int64(time.Since(monoEpoch))) }

// hopWait is one hop's wait: for its answer's headers, kept in its
// call's hooks (a call's hops follow one another); for the next bytes
// of its answer's body, in its stallBody.
type hopWait struct {
	// began is when the wait began (UnixNano of the watch's clock), 0
	// while it has not: the request's last byte written, which
	// net/http's write loop notes (wroteRequest); a Read of the body
	// begun (stallBody.Read).
	began  atomic.Int64
	cancel context.CancelCauseFunc
	// expired, listed, next and prev are guarded by the watch's mu.
	expired    bool
	listed     bool // in the watch's list, between begin and end
	next, prev *hopWait
}

// wroteRequest is the WroteRequest hook of the hop's trace, bound once
// per pooled call (bindHooks), which net/http's write loop calls: it
// marks the request written. A write loop that outlives its hop (the
// answer came before the request was written whole) may mark the call's
// next hop a little early: its deadline then counts from before its own
// request was written, never later.
func (hw *hopWait) wroteRequest(httptrace.WroteRequestInfo) {
	hw.began.Store(monoNow().UnixNano())
}

// begin starts watching the hop of hw, whose context cancel ends. A
// wait still watched (a pooled call's body left unclosed) leaves the
// list first.
func (w *waitWatch) begin(hw *hopWait, cancel context.CancelCauseFunc) {
	hw.began.Store(0)
	w.mu.Lock()
	w.unlink(hw)
	hw.cancel, hw.expired, hw.prev = cancel, false, nil
	hw.listed, hw.next = true, w.head
	if w.head != nil {
		w.head.prev = hw
	}
	w.head = hw
	if !w.armed {
		// The hop's deadline is a timeout after its wait begins, so
		// no earlier than this.
		w.armed = true
		w.timer.Reset(w.timeout)
	}
	w.mu.Unlock()
}

// end stops watching hw's hop, once its round trip returned (its body
// closed, for the stall watch), and reports whether the watch ended it:
// its answer, if one came, is then too late. Ending a hop no longer
// watched (a body closed twice) changes nothing.
func (w *waitWatch) end(hw *hopWait) bool {
	w.mu.Lock()
	w.unlink(hw)
	expired := hw.expired
	hw.cancel = nil
	w.mu.Unlock()
	return expired
}

// unlink takes hw out of the list, if it is in it; w.mu is held.
func (w *waitWatch) unlink(hw *hopWait) {
	if !hw.listed {
		return
	}
	if hw.prev != nil {
		hw.prev.next = hw.next
	} else {
		w.head = hw.next
	}
	if hw.next != nil {
		hw.next.prev = hw.prev
	}
	hw.listed, hw.next, hw.prev = false, nil, nil
}

// fire ends the hops past their deadline and arms the timer for the
// earliest deadline of the others: a hop whose wait has not begun (still
// writing its request, or no Read waiting) is looked at again a timeout
// from now, since its deadline is later.
func (w *waitWatch) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now().UnixNano()
	timeout := w.timeout.Nanoseconds()
	next := int64(-1) // the earliest time to look again, -1 when no hop waits
	for hw := w.head; hw != nil; hw = hw.next {
		if hw.expired {
			continue
		}
		at := now + timeout
		if began := hw.began.Load(); began != 0 {
			if at = began + timeout; at <= now {
				hw.expired = true
				hw.cancel(w.cause(w.timeout))
				continue
			}
		}
		if next < 0 || at < next {
			next = at
		}
	}
	if w.armed = next >= 0; w.armed {
		w.timer.Reset(time.Duration(next - now))
	}
}

// headerTimeoutError is the failure of an attempt whose answer's headers
// did not come within the response header timeout of its request being
// written, and the cause with which the watch cancels its hop. It is a
// timeout (net.Error), as net/http's own is: a read is retried, a write
// reports that its outcome is unknown.
type headerTimeoutError struct{ d time.Duration }

func (e *headerTimeoutError) Error() string {
	return fmt.Sprintf("partner: timeout awaiting response headers (%s after the request was written)", e.d)
}

// Timeout marks it a timeout (net.Error), for the retry budget's cost.
func (e *headerTimeoutError) Timeout() bool   { return true }
func (e *headerTimeoutError) Temporary() bool { return true }
