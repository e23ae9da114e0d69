package reports

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// TestPrefetcherBoundsDecodedPages: however many pages a view has and
// however many requests are in flight, an export holds at most
// decodedPages pages decoded at once (the one being read and those ahead
// of it). With pages of at most 10,000 rows this bounds an export's memory
// whatever the report's size; BenchmarkExport measures the heap itself.
//
// The fetches run ahead as far as the prefetcher lets them: before it
// reads a page, the consumer waits until every page requested so far is
// either decoded or held at its gate. Without the gate the test sees a
// whole window of decoded pages.
func TestPrefetcherBoundsDecodedPages(t *testing.T) {
	for _, tc := range []struct{ pages, window int64 }{
		{10, 1}, {10, 16}, {200, 8}, {200, 64}, {1000, 16},
	} {
		t.Run(fmt.Sprintf("%d pages, %d in flight", tc.pages, tc.window), func(t *testing.T) {
			var (
				mu                sync.Mutex
				decoded, consumed int64 // pages decoded so far, pages the consumer is done with
				atGate            int64 // fetches waiting at their gate
				maxHeld           int64 // most pages decoded and not yet done with
			)
			fetch := func(ctx context.Context, n int64, gate func() error) (*Page, error) {
				mu.Lock()
				atGate++
				mu.Unlock()
				err := gate()
				mu.Lock()
				defer mu.Unlock()
				atGate--
				if err != nil {
					return nil, err
				}
				decoded++
				maxHeld = max(maxHeld, decoded-consumed)
				return &Page{Number: n, Rows: []Row{NewRow([]string{"n"}, []any{n})}, EndOfList: n == tc.pages-1}, nil
			}
			p := newPrefetcher(context.Background(), int(tc.window), fetch)
			defer p.close()
			for n := int64(0); ; n++ {
				pg, err := p.get(context.Background(), n)
				if err != nil {
					t.Fatal(err)
				}
				if pg.Number != n {
					t.Fatalf("got page %d, want %d", pg.Number, n)
				}
				// Let every requested page that may run ahead do so.
				for {
					mu.Lock()
					settled := decoded+atGate >= min(p.next, tc.pages)
					mu.Unlock()
					if settled {
						break
					}
					runtime.Gosched()
				}
				mu.Lock()
				consumed++
				mu.Unlock()
				if pg.EndOfList {
					break
				}
			}
			p.close() // the fetches past the last page are done too
			if consumed != tc.pages {
				t.Errorf("read %d pages, want %d", consumed, tc.pages)
			}
			if maxHeld > decodedPages {
				t.Errorf("%d pages held decoded at once, want at most %d", maxHeld, decodedPages)
			}
		})
	}
}
