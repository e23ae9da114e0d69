package core

// This file bounds the wait for an answer's headers on the HTTP client
// New builds (DefaultResponseHeaderTimeout), in place of
// http.Transport.ResponseHeaderTimeout, which arms and stops a runtime
// timer for every request: on loopback that costs a few percent of a
// call. One timer per Client watches every hop in flight instead; it is
// armed when a hop begins while none is pending, and re-armed, when it
// fires, for the earliest deadline of the hops still waiting.

import (
	"context"
	"fmt"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// headerWatch ends the hops whose answer's headers have not come within
// timeout of the request's last byte being written: their context is
// cancelled, and the hop fails with a *headerTimeoutError. Its timer runs
// only while hops are in flight, and goes unarmed once it fires and finds
// none: an idle Client holds no timer for more than one timeout.
type headerWatch struct {
	timeout time.Duration
	// now is time.Now; a test's clock runs ahead of it.
	now func() time.Time

	mu    sync.Mutex
	head  *headerWait // the hops in flight, a list through next and prev
	timer *time.Timer // runs fire
	armed bool        // the timer is pending
}

func newHeaderWatch(timeout time.Duration) *headerWatch {
	w := &headerWatch{timeout: timeout, now: time.Now}
	w.timer = time.AfterFunc(time.Hour, w.fire)
	w.timer.Stop()
	return w
}

// headerWait is one hop's wait for its answer's headers, kept in its
// call's hooks (a call's hops follow one another).
type headerWait struct {
	// written is when the request's last byte was written (UnixNano), 0
	// while it is being written. net/http's write loop sets it (wrote).
	written atomic.Int64
	cancel  context.CancelCauseFunc
	// expired, next and prev are guarded by the watch's mu.
	expired    bool
	next, prev *headerWait
}

// wroteRequest is the WroteRequest hook of the hop's trace, bound once
// per pooled call (bindHooks), which net/http's write loop calls: it
// marks the request written. A write loop that outlives its hop (the
// answer came before the request was written whole) may mark the call's
// next hop a little early: its deadline then counts from before its own
// request was written, never later.
func (hw *headerWait) wroteRequest(httptrace.WroteRequestInfo) {
	hw.written.Store(time.Now().UnixNano())
}

// begin starts watching the hop of hw, whose context cancel ends.
func (w *headerWatch) begin(hw *headerWait, cancel context.CancelCauseFunc) {
	hw.written.Store(0)
	hw.cancel, hw.expired, hw.prev = cancel, false, nil
	w.mu.Lock()
	hw.next = w.head
	if w.head != nil {
		w.head.prev = hw
	}
	w.head = hw
	if !w.armed {
		// The hop's deadline is a timeout after its request is
		// written, so no earlier than this.
		w.armed = true
		w.timer.Reset(w.timeout)
	}
	w.mu.Unlock()
}

// end stops watching hw's hop, once its round trip returned, and reports
// whether the watch ended it: its answer, if one came, is then too late.
func (w *headerWatch) end(hw *headerWait) bool {
	w.mu.Lock()
	if hw.prev != nil {
		hw.prev.next = hw.next
	} else {
		w.head = hw.next
	}
	if hw.next != nil {
		hw.next.prev = hw.prev
	}
	expired := hw.expired
	hw.next, hw.prev, hw.cancel = nil, nil, nil
	w.mu.Unlock()
	return expired
}

// fire ends the hops past their deadline and arms the timer for the
// earliest deadline of the others: a hop still writing its request is
// looked at again a timeout from now, since its deadline is later.
func (w *headerWatch) fire() {
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
		if written := hw.written.Load(); written != 0 {
			if at = written + timeout; at <= now {
				hw.expired = true
				hw.cancel(&headerTimeoutError{w.timeout})
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
// written, and the cause with which the watch cancels its hop. It is a timeout (net.Error), as net/http's own was: a read is
// retried, a write reports that its outcome is unknown.
type headerTimeoutError struct{ d time.Duration }

func (e *headerTimeoutError) Error() string {
	return fmt.Sprintf("partner: timeout awaiting response headers (%s after the request was written)", e.d)
}

// Timeout marks it a timeout (net.Error), for the retry budget's cost.
func (e *headerTimeoutError) Timeout() bool   { return true }
func (e *headerTimeoutError) Temporary() bool { return true }
