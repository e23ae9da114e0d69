package reports

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"
)

// simView is a view of pages pages of size rows, served by a fetch with
// the prefetcher's signature, that counts what it is asked for.
type simView struct {
	pages, size int64
	latency     time.Duration

	mu                    sync.Mutex
	pageReqs, pastEnd     int // page requests, and those past the last page
	probeReqs, probesPast int // one-row probes, and those past the last row
	inflight, maxInflight int
	decoded, consumed     int64 // pages decoded so far, pages the consumer is done with
	atGate, maxHeld       int64
	answer                func(n int64) *http.Response // when set, may answer a page with this first
}

func (v *simView) fetch(ctx context.Context, number, size int64, h pageHooks) (*Page, error) {
	v.mu.Lock()
	v.inflight++
	v.maxInflight = max(v.maxInflight, v.inflight)
	probe := size == 1
	if probe {
		v.probeReqs++
		if number >= v.pages*v.size {
			v.probesPast++
		}
	} else {
		v.pageReqs++
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
	if v.answer != nil && !probe {
		if resp := v.answer(number); resp != nil {
			h.observe(resp)
		}
	}
	select {
	case <-time.After(v.latency):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if probe {
		pg := &Page{Number: number, EndOfList: number >= v.pages*v.size-1}
		if number < v.pages*v.size {
			pg.Rows = []Row{NewRow([]string{"n"}, []any{number})}
		}
		return pg, nil
	}
	v.mu.Lock()
	v.atGate++
	v.mu.Unlock()
	err := h.gate()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.atGate--
	if err != nil {
		return nil, err
	}
	n := number
	pg := &Page{Number: n, EndOfList: n >= v.pages-1}
	if n < v.pages {
		pg.Rows = []Row{NewRow([]string{"n"}, []any{n})}
	}
	v.decoded++
	v.maxHeld = max(v.maxHeld, v.decoded-v.consumed)
	return pg, nil
}

// export reads every page through a prefetcher, as ExportView does, and
// checks they come in order. With settle, before it reads a page the
// consumer waits until every page request in flight is decoded or held
// at its gate, so that fetches run ahead as far as the prefetcher lets
// them.
func (v *simView) export(t *testing.T, limit int, settle bool) {
	t.Helper()
	p := newPrefetcher(context.Background(), limit, v.size, v.fetch)
	defer p.close()
	for n := int64(0); ; n++ {
		pg, err := p.get(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		if pg.Number != n {
			t.Fatalf("got page %d, want %d", pg.Number, n)
		}
		for settle {
			p.mu.Lock()
			inflight := int64(p.inflight)
			p.mu.Unlock()
			v.mu.Lock()
			settled := v.atGate >= inflight
			v.mu.Unlock()
			if settled {
				break
			}
			runtime.Gosched()
		}
		v.mu.Lock()
		v.consumed++
		v.mu.Unlock()
		if pg.EndOfList || len(pg.Rows) == 0 {
			break
		}
	}
	p.close()
	if want := max(v.pages, 1); v.consumed != want {
		t.Errorf("read %d pages, want %d", v.consumed, want)
	}
}

// TestPrefetcherBoundsDecodedPages: however many pages a view has and
// however many requests are in flight, an export holds at most
// decodedPages pages decoded at once (the one being read and those ahead
// of it). With pages of at most 10,000 rows this bounds an export's memory
// whatever the report's size; BenchmarkExport measures the heap itself.
// Without the gate the test sees a whole window of decoded pages.
func TestPrefetcherBoundsDecodedPages(t *testing.T) {
	for _, tc := range []struct {
		pages int64
		limit int
	}{{10, 1}, {10, 16}, {200, 8}, {200, 64}, {1000, 16}} {
		t.Run(fmt.Sprintf("%d pages, %d in flight", tc.pages, tc.limit), func(t *testing.T) {
			v := &simView{pages: tc.pages, size: 100}
			v.export(t, tc.limit, true)
			if v.maxHeld > decodedPages {
				t.Errorf("%d pages held decoded at once, want at most %d", v.maxHeld, decodedPages)
			}
			// At most limit requests await their answers, and answers wait
			// unread at their gate only within decodedPages of the consumer.
			if v.maxInflight > tc.limit+decodedPages+probesPerRound {
				t.Errorf("%d requests open at once, cap %d (+%d at the gate, +%d probes)", v.maxInflight, tc.limit, decodedPages, probesPerRound)
			}
		})
	}
}

// TestPrefetcherWastesAtMostTwoPages: whatever the view's length, the
// export sends at most 2 page requests past its last page (an empty view
// has one page, page 0, which says endOfList).
func TestPrefetcherWastesAtMostTwoPages(t *testing.T) {
	for _, pages := range []int64{0, 1, 2, 3, 5, 10, 17, 64, 100, 257} {
		for _, limit := range []int{1, 4, 16, 64} {
			t.Run(fmt.Sprintf("%d pages, cap %d", pages, limit), func(t *testing.T) {
				v := &simView{pages: pages, size: 1000, latency: time.Millisecond}
				v.export(t, limit, false)
				if v.pastEnd > speculative {
					t.Errorf("%d page requests past the last page, want at most %d", v.pastEnd, speculative)
				}
				if want := int(max(pages, 1)); v.pageReqs-v.pastEnd != want {
					t.Errorf("%d page requests before the end, want %d (one per page)", v.pageReqs-v.pastEnd, want)
				}
				t.Logf("%d page requests (%d past the end), %d probes (%d past the end)", v.pageReqs, v.pastEnd, v.probeReqs, v.probesPast)
			})
		}
	}
}

// TestPrefetcherWindowAdapts: the window starts at initialWindow, grows to
// the cap while latency is flat, and a 429 halves it.
func TestPrefetcherWindowAdapts(t *testing.T) {
	v := &simView{pages: 400, size: 1000, latency: 2 * time.Millisecond}
	p := newPrefetcher(context.Background(), 16, v.size, v.fetch)
	defer p.close()
	window := func() float64 {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.cwnd
	}
	if w := window(); w != initialWindow {
		t.Fatalf("window %v at first, want %d", w, initialWindow)
	}
	var n int64
	for ; n < 100; n++ {
		if _, err := p.get(context.Background(), n); err != nil {
			t.Fatal(err)
		}
	}
	// Stop the fetches still running ahead, whose answers would grow
	// the window while the test reads it.
	p.close()
	if w := window(); w != 16 {
		t.Fatalf("window %v after 100 pages of flat latency, want the cap 16", w)
	}
	p.observe(&http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}})
	if w := window(); w != 8 {
		t.Fatalf("window %v after a 429, want 8", w)
	}
	p.observe(&http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}})
	if w := window(); w != 8 {
		t.Fatalf("window %v after a second 503 in the same round trip, want it halved once: 8", w)
	}
}

// TestPrefetcherRetryAfterPausesEveryRequest: a 429 with Retry-After on
// one page holds back every request the export has not sent yet.
func TestPrefetcherRetryAfterPausesEveryRequest(t *testing.T) {
	v := &simView{pages: 40, size: 1000, latency: time.Millisecond}
	var once sync.Once
	var pausedAt time.Time
	v.answer = func(n int64) *http.Response {
		var resp *http.Response
		if n == 3 {
			once.Do(func() {
				pausedAt = time.Now()
				resp = &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}}
			})
		}
		return resp
	}
	var sentAfter []time.Time
	inner := v.fetch
	p := newPrefetcher(context.Background(), 16, v.size, func(ctx context.Context, number, size int64, h pageHooks) (*Page, error) {
		v.mu.Lock()
		if !pausedAt.IsZero() {
			sentAfter = append(sentAfter, time.Now())
		}
		v.mu.Unlock()
		return inner(ctx, number, size, h)
	})
	defer p.close()
	for n := int64(0); n < 40; n++ {
		if _, err := p.get(context.Background(), n); err != nil {
			t.Fatal(err)
		}
	}
	if len(sentAfter) == 0 {
		t.Fatal("no request after the 429")
	}
	for _, at := range sentAfter {
		// The fetch of page 3 itself reports the 429 before it waits for
		// its answer; the requests already past their pause check then
		// go out at once, every later one waits out the second.
		if d := at.Sub(pausedAt); d > 50*time.Millisecond && d < 900*time.Millisecond {
			t.Fatalf("a request went out %v after a Retry-After of 1s", d)
		}
	}
	if last := sentAfter[len(sentAfter)-1]; last.Sub(pausedAt) < 900*time.Millisecond {
		t.Fatalf("the export went on without pausing")
	}
}
