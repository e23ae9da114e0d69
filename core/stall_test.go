package core

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestStallBodyIgnoresStaleRun: the stall watch of a body that a call
// reuses from hop to hop (and the next call from the pool) may run late,
// for a Read that has ended. Such a run finds no Read waiting, or one
// that has not waited for the stall timeout, and cancels nothing; a run
// for a Read that has waited that long cancels the hop with
// ErrAnswerStalled.
func TestStallBodyIgnoresStaleRun(t *testing.T) {
	w := newStallWatch(time.Hour)
	b := new(stallBody)
	ctx, cancel := context.WithCancelCause(context.Background())
	b.use(io.NopCloser(strings.NewReader("x")), w, cancel)
	w.fire()                               // no Read waiting
	b.wait.began.Store(w.now().UnixNano()) // a Read that has just begun to wait
	w.fire()
	if ctx.Err() != nil || ended(w, &b.wait) {
		t.Fatalf("a run for no waiting Read cancelled the hop: %v", context.Cause(ctx))
	}
	b.wait.began.Store(w.now().Add(-2 * time.Hour).UnixNano()) // a Read that has waited past the timeout
	w.fire()
	if !errors.Is(context.Cause(ctx), ErrAnswerStalled) || !ended(w, &b.wait) {
		t.Fatalf("a Read waiting past the stall timeout was not cancelled: %v", context.Cause(ctx))
	}
	// Used for the next hop, it starts afresh.
	ctx2, cancel2 := context.WithCancelCause(context.Background())
	b.use(io.NopCloser(strings.NewReader("y")), w, cancel2)
	if got, err := io.ReadAll(b); err != nil || string(got) != "y" || ctx2.Err() != nil {
		t.Fatalf("next hop read %q, %v (hop: %v)", got, err, ctx2.Err())
	}
	// Read to its end, it is watched no more, closed or not.
	if watched(w) != nil {
		t.Error("a body read whole still watched")
	}
	b.Close()
	if watched(w) != nil {
		t.Error("a closed body watched again")
	}
}

// ended reports whether w ended the hop of hw.
func ended(w *waitWatch, hw *hopWait) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return hw.expired
}

// TestCallsAfterAStall: the calls after one whose answer stalled (which
// return its state, its stall body with it, to the pool) answer as
// usual. Their answers come whole with their headers: no Read of theirs
// waits, however short the stall timeout. Not parallel: the calls of
// other tests would take the stalled call's state from the pool.
func TestCallsAfterAStall(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/ok" {
			w.Write([]byte(`{"id":"ok"}`))
			return
		}
		w.Header().Set("Content-Length", "100")
		w.Write([]byte(`{"id":"aa`))
		w.(http.Flusher).Flush()
		<-release
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	c := loopbackClient(t, srv, func(cfg *Config) { cfg.StallTimeout = 10 * time.Millisecond })
	var out struct{ ID string }
	if err := c.Do(context.Background(), &Request{Method: "GET", Path: "/stall"}, &out); !errors.Is(err, ErrAnswerStalled) {
		t.Fatalf("stalled GET: %v, want ErrAnswerStalled", err)
	}
	for i := range 50 {
		out.ID = ""
		if err := c.Do(context.Background(), &Request{Method: "GET", Path: "/ok"}, &out); err != nil || out.ID != "ok" {
			t.Fatalf("call %d after the stall: %q, %v", i, out.ID, err)
		}
	}
}
