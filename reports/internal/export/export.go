// Package export reads the pages of a view ahead of the reader that
// yields them, without knowing how many pages the view has: a view's
// data never changes, so pages can be requested several at a time and
// still be yielded in order. Pages is its one entry point; plan decides
// what to request, the runner here sends it and holds the answers.
//
// Retries and their back-off belong to the transport under Fetch; the
// export only halves the number of page requests it keeps in flight
// when told the service is throttling (Hooks.Throttled).
package export

import (
	"context"
	"iter"
	"sync"

	"github.com/partnerapi/partner-go/internal/errs"
)

// Page is what a Fetch returns: the value yielded to the reader, and
// what the plan learns from it.
type Page[T any] struct {
	Value T
	Rows  int  // rows on the page
	End   bool // the page says it is the last (endOfList)
	// Cost, when not 0, is what holding the page costs, in bytes, as read
	// and decoded: it replaces the cost Ready was told.
	Cost int64
}

// Hooks let the export pace a request.
type Hooks struct {
	// Ready, when set, is called once the answer's headers are in, with
	// what holding the page will cost, in bytes, read and decoded (-1
	// when unknown); the body is read only once it returns nil: until
	// then the answer waits in its connection, not in memory.
	Ready func(cost int64) error
	// Throttled is called when the service answers 429 or 503, retried
	// answers included.
	Throttled func()
}

// Fetch requests page number of size rows: a page of the view, or (size
// 1) one row, for a probe.
type Fetch[T any] func(ctx context.Context, number, size int64, h Hooks) (Page[T], error)

// Stats are what an export did, for its telemetry.
type Stats struct {
	// PeakInFlight is the most page requests awaiting their answers at
	// once (probes not counted): at most the limit.
	PeakInFlight int
	// Throttled is the number of times the window was halved.
	Throttled int
}

// Pages yields pages 0, 1, 2, ... of size rows each, in order, until one
// says End or holds no rows, with up to limit page requests in flight,
// and at most budget bytes of pages held at once (what Ready is told
// they cost, then what the page says it costs once fetched; a page that
// costs more than budget alone is held alone):
// pages are let through Ready in order, from the page being read on, as
// long as their cost fits.
// A probe of page n is the one-row request fetch(ctx, n*size, 1, h).
// Stopping the iteration cancels the requests in flight and returns once
// their goroutines are gone. When stats is not nil, it is filled when the
// iteration ends.
func Pages[T any](ctx context.Context, size int64, limit int, budget int64, fetch Fetch[T], stats *Stats) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		r := newRunner(ctx, size, limit, budget, fetch)
		defer func() {
			r.close()
			if stats != nil {
				*stats = Stats{PeakInFlight: r.plan.peak, Throttled: r.plan.cuts}
			}
		}()
		for n := int64(0); ; n++ {
			pg, err := r.get(ctx, n)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			if !yield(pg.Value, nil) || pg.End || pg.Rows == 0 {
				return
			}
		}
	}
}

// runner sends what the plan asks for, one goroutine per request, and
// holds each page's answer until the reader takes it.
type runner[T any] struct {
	ctx    context.Context
	cancel context.CancelFunc
	fetch  Fetch[T]
	size   int64
	wg     sync.WaitGroup

	mu      sync.Mutex
	plan    *plan
	advance chan struct{} // closed when plan.cur moves
	pending map[int64]*slot[T]
	probes  map[int64]context.CancelFunc

	// The pages let through their gate and not yet released, with their
	// cost; their costs add up to held, within budget.
	budget int64
	held   int64
	costs  map[int64]int64
	admit  int64 // the next page to let through, in order
	known  int64 // the largest cost told, for a page of unknown cost
}

type slot[T any] struct {
	ch     chan fetched[T] // buffered: never blocks the fetching goroutine
	cancel context.CancelFunc
}

type fetched[T any] struct {
	page Page[T]
	err  error
}

func newRunner[T any](ctx context.Context, size int64, limit int, budget int64, fetch Fetch[T]) *runner[T] {
	ctx, cancel := abandonable(ctx)
	return &runner[T]{ctx: ctx, cancel: cancel, fetch: fetch, size: size, plan: newPlan(limit, size),
		advance: make(chan struct{}), pending: map[int64]*slot[T]{}, probes: map[int64]context.CancelFunc{},
		budget: budget, costs: map[int64]int64{}}
}

// get returns page n. Pages calls it for 0, 1, 2, ... in order.
func (r *runner[T]) get(ctx context.Context, n int64) (Page[T], error) {
	r.mu.Lock()
	r.plan.cur = n
	for m := range r.costs {
		if m < n {
			r.release(m)
		}
	}
	r.moved()
	r.pump()
	s := r.pending[n]
	if s == nil {
		// Cancelled as past the last page, yet asked for: the page
		// before it did not say End.
		r.plan.sent()
		s = r.send(n)
	}
	delete(r.pending, n)
	r.mu.Unlock()
	select {
	case f := <-s.ch:
		return f.page, f.err
	case <-ctx.Done():
		return Page[T]{}, ctx.Err()
	}
}

// pump sends what the plan asks for. r.mu is held.
func (r *runner[T]) pump() {
	for _, req := range r.plan.sends() {
		if req.probe {
			r.probe(req.page)
		} else {
			r.send(req.page)
		}
	}
}

// hooks returns the hooks of a request sent after gen halvings of the
// window, with ready (nil for a probe).
func (r *runner[T]) hooks(ready func(cost int64) error) Hooks {
	gen := r.plan.cuts
	return Hooks{Ready: ready, Throttled: func() {
		r.mu.Lock()
		r.plan.throttled(gen)
		r.mu.Unlock()
	}}
}

// send requests page n. r.mu is held.
func (r *runner[T]) send(n int64) *slot[T] {
	ctx, cancel := abandonable(r.ctx)
	s := &slot[T]{ch: make(chan fetched[T], 1), cancel: cancel}
	r.pending[n] = s
	answered := false // r.mu
	done := func() {
		if !answered {
			answered = true
			r.plan.headers()
			r.pump()
		}
	}
	h := r.hooks(func(cost int64) error {
		// The answer is in: the window may send the next request while
		// this one waits to be read.
		r.mu.Lock()
		done()
		r.mu.Unlock()
		return r.gate(n, cost)
	})
	r.wg.Go(func() {
		defer cancel()
		pg, err := r.fetch(ctx, n, r.size, h)
		r.mu.Lock()
		done()
		if err != nil {
			r.release(n)
			r.moved()
		} else if pg.Cost > 0 {
			r.settle(n, pg.Cost)
		}
		if err == nil && r.plan.paged(n, pg.Rows, pg.End) {
			r.found()
		}
		r.pump()
		r.mu.Unlock()
		s.ch <- fetched[T]{pg, err}
	})
	return s
}

// probe asks for the first row of page t. r.mu is held.
func (r *runner[T]) probe(t int64) {
	ctx, cancel := abandonable(r.ctx)
	r.probes[t] = cancel
	h := r.hooks(nil)
	r.wg.Go(func() {
		defer cancel()
		pg, err := r.fetch(ctx, t*r.size, 1, h)
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.probes, t)
		// A failed probe only leaves the end unknown a while longer;
		// the page requests still find it.
		if r.plan.probed(t, pg.Rows, pg.End, err == nil) {
			r.found()
		}
		r.pump()
	})
}

// found cancels the requests past the last page, now known. r.mu is
// held.
func (r *runner[T]) found() {
	for m, s := range r.pending {
		if m > r.plan.last() {
			s.cancel()
			delete(r.pending, m)
		}
	}
	for t, cancel := range r.probes {
		cancel()
		delete(r.probes, t)
	}
}

// gate blocks the reading of page m, which costs cost bytes (-1:
// unknown, counted as the largest cost told so far, or the whole budget),
// until the pages before it are through and its cost fits the budget with
// the pages held (or none is held), or the export ends. A page already
// through (its answer was cut off and asked for again) goes on.
func (r *runner[T]) gate(m, cost int64) error {
	for {
		r.mu.Lock()
		through := r.pass(m, cost)
		ch := r.advance
		r.mu.Unlock()
		if through {
			return nil
		}
		select {
		case <-ch:
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
	}
}

// pass lets page m, which costs cost bytes (-1: unknown), through its
// gate when gate would, and reports whether it is through. r.mu is held.
func (r *runner[T]) pass(m, cost int64) bool {
	if _, through := r.costs[m]; through {
		return true
	}
	if m > r.admit {
		return false
	}
	if cost < 0 {
		cost = r.known
		if cost == 0 {
			cost = r.budget
		}
	}
	r.known = max(r.known, cost)
	if r.held != 0 && r.held+cost > r.budget {
		return false
	}
	r.costs[m] = cost
	r.held += cost
	r.admit = max(r.admit, m+1)
	r.moved()
	return true
}

// settle counts what page m, through its gate, really costs. r.mu is
// held.
func (r *runner[T]) settle(m, cost int64) {
	if told, ok := r.costs[m]; ok {
		r.held += cost - told
		r.costs[m] = cost
		r.known = max(r.known, cost)
		r.moved()
	}
}

// release returns what page m holds to the budget. r.mu is held.
func (r *runner[T]) release(m int64) {
	r.held -= r.costs[m]
	delete(r.costs, m)
}

// abandonable returns a context of ctx whose cancel gives the cause
// errs.ErrAbandoned: the request in it was the export's own, and its
// answer is no longer needed, which the client tells from a cancel of the
// caller's.
func abandonable(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	return ctx, func() { cancel(errs.ErrAbandoned) }
}

// moved wakes the gates: the reader moved on, or the pages held changed.
// r.mu is held.
func (r *runner[T]) moved() {
	close(r.advance)
	r.advance = make(chan struct{})
}

// close cancels the requests in flight and waits for their goroutines.
func (r *runner[T]) close() {
	r.cancel()
	r.wg.Wait()
}
