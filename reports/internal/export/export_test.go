package export

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// simView is a view of pages pages of size rows, served by a Fetch that
// counts what it is asked for.
type simView struct {
	pages, size int64
	// latency is how many times an answer lets the other goroutines run
	// before it comes: the export's other requests go out meanwhile, as
	// they would while the service takes its time, with no clock to wait.
	latency  int
	throttle func(number, size int64) bool // when set and true, the answer calls Throttled first
	// cost is what each page tells Ready it costs (0: 1; -1: unknown,
	// as for an answer without Content-Length), budget what the export
	// may hold (0: 2 pages).
	cost, budget int64

	mu                    sync.Mutex
	pageReqs, pastEnd     int // page requests, and those past the last page
	probeReqs             int
	inflight, maxInflight int // requests open (awaiting an answer, at the gate or decoding)
	awaiting              int // requests awaiting their answer
	awaitingPages         int // page requests awaiting their answer
	maxAwaitingPages      int
	decoded, consumed     int64 // pages decoded so far, pages the reader is done with
	atGate, maxHeld       int64
}

func (v *simView) fetch(ctx context.Context, number, size int64, h Hooks) (Page[int64], error) {
	v.mu.Lock()
	v.inflight++
	v.awaiting++
	v.maxInflight = max(v.maxInflight, v.inflight)
	probe := size == 1
	if probe {
		v.probeReqs++
	} else {
		v.pageReqs++
		v.awaitingPages++
		v.maxAwaitingPages = max(v.maxAwaitingPages, v.awaitingPages)
		if number >= max(v.pages, 1) {
			v.pastEnd++
		}
	}
	v.mu.Unlock()
	defer func() {
		v.mu.Lock()
		v.inflight--
		v.mu.Unlock()
	}()
	answered := func() {
		v.mu.Lock()
		v.awaiting--
		if !probe {
			v.awaitingPages--
		}
		v.mu.Unlock()
	}
	if v.throttle != nil && v.throttle(number, size) {
		h.Throttled()
	}
	for range v.latency {
		if ctx.Err() != nil {
			break
		}
		runtime.Gosched()
	}
	if err := ctx.Err(); err != nil {
		answered()
		return Page[int64]{}, err
	}
	answered()
	if probe {
		rows := v.pages * v.size
		pg := Page[int64]{Value: number, End: number >= rows-1}
		if number < rows {
			pg.Rows = 1
		}
		return pg, nil
	}
	v.mu.Lock()
	v.atGate++
	v.mu.Unlock()
	cost := v.cost
	if cost == 0 {
		cost = 1
	}
	err := h.Ready(cost)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.atGate--
	if err != nil {
		return Page[int64]{}, err
	}
	pg := Page[int64]{Value: number, End: number >= v.pages-1}
	if number < v.pages {
		pg.Rows = int(v.size)
	}
	v.decoded++
	v.maxHeld = max(v.maxHeld, v.decoded-v.consumed)
	return pg, nil
}

// export reads every page through Pages and checks they come in order.
// With settle, before it reads a page the reader waits until every page
// request in flight is decoded or held at its gate, so that fetches run
// ahead as far as the export lets them.
func (v *simView) export(t *testing.T, limit int, settle bool) Stats {
	t.Helper()
	var n int64
	var stats Stats
	budget := v.budget
	if budget == 0 {
		budget = 2 * max(v.cost, 1)
	}
	for pg, err := range Pages(context.Background(), v.size, limit, budget, v.fetch, &stats) {
		if err != nil {
			t.Fatal(err)
		}
		if pg != n {
			t.Fatalf("got page %d, want %d", pg, n)
		}
		n++
		for settle {
			v.mu.Lock()
			settled := v.atGate >= int64(v.inflight)
			v.mu.Unlock()
			if settled {
				break
			}
			runtime.Gosched()
		}
		v.mu.Lock()
		v.consumed++
		v.mu.Unlock()
	}
	if want := max(v.pages, 1); n != want {
		t.Errorf("read %d pages, want %d", n, want)
	}
	return stats
}

// TestPagesBoundsHeldBytes: however many pages a view has and however
// many requests are in flight, an export holds at most its budget of
// pages at once, counted in what Ready is told they cost (the page being
// read and those ahead of it), or one page alone when a page costs more
// than the budget or its cost is unknown. BenchmarkExportHeap measures the heap itself. Without
// the gate the test sees a whole window of decoded pages.
func TestPagesBoundsHeldBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pages        int64
		limit        int
		cost, budget int64
		held         int64 // most pages held at once
	}{
		{10, 1, 1, 2, 2}, {10, 16, 1, 2, 2}, {200, 8, 1, 2, 2}, {200, 64, 1, 2, 2}, {1000, 16, 1, 2, 2},
		{200, 16, 3, 10, 3}, {200, 16, 5, 7, 1}, {200, 16, 10, 4, 1}, {200, 16, -1, 10, 1},
	} {
		t.Run(fmt.Sprintf("%d pages, %d in flight, %d of %d", tc.pages, tc.limit, tc.cost, tc.budget), func(t *testing.T) {
			t.Parallel() // each has its own view
			v := &simView{pages: tc.pages, size: 100, cost: tc.cost, budget: tc.budget}
			v.export(t, tc.limit, true)
			if v.maxHeld > tc.held {
				t.Errorf("%d pages held at once, want at most %d", v.maxHeld, tc.held)
			}
			// At most limit requests await their answers, answers wait
			// unread at their gate only within unreadPages of the
			// reader, and one probe at a time.
			if v.maxInflight > tc.limit+unreadPages+1 {
				t.Errorf("%d requests open at once, cap %d (+%d at the gate, +1 probe)", v.maxInflight, tc.limit, unreadPages)
			}
		})
	}
}

// TestGateCountsWhatPagesHold: a page passes its gate counted at what
// Ready was told it costs, then at what it says it holds once fetched
// (Page.Cost, through settle), in both ways, until it is released.
func TestGateCountsWhatPagesHold(t *testing.T) {
	r := newRunner[int64](context.Background(), 100, 16, 8, nil)
	defer r.close()
	pass := func(m, cost int64) bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.pass(m, cost)
	}
	step := func(f func()) {
		r.mu.Lock()
		defer r.mu.Unlock()
		f()
	}
	if !pass(0, 4) || !pass(1, 4) || pass(2, 4) {
		t.Fatal("pages told 4 each: want 2 through a budget of 8")
	}
	step(func() { r.settle(0, 2); r.settle(1, 2) })
	if !pass(2, 4) {
		t.Error("two pages holding 2 each: want a third told 4 through (2 + 2 + 4)")
	}
	if pass(3, 1) {
		t.Error("8 held: want no more through")
	}
	step(func() { r.settle(2, 6) })
	step(func() { r.release(0) })
	if pass(3, 1) {
		t.Error("a page holding more than told (2 + 6 held): want no more through")
	}
	step(func() { r.release(1) })
	if !pass(3, 2) {
		t.Error("6 held: want a page told 2 through")
	}
	if r.held != 8 {
		t.Errorf("%d held, want 8", r.held)
	}
}

// TestFetchedPageCountsItsCost: the runner counts a fetched page at the
// cost it says it holds (Page.Cost), not at what Ready was told. Only
// page 0 answers; every other request waits for the export's end.
func TestFetchedPageCountsItsCost(t *testing.T) {
	t.Parallel()
	fetch := func(ctx context.Context, number, size int64, h Hooks) (Page[int64], error) {
		if number != 0 || size == 1 {
			<-ctx.Done()
			return Page[int64]{}, ctx.Err()
		}
		if err := h.Ready(4); err != nil {
			return Page[int64]{}, err
		}
		return Page[int64]{Rows: int(size), Cost: 1}, nil
	}
	r := newRunner(context.Background(), 100, 16, 8, fetch)
	defer r.close()
	if _, err := r.get(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held != 1 {
		t.Errorf("%d held for a page told 4 that holds 1, want 1", r.held)
	}
}

// TestPagesRequestBound: whatever the view's length and the cap on
// requests in flight, an export of P pages sends one request per page,
// at most 2 past the last page, and at most P + ceil(log2 P) + 2
// requests in all, probes included.
func TestPagesRequestBound(t *testing.T) {
	t.Parallel()
	for _, pages := range []int64{0, 1, 2, 3, 4, 5, 10, 16, 17, 30, 64, 100, 257, 1000} {
		for _, limit := range []int{1, 4, 16, 64} {
			t.Run(fmt.Sprintf("%d pages, cap %d", pages, limit), func(t *testing.T) {
				t.Parallel() // each has its own view
				// The latency lets the requests of a round overlap. A cap
				// of 1 sends one at a time: there it would only add work.
				latency := 100
				if limit == 1 {
					latency = 0
				}
				v := &simView{pages: pages, size: 1000, latency: latency}
				v.export(t, limit, false)
				P := max(pages, 1)
				if v.pastEnd > speculative {
					t.Errorf("%d page requests past the last page, want at most %d", v.pastEnd, speculative)
				}
				if got := v.pageReqs - v.pastEnd; got != int(P) {
					t.Errorf("%d page requests before the end, want %d (one per page)", got, P)
				}
				if got, bound := v.pageReqs+v.probeReqs, bound(P); got > bound {
					t.Errorf("%d requests (%d pages, %d probes), want at most %d", got, v.pageReqs, v.probeReqs, bound)
				}
			})
		}
	}
}

// bound is the most requests an export of P pages may send.
func bound(P int64) int {
	log2 := 0
	for 1<<log2 < P {
		log2++
	}
	return int(P) + log2 + 2
}

// TestPlanRequestBoundAndRounds drives the plan round by round (sim) for
// every view of 0 to 600 pages, cap 16: it never sends more than
// P + ceil(log2 P) + 2 requests, and its round trips stay within 1.35x
// (+3) of those of an export that knew the length (the first answer,
// then cap pages a round trip). What it loses is at the end of large
// views: once the budget is spent, the last unknown pages come 2 a round
// trip.
func TestPlanRequestBoundAndRounds(t *testing.T) {
	t.Parallel()
	for pages := int64(0); pages <= 600; pages++ {
		P := max(pages, 1)
		reqs, _, rounds := sim(pages*100, 100, 16)
		if reqs > bound(P) {
			t.Errorf("%d pages: %d requests, want at most %d", pages, reqs, bound(P))
		}
		known := 1 + (P-2+15)/16
		if pages <= 2 {
			known = 1
		}
		if float64(rounds) > 1.35*float64(known)+3 {
			t.Errorf("%d pages: %d round trips, want about %d", pages, rounds, known)
		}
	}
}

// TestPlanRequestBoundEverySize drives the plan round by round (sim) for
// every view of 0 to 1100 pages (past 2^10), whose last page is full or
// holds one row (a probe of its first row then finds the view's last
// row; a page partly full is read as a full one), at the caps of
// TestPagesRequestBound: at most 2 page requests past the last page and
// P + ceil(log2 P) + 2 requests in all. The bound's log term steps at
// the powers of two, and the probes gallop from the cap by doubling,
// then bisect: every length around them is here, which
// reports.TestExportRequestBound samples through HTTP.
func TestPlanRequestBoundEverySize(t *testing.T) {
	t.Parallel()
	const size = 10
	for _, limit := range []int{1, 4, 16, 64} {
		t.Run(fmt.Sprintf("cap %d", limit), func(t *testing.T) {
			t.Parallel()
			for pages := int64(0); pages <= 1100; pages++ {
				P := max(pages, 1)
				for _, rows := range []int64{pages * size, pages*size - size + 1} {
					if pages == 0 && rows != 0 {
						continue
					}
					reqs, past, _ := sim(rows, size, limit)
					if past > speculative || reqs > bound(P) {
						t.Errorf("%d rows in pages of %d, cap %d: %d requests, %d pages past the last; want at most %d and %d",
							rows, size, limit, reqs, past, bound(P), speculative)
					}
				}
			}
		})
	}
}

// TestPlanWindowHalvesOnThrottling: a 429 or 503 halves the page
// requests allowed in flight, once for the requests sent before the
// halving; the window grows back by one per window of pages answered.
func TestPlanWindowHalvesOnThrottling(t *testing.T) {
	p := newPlan(16, 100)
	gen := p.cuts
	p.throttled(gen)
	if p.window != 8 {
		t.Fatalf("window %d after a 429, want 8", p.window)
	}
	p.throttled(gen)
	if p.window != 8 {
		t.Fatalf("window %d after a second 429 to a request sent before the halving, want 8", p.window)
	}
	p.throttled(p.cuts)
	if p.window != 4 {
		t.Fatalf("window %d after a 429 to a request sent after the halving, want 4", p.window)
	}
	for n := range int64(4) {
		p.paged(n, 100, false)
	}
	if p.window != 5 {
		t.Fatalf("window %d after 4 pages answered, want 5", p.window)
	}
	for range 100 {
		p.throttled(p.cuts)
	}
	if p.window != 1 {
		t.Fatalf("window %d, want at least 1", p.window)
	}
}

// TestPagesThrottledCutsRequestsInFlight: against a service that
// throttles every page request, the export soon keeps a few requests
// awaiting their answers (the window halves to 1 and grows back by one
// per window of pages answered, plus one probe) instead of up to the cap
// of 16.
func TestPagesThrottledCutsRequestsInFlight(t *testing.T) {
	t.Parallel()
	v := &simView{pages: 100, size: 100, latency: 100}
	maxLate := 0
	v.throttle = func(number, size int64) bool {
		v.mu.Lock()
		defer v.mu.Unlock()
		if size > 1 && number >= 50 {
			maxLate = max(maxLate, v.awaiting)
		}
		return size > 1
	}
	v.export(t, 16, false)
	if maxLate > 6 {
		t.Errorf("%d requests awaiting answers at once past page 50, want at most 6", maxLate)
	}
}

// TestPagesReportsPeakInFlight: the stats of an export give the most
// page requests that awaited their answers at once: never past the cap,
// at least what the service saw (the export counts a request from before
// it is sent to its answer's headers), and at least 2 with a cap of 2 or
// more (page 0 and page 1 go out before the first answer). A throttled
// export reports its halvings.
func TestPagesReportsPeakInFlight(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{1, 2, 4, 16} {
		t.Run(fmt.Sprintf("cap %d", limit), func(t *testing.T) {
			t.Parallel() // each has its own view
			v := &simView{pages: 40, size: 100, latency: 100}
			st := v.export(t, limit, true)
			if st.PeakInFlight > limit || st.PeakInFlight < v.maxAwaitingPages || st.PeakInFlight < min(limit, 2) {
				t.Errorf("peak %d, want at most the cap %d, at least the %d the service saw and at least %d",
					st.PeakInFlight, limit, v.maxAwaitingPages, min(limit, 2))
			}
			if st.Throttled != 0 {
				t.Errorf("%d halvings without throttling", st.Throttled)
			}
		})
	}
	v := &simView{pages: 20, size: 100, latency: 100, throttle: func(_, size int64) bool { return size > 1 }}
	if st := v.export(t, 16, false); st.Throttled == 0 {
		t.Error("no halving reported against a service that throttles every page")
	}
}

// TestPagesCancelsRequestsPastTheEnd: once a page says it is the last,
// the requests sent for pages past it are cancelled before that page is
// yielded, not left to run until the export ends.
func TestPagesCancelsRequestsPastTheEnd(t *testing.T) {
	const pages, size = 3, 10
	var once sync.Once
	sent3 := make(chan struct{})
	var ctx3 context.Context // page 3's request, past the end; set before sent3 closes
	fetch := func(ctx context.Context, number, size int64, h Hooks) (Page[int64], error) {
		if size == 1 { // a probe
			if number >= pages*size {
				return Page[int64]{}, nil
			}
			return Page[int64]{Rows: 1, End: number == pages*size-1}, nil
		}
		if number >= pages {
			if number == pages {
				once.Do(func() { ctx3 = ctx; close(sent3) })
			}
			<-ctx.Done()
			return Page[int64]{}, ctx.Err()
		}
		if number == pages-1 {
			// The last page answers once page 3 is in flight.
			select {
			case <-sent3:
			case <-ctx.Done():
				return Page[int64]{}, ctx.Err()
			}
		}
		if err := h.Ready(1); err != nil {
			return Page[int64]{}, err
		}
		return Page[int64]{Value: number, Rows: int(size), End: number == pages-1}, nil
	}
	var n int64
	for pg, err := range Pages(context.Background(), size, 4, 2, fetch, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if pg != n {
			t.Fatalf("got page %d, want %d", pg, n)
		}
		if pg == pages-1 && ctx3.Err() == nil {
			t.Error("the request for page 3, past the last page, is still running when the last page is read")
		}
		n++
	}
	if n != pages {
		t.Errorf("read %d pages, want %d", n, pages)
	}
}
