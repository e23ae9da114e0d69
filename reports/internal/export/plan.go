package export

import (
	"math"
	"math/bits"
)

// Tuning of the plan.
const (
	// unreadPages is how many pages past the cap of requests in flight
	// may be requested ahead of the reader: the answers in, which wait
	// unread in their connections until the budget lets them through
	// (runner.gate), do not count against the cap.
	unreadPages = 2
	// speculative is the most pages past the last page known to hold
	// rows that may be requested: at most this many page requests are
	// wasted past the end of a view.
	speculative = 2
)

// A request is a page request, or a probe: a one-row request for the
// first row of a page, which tells whether the page holds rows.
type request struct {
	page  int64
	probe bool
}

// plan decides which requests an export sends, from what is known of
// where the view ends. It holds no lock and starts nothing: the runner
// calls it under its lock, and the tests drive it round by round.
//
// A view with P pages (P ≥ 1: an empty view has page 0, empty) costs at
// most P + ceil(log2 P) + 2 requests, probes included. The plan keeps
// this by construction: while page lo is known to hold rows, the view
// has at least lo+1 pages, so extra(lo) requests beyond one per page are
// allowed; the probes sent and the pages requested past lo (each may
// turn out to be past the end) never exceed it.
//
// How it spends them: page 0 and the first probe, at page cap, go out
// first, then page 1. One probe at a time, probes gallop (the page twice
// as far as the highest known to hold rows) until one finds nothing,
// then bisect the pages left unknown, as far as the budget goes; pages
// known to hold rows need no probe. Page requests go up to speculative
// pages past the highest page known to hold rows, within the window and
// the budget.
type plan struct {
	top    int64 // highest page that may be probed: its first row's number fits an int64
	cap    int   // most page requests in flight
	window int   // page requests allowed in flight: cap, halved on throttling
	grown  int   // pages answered since the window last grew
	cuts   int   // halvings so far

	cur      int64 // page the reader waits for or reads
	next     int64 // next page to request
	inflight int   // page requests sent whose answer is not in
	peak     int   // most page requests in flight at once so far

	lo      int64 // highest page known to hold rows (page 0 counts)
	hi      int64 // lowest page known to hold none (math.MaxInt64: unknown)
	probes  int   // probes sent
	probing bool  // a probe is in flight
}

func newPlan(limit int, size int64) *plan {
	return &plan{top: math.MaxInt64 / size, cap: limit, window: limit, hi: math.MaxInt64}
}

// extra is the number of requests beyond one per page that a view of at
// least lo+1 pages allows: ceil(log2(lo+1)) + 2.
func extra(lo int64) int { return bits.Len64(uint64(lo)) + 2 }

// last returns the last page, once known (hi is lo+1), or -1.
func (p *plan) last() int64 {
	if p.hi <= p.lo+1 {
		return p.lo
	}
	return -1
}

// spent is the requests that may yet turn out to be beyond one per page:
// every probe, and the pages requested past lo.
func (p *plan) spent() int { return p.probes + int(max(0, p.next-1-p.lo)) }

// sends returns the requests to send now, and counts them as sent: the
// pages known to hold rows, then the probes, then the pages past those
// that the budget and the window allow.
func (p *plan) sends() []request {
	p.next = max(p.next, p.cur)
	var out []request
	for p.mayRequest(p.next, false) {
		out = append(out, p.page())
	}
	if t, ok := p.probe(); ok {
		p.probes++
		p.probing = true
		out = append(out, request{page: t, probe: true})
	}
	for p.mayRequest(p.next, true) {
		out = append(out, p.page())
	}
	return out
}

// page counts the next page as requested and returns its request.
func (p *plan) page() request {
	p.sent()
	p.next++
	return request{page: p.next - 1}
}

// sent counts a page request as in flight.
func (p *plan) sent() {
	p.inflight++
	p.peak = max(p.peak, p.inflight)
}

// mayRequest reports whether page n may be requested now: within the
// window, at most cap+unreadPages ahead of the reader, and known to
// hold rows or (when speculate) at most speculative pages past the last
// known to, within the budget.
func (p *plan) mayRequest(n int64, speculate bool) bool {
	switch {
	case p.inflight >= p.window || n >= p.cur+int64(p.cap)+unreadPages:
		return false
	case n <= p.lo:
		return true
	}
	return speculate && n < p.hi && n <= p.lo+speculative && p.spent() < extra(p.lo)
}

// probe returns the page to probe now, if any: none while a probe is
// in flight, once the last page is known, while the pages left unknown
// are within speculative reach of the highest known to hold rows, or
// when the window never reaches further (a cap of 1). It gallops (the
// page twice as far as the highest known to hold rows, cap at first)
// until a probe finds nothing, then bisects the pages left unknown. It
// keeps one request of the budget for a page past lo while none is
// requested.
func (p *plan) probe() (int64, bool) {
	if p.probing || p.hi <= p.lo+speculative+1 {
		return 0, false
	}
	if p.cap+unreadPages-1 <= speculative {
		// The pages the window may request never reach further than
		// speculative pages past one known to hold rows.
		return 0, false
	}
	budget := extra(p.lo) - p.spent()
	if p.next <= p.lo+1 {
		budget--
	}
	if budget < 1 {
		return 0, false
	}
	if p.hi == math.MaxInt64 {
		if p.lo > p.top/2 {
			return 0, false
		}
		return max(2*p.lo, int64(p.cap)), true
	}
	return p.lo + (p.hi-p.lo)/2, true
}

// headers records that the answer to a page request is in (or that the
// request ended without one).
func (p *plan) headers() { p.inflight-- }

// paged records the answer to page n; it reports whether the last page
// became known.
func (p *plan) paged(n int64, rows int, end bool) bool {
	if p.grown++; p.grown >= p.window && p.window < p.cap {
		p.window++
		p.grown = 0
	}
	switch {
	case rows == 0:
		return p.learn(p.lo, n)
	case end:
		return p.learn(n, n+1)
	}
	return p.learn(n+1, math.MaxInt64)
}

// probed records the answer to the probe of page t (ok false: it
// failed, which only leaves the end unknown a while longer); it reports
// whether the last page became known.
func (p *plan) probed(t int64, rows int, end, ok bool) bool {
	p.probing = false
	switch {
	case !ok:
		return false
	case rows == 0:
		return p.learn(p.lo, t)
	case end:
		// The page's first row is the view's last.
		return p.learn(t, t+1)
	}
	return p.learn(t, math.MaxInt64)
}

// learn records that page lo holds rows and page hi none; it reports
// whether that made the last page known, or moved it.
func (p *plan) learn(lo, hi int64) bool {
	before := p.last()
	p.lo = max(p.lo, lo)
	p.hi = min(p.hi, hi)
	return p.last() > before
}

// throttled halves the window on a 429 or 503 to a request sent after
// the last halving (gen is the number of halvings when it was sent): a
// burst of them halves it once.
func (p *plan) throttled(gen int) {
	if gen < p.cuts {
		return
	}
	p.cuts++
	p.window = max(p.window/2, 1)
	p.grown = 0
}
