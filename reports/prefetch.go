package reports

import (
	"context"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/partnerapi/partner-go/core"
)

// Tuning of the prefetcher behind ExportView.
const (
	// decodedPages caps the pages an export holds decoded at once (the
	// one being yielded and those decoded ahead of it), whatever the
	// number of requests in flight: a page that arrives further ahead
	// waits, unread, in its connection. With 10,000-row pages of 10
	// columns this keeps an export's heap under 32 MiB.
	decodedPages = 2
	// initialWindow is the number of page requests in flight at first:
	// page 0 and the speculative pages after it.
	initialWindow = 1 + speculative
	// speculative is the number of pages past the last page known to
	// hold rows that may be requested: at most this many page requests
	// are wasted past the end of a view.
	speculative = 2
	// slowStartGrowth is what each answer of flat latency adds to the
	// window until its first halving: the window grows fivefold every
	// round trip (3, 15, 16 with the default cap). Pages past the first
	// three can only be requested once an answer is in (the end of the
	// view is unknown until then), so the second round trip is the one
	// that must keep the consumer busy: with the window tripling (3, 9)
	// it ran dry a third round trip in, some 10-20ms of idle reading
	// per export at 100ms a page.
	slowStartGrowth = 4
	// probesPerRound is the number of one-row probes sent at once while
	// bisecting the end of a view.
	probesPerRound = 3
	// maxPause caps a pause asked for with Retry-After (the transport's
	// default cap).
	maxPause = 60 * time.Second
)

// pageFetcher requests page number of size rows.
type pageFetcher func(ctx context.Context, number, size int64, h pageHooks) (*Page, error)

// prefetcher fetches the pages of a view ahead of the pager, which asks
// for pages 0, 1, 2, ... in order (get).
//
// Requests in flight (sent and not yet answered) are bounded by a
// congestion window: it starts at initialWindow, grows for every answer
// whose latency stays flat (within 2× the lowest seen, plus 10ms: the
// latency includes this process's own scheduling delays) up to
// the cap (by slowStartGrowth until it is first halved, then by about one
// a round trip), halves on a 429 or 503 (once per round trip), and a
// Retry-After pauses every request not yet sent. Answers wait unread at
// their gate while they are more than decodedPages ahead of the
// consumer; pages are requested at most limit+decodedPages ahead of it.
//
// A page is requested only when it is known to hold rows (an earlier page
// did not say endOfList, or a probe found its first row), or at most
// speculative pages past that. To learn how far the view goes before the
// window gets there, one-row probes ask for the first row of a page ahead:
// galloping (the page twice as far) until one finds nothing, then
// bisecting. Once the last page is known, the requests past it are
// cancelled.
type prefetcher struct {
	ctx    context.Context
	cancel context.CancelFunc
	fetch  pageFetcher
	size   int64
	limit  int
	wg     sync.WaitGroup

	mu       sync.Mutex
	cur      int64         // page the consumer waits for or reads
	advance  chan struct{} // closed when cur moves
	next     int64         // next page to request
	pending  map[int64]*slot
	inflight int // page requests sent and not yet answered

	lo     int64 // highest page known to hold rows
	hi     int64 // lowest page known to hold none (math.MaxInt64: unknown)
	last   int64 // the last page, once known (-1: unknown)
	probes map[int64]context.CancelFunc

	cwnd, ssthresh float64
	peak           float64 // the largest cwnd so far (otel.go)
	minLatency     time.Duration
	lastCut        time.Time
	pauseUntil     time.Time
}

type slot struct {
	ch     chan fetched // buffered: never blocks the fetching goroutine
	cancel context.CancelFunc
}

type fetched struct {
	page *Page
	err  error
}

func newPrefetcher(ctx context.Context, limit int, size int64, fetch pageFetcher) *prefetcher {
	ctx, cancel := context.WithCancel(ctx)
	return &prefetcher{ctx: ctx, cancel: cancel, fetch: fetch, size: size, limit: limit,
		advance: make(chan struct{}), pending: map[int64]*slot{}, probes: map[int64]context.CancelFunc{},
		hi: math.MaxInt64, last: -1,
		cwnd: float64(min(initialWindow, limit)), ssthresh: float64(limit)}
}

// get returns page n. The pager calls it for 0, 1, 2, ... in order, from
// one goroutine.
func (p *prefetcher) get(ctx context.Context, n int64) (*Page, error) {
	p.mu.Lock()
	p.cur = n
	close(p.advance)
	p.advance = make(chan struct{})
	p.pump()
	s := p.pending[n]
	if s == nil {
		// Cancelled as past the last page, yet asked for: the last page
		// did not say endOfList.
		s = p.issue(n)
	}
	delete(p.pending, n)
	p.mu.Unlock()
	select {
	case f := <-s.ch:
		return f.page, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// pump sends the page requests and probes the window allows. p.mu is held.
func (p *prefetcher) pump() {
	if p.next < p.cur {
		p.next = p.cur
	}
	for p.next == p.cur && p.pending[p.cur] == nil ||
		p.inflight < int(p.cwnd) && p.next <= p.maxPage() && p.next < p.cur+int64(p.limit)+decodedPages {
		p.issue(p.next)
		p.next++
	}
	p.probe()
}

// maxPage is the highest page that may be requested now.
func (p *prefetcher) maxPage() int64 {
	if p.last >= 0 {
		return p.last
	}
	return min(p.hi-1, p.lo+speculative)
}

// issue requests page n. p.mu is held.
func (p *prefetcher) issue(n int64) *slot {
	ctx, cancel := context.WithCancel(p.ctx)
	s := &slot{ch: make(chan fetched, 1), cancel: cancel}
	p.pending[n] = s
	p.inflight++
	answered := false // p.mu
	done := func() {
		if !answered {
			answered = true
			p.inflight--
			p.pump()
		}
	}
	p.wg.Go(func() {
		defer cancel()
		pg, err := p.request(ctx, n, p.size, func() error {
			// The answer is in: the window may send the next request
			// while this one waits to be read.
			p.mu.Lock()
			done()
			p.mu.Unlock()
			return p.gate(n)
		})
		p.mu.Lock()
		done()
		if err == nil {
			switch {
			case len(pg.Rows) == 0:
				p.hi = min(p.hi, n)
				p.found(n)
			case pg.EndOfList:
				p.lo, p.hi = max(p.lo, n), min(p.hi, n+1)
				p.found(n)
			default:
				p.learn(n+1, math.MaxInt64)
			}
		}
		p.pump()
		p.mu.Unlock()
		s.ch <- fetched{pg, err}
	})
	return s
}

// probe sends one-row probes for the first row of pages ahead, one round
// at a time: one probe while the known pages are well ahead of the
// window, probesPerRound when the window is about to need more. p.mu is
// held.
func (p *prefetcher) probe() {
	if len(p.probes) > 0 || p.last >= 0 || p.hi <= p.lo+speculative+1 {
		// One round at a time, and none once the pages that may be
		// requested anyway reach the end.
		return
	}
	w := int64(p.cwnd)
	var targets []int64
	if p.hi == math.MaxInt64 {
		targets = append(targets, max(2*p.lo, p.next+4*w))
	} else {
		k := int64(1)
		if p.lo < p.next+2*w+speculative {
			k = probesPerRound
		}
		for i := int64(1); i <= k; i++ {
			t := p.lo + (p.hi-p.lo)*i/(k+1)
			if t > p.lo && t < p.hi && (len(targets) == 0 || t > targets[len(targets)-1]) {
				targets = append(targets, t)
			}
		}
	}
	for _, t := range targets {
		if t > math.MaxInt64/p.size {
			continue
		}
		ctx, cancel := context.WithCancel(p.ctx)
		p.probes[t] = cancel
		p.wg.Go(func() {
			defer cancel()
			pg, err := p.request(ctx, t*p.size, 1, nil)
			p.mu.Lock()
			defer p.mu.Unlock()
			delete(p.probes, t)
			if err != nil {
				// A failed probe only leaves the end unknown a while
				// longer; the page requests still find it.
				return
			}
			switch {
			case len(pg.Rows) == 0:
				p.learn(p.lo, t)
			case pg.EndOfList:
				// The page's first row is the view's last.
				p.learn(t, t+1)
			default:
				p.learn(t, p.hi)
			}
			p.pump()
		})
	}
}

// learn records that page lo holds rows and page hi none; when they are
// next to each other, lo is the last page. p.mu is held.
func (p *prefetcher) learn(lo, hi int64) {
	p.lo = max(p.lo, lo)
	p.hi = min(p.hi, hi)
	if p.hi <= p.lo+1 {
		p.found(p.lo)
	}
}

// found records that page n is the last and cancels the requests past
// it. p.mu is held.
func (p *prefetcher) found(n int64) {
	if p.last >= 0 && p.last <= n {
		return
	}
	p.last = n
	for m, s := range p.pending {
		if m > n {
			s.cancel()
			delete(p.pending, m)
		}
	}
	for t, cancel := range p.probes {
		cancel()
		delete(p.probes, t)
	}
}

// request waits out any pause, then sends one page request, feeding the
// congestion window with its latency and its 429s and 503s.
func (p *prefetcher) request(ctx context.Context, number, size int64, gate func() error) (*Page, error) {
	if err := p.paused(ctx); err != nil {
		return nil, err
	}
	start := time.Now()
	h := pageHooks{observe: p.observe}
	h.gate = func() error {
		p.sample(time.Since(start), size == p.size)
		if gate != nil {
			return gate()
		}
		return nil
	}
	return p.fetch(ctx, number, size, h)
}

// paused waits until no Retry-After pause is in force.
func (p *prefetcher) paused(ctx context.Context) error {
	for {
		p.mu.Lock()
		d := time.Until(p.pauseUntil)
		p.mu.Unlock()
		if d <= 0 {
			return nil
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// sample feeds the latency of an answer (until its headers) to the
// window. Only full page requests grow it.
func (p *prefetcher) sample(latency time.Duration, page bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.minLatency == 0 || latency < p.minLatency {
		p.minLatency = latency
	}
	if !page || latency > 2*p.minLatency+10*time.Millisecond {
		return
	}
	if p.cwnd < p.ssthresh {
		p.cwnd += slowStartGrowth
	} else {
		p.cwnd += 1 / p.cwnd
	}
	p.cwnd = min(p.cwnd, float64(p.limit))
	p.peak = max(p.peak, p.cwnd)
}

// observe sees every answer of every attempt: a 429 or 503 halves the
// window (once per round trip) and its Retry-After pauses the export.
func (p *prefetcher) observe(resp *http.Response) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return
	}
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.lastCut) > max(p.minLatency, 10*time.Millisecond) {
		p.lastCut = now
		p.ssthresh = max(p.cwnd/2, 1)
		p.cwnd = p.ssthresh
	}
	if d, ok := core.RetryAfter(resp.Header); ok {
		if until := now.Add(min(d, maxPause)); until.After(p.pauseUntil) {
			p.pauseUntil = until
		}
	}
}

// gate blocks the decoding of page m until m is less than decodedPages
// ahead of the consumer, or the export ends.
func (p *prefetcher) gate(m int64) error {
	for {
		p.mu.Lock()
		ok, ch := m < p.cur+decodedPages, p.advance
		p.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-p.ctx.Done():
			return p.ctx.Err()
		}
	}
}

// close cancels the requests in flight and waits for their goroutines.
func (p *prefetcher) close() {
	p.cancel()
	p.wg.Wait()
}
