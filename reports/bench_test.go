package reports_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/reports"
)

// The export benchmark reads a view of -reports.rows rows (default one
// million) of 10 columns from the fake over loopback, 10,000 rows per
// page. It only runs with -bench; see BENCHMARKS.md for the commands and
// figures.
var benchRows = flag.Int("reports.rows", 1_000_000, "rows of the report read by BenchmarkExport")

const benchPageSize = 10_000

var (
	regions = []string{"EMEA", "NA", "APAC", "LATAM"}
	stages  = []string{"prospecting", "qualification", "proposal", "negotiation", "closed"}
	days    = func() []string {
		out := make([]string, 365)
		for i := range out {
			out[i] = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i).Format(time.DateOnly)
		}
		return out
	}()
	owners = func() []string {
		out := make([]string, 100)
		for i := range out {
			out[i] = fmt.Sprintf("owner%02d@example.com", i)
		}
		return out
	}()
)

var benchCols = []fake.Column{
	{ID: "id", Name: "Deal ID", Type: fake.ColumnNumber}, {ID: "account", Name: "Account"},
	{ID: "region", Name: "Region"}, {ID: "stage", Name: "Stage"},
	{ID: "amount", Name: "Amount", Type: fake.ColumnCurrency}, {ID: "registered", Name: "Registered", Type: fake.ColumnDate},
	{ID: "active", Name: "Active", Type: fake.ColumnBoolean}, {ID: "owner", Name: "Owner"},
	{ID: "score", Name: "Score", Type: fake.ColumnNumber}, {ID: "note", Name: "Note"},
}

func benchRow(i int) []any {
	var note any
	if i%3 == 0 {
		note = "call back next week"
	}
	return []any{1_000_000 + i, "Account " + strconv.Itoa(i%5000), regions[i%4], stages[(i/7)%5],
		float64(1000+(i*7919)%99000) + 0.25, days[i%365], i%5 != 0, owners[i%100], i % 100, note}
}

type benchEnv struct {
	srv    *fake.Server
	c      *partner.Client
	viewID int64
	rows   int
}

var (
	benchOnce sync.Once
	benchE    *benchEnv
)

// env builds the fake, the report and one prepared view, once per run.
// The server is left running until the process exits.
func env(b *testing.B) *benchEnv {
	benchOnce.Do(func() {
		srv := fake.NewServer()
		c, err := partner.New(partner.WithBaseURL(srv.URL),
			partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret))
		if err != nil {
			panic(err)
		}
		id := srv.AddReport(fake.Report{Name: "bench", Columns: benchCols, RowCount: *benchRows, Generate: benchRow})
		ctx := context.Background()
		viewID, err := c.Reports.PrepareExport(ctx, id)
		if err == nil {
			_, err = c.Reports.WaitView(ctx, viewID, reports.WaitOptions{Interval: 20 * time.Millisecond})
		}
		if err != nil {
			panic(err)
		}
		benchE = &benchEnv{srv: srv, c: c, viewID: viewID, rows: *benchRows}
	})
	return benchE
}

func (e *benchEnv) latency(d time.Duration) {
	e.srv.ClearFaults()
	if d > 0 {
		e.srv.InjectFault(fake.Fault{Method: "POST", Path: "/report/v1/view/*/data", Latency: d})
	}
}

func drain(b *testing.B, seq func(func(reports.Row, error) bool), want int) {
	n := 0
	for _, err := range seq {
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	if n != want {
		b.Fatalf("read %d rows, want %d", n, want)
	}
}

func BenchmarkExport(b *testing.B) {
	e := env(b)
	ctx := context.Background()
	for _, lat := range []time.Duration{100 * time.Millisecond, 0} {
		b.Run(fmt.Sprintf("latency=%s/Export", lat), func(b *testing.B) {
			e.latency(lat)
			for b.Loop() {
				drain(b, e.c.Reports.ExportView(ctx, e.viewID, reports.ExportOptions{}), e.rows)
			}
			b.ReportMetric(float64(e.rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
		b.Run(fmt.Sprintf("latency=%s/Export-concurrency=8", lat), func(b *testing.B) {
			e.latency(lat)
			for b.Loop() {
				drain(b, e.c.Reports.ExportView(ctx, e.viewID, reports.ExportOptions{Concurrency: 8}), e.rows)
			}
			b.ReportMetric(float64(e.rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
		b.Run(fmt.Sprintf("latency=%s/naive", lat), func(b *testing.B) {
			e.latency(lat)
			for b.Loop() {
				drain(b, e.c.Reports.ViewData(ctx, e.viewID, reports.ViewDataParams{PageSize: benchPageSize}), e.rows)
			}
			b.ReportMetric(float64(e.rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
	e.latency(0)

	// The limit: decoding the same page bodies from memory, one after the
	// other, with no network and no server.
	b.Run("decode-from-memory", func(b *testing.B) {
		bodies := fetchBodies(b, e)
		b.ResetTimer()
		for b.Loop() {
			n := 0
			for _, body := range bodies {
				var p reports.Page
				if err := reports.DecodePage(bytes.NewReader(body), int64(len(body)), &p); err != nil {
					b.Fatal(err)
				}
				n += len(p.Rows)
			}
			if n != e.rows {
				b.Fatalf("decoded %d rows", n)
			}
		}
		b.ReportMetric(float64(e.rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})

	// Peak live heap while exporting, sampled by forcing collections in a
	// loop: the growth over the live heap before the export (which holds
	// the fake's copy of the report), for the default concurrency and 8.
	for _, conc := range []int{0, 8} {
		b.Run(fmt.Sprintf("latency=100ms/Export-concurrency=%d-peak-heap", conc), func(b *testing.B) {
			peakHeap(b, e, conc)
		})
	}
}

func peakHeap(b *testing.B, e *benchEnv, concurrency int) {
	ctx := context.Background()
	e.latency(100 * time.Millisecond)
	defer e.latency(0)
	// One export first, so that one-time allocations (connections, the
	// fake's lazily built state) are in the baseline.
	drain(b, e.c.Reports.ExportView(ctx, e.viewID, reports.ExportOptions{Concurrency: concurrency}), e.rows)
	{
		for b.Loop() {
			base := liveHeap()
			var peak atomic.Uint64
			done := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					select {
					case <-done:
						return
					case <-time.After(20 * time.Millisecond):
					}
					if live := liveHeap(); live > base && live-base > peak.Load() {
						peak.Store(live - base)
					}
				}
			})
			drain(b, e.c.Reports.ExportView(ctx, e.viewID, reports.ExportOptions{Concurrency: concurrency}), e.rows)
			close(done)
			wg.Wait()
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-MB")
		}
	}
}

// liveHeap collects garbage and returns the bytes of the objects the
// collection marked live; unlike HeapAlloc it leaves out what was
// allocated while it ran (the decoders do not stop meanwhile).
func liveHeap() uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// fetchBodies reads every page of the view as raw bytes, with a plain
// net/http loop.
func fetchBodies(b *testing.B, e *benchEnv) [][]byte {
	tok, err := e.c.OAuth.Token(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	var bodies [][]byte
	for n := 0; ; n++ {
		req, _ := http.NewRequest("POST", fmt.Sprintf("%s/report/v1/view/%d/data", e.srv.URL, e.viewID),
			bytes.NewReader([]byte(fmt.Sprintf(`{"page":{"number":%d,"size":%d}}`, n, benchPageSize))))
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("page %d: %d %v", n, resp.StatusCode, err)
		}
		bodies = append(bodies, body)
		var end struct{ EndOfList bool }
		json.Unmarshal(body, &end)
		if end.EndOfList {
			return bodies
		}
	}
}
