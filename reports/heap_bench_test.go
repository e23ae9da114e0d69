package reports_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/reports"
)

// heapFakeEnv, set in the environment of this test binary, makes it serve
// the fake for BenchmarkExportHeap instead of running tests (TestMain).
const heapFakeEnv = "REPORTS_HEAP_BENCH_FAKE"

// heapRows are the report sizes BenchmarkExportHeap exports.
var heapRows = []int{100_000, 300_000, 1_000_000}

func TestMain(m *testing.M) {
	if os.Getenv(heapFakeEnv) != "" {
		serveHeapFake()
		return
	}
	os.Exit(m.Run())
}

// heapFake is what the child process serving the fake tells its parent.
type heapFake struct {
	URL   string        `json:"url"`
	Views map[int]int64 `json:"views"` // rows → prepared view
}

// serveHeapFake serves the fake with a report of each of heapRows rows
// (benchRow, 10 columns) and a prepared view of each, 100ms added to
// every view data request, until its standard input closes. It writes
// where, and the views, as one JSON line.
func serveHeapFake() {
	srv := fake.NewServer()
	defer srv.Close()
	c, err := partner.New(partner.WithBaseURL(srv.URL), partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret))
	if err != nil {
		panic(err)
	}
	hf := heapFake{URL: srv.URL, Views: map[int]int64{}}
	ctx := context.Background()
	for _, rows := range heapRows {
		id := srv.AddReport(fake.Report{Name: fmt.Sprintf("bench %d", rows), Columns: benchCols, RowCount: rows, Generate: benchRow})
		viewID, err := c.Reports.PrepareExport(ctx, id)
		if err == nil {
			_, err = c.Reports.WaitView(ctx, viewID, reports.WaitOptions{})
		}
		if err != nil {
			panic(err)
		}
		hf.Views[rows] = viewID
	}
	srv.InjectFault(fake.Fault{Method: "POST", Path: "/report/v1/view/*/data", Latency: 100 * time.Millisecond})
	json.NewEncoder(os.Stdout).Encode(hf)
	io.Copy(io.Discard, os.Stdin)
}

var (
	heapOnce  sync.Once
	heapEnv   *benchEnv
	heapErr   error
	heapStdin io.WriteCloser
)

// childFake starts this test binary as the fake (serveHeapFake) and
// returns a client of it; the child exits with this process.
func childFake(b *testing.B) *benchEnv {
	heapOnce.Do(func() {
		cmd := exec.Command(os.Args[0])
		// Without GODEBUG: a gctrace of this benchmark is the client's.
		cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GODEBUG=") }), heapFakeEnv+"=1")
		cmd.Stderr = os.Stderr
		// Never closed: the child lives as long as this process.
		heapStdin, heapErr = cmd.StdinPipe()
		if heapErr != nil {
			return
		}
		stdout, err := cmd.StdoutPipe()
		if err == nil {
			err = cmd.Start()
		}
		var hf heapFake
		if err == nil {
			err = json.NewDecoder(bufio.NewReader(stdout)).Decode(&hf)
		}
		var c *partner.Client
		if err == nil {
			c, err = partner.New(partner.WithBaseURL(hf.URL), partner.WithInsecureHTTP(),
				partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret))
		}
		if err != nil {
			heapErr = err
			return
		}
		tok, err := c.OAuth.Token(context.Background())
		if err != nil {
			heapErr = err
			return
		}
		heapEnv = &benchEnv{url: hf.URL, c: c, token: tok.AccessToken, views: hf.Views}
	})
	if heapErr != nil {
		b.Fatal(heapErr)
	}
	return heapEnv
}

// BenchmarkExportHeap measures the heap of an export while it runs at
// full speed: ExportView with its defaults (rows counted, and every
// value of every row asked for), against the hand-written loop
// (handLoop, which decodes every value), and against ExportView with no
// memory budget to speak of (MaxMemory 1 TiB: every answer read as soon
// as it is in, as the export did before it had a budget), at 100k, 300k and 1M rows of 10
// columns, 10,000-row pages, 100ms per page. The fake runs in a child
// process, so that the heap is the client's alone. Each export starts
// after a collection; a goroutine reads /memory/classes/heap/objects:bytes
// (runtime/metrics: the bytes of heap objects, live or not yet swept)
// every 2ms while it runs. peak-MiB is the most it read above the value
// after the collection, over all the iterations; s/op is the time of one
// export.
func BenchmarkExportHeap(b *testing.B) {
	e := childFake(b)
	ctx := context.Background()
	for _, rows := range heapRows {
		viewID := e.views[rows]
		for _, way := range []struct {
			name string
			run  func() int
		}{
			{"Export", func() int { return count(b, e.c.Reports.ExportView(ctx, viewID, reports.ExportOptions{})) }},
			{"Export-values", func() int { return countValues(b, e.c.Reports.ExportView(ctx, viewID, reports.ExportOptions{})) }},
			{"Export-unbounded", func() int {
				return count(b, e.c.Reports.ExportView(ctx, viewID, reports.ExportOptions{MaxMemory: 1 << 40}))
			}},
			{"hand-written", func() int { return e.handLoop(b, viewID) }},
		} {
			b.Run("rows="+strconv.Itoa(rows)+"/"+way.name, func(b *testing.B) {
				var peak uint64
				for b.Loop() {
					b.StopTimer()
					runtime.GC()
					base := mocktest.HeapObjects()
					b.StartTimer()
					stop := mocktest.SampleHeap(2 * time.Millisecond)
					n := way.run()
					top := stop()
					if n != rows {
						b.Fatalf("read %d rows, want %d", n, rows)
					}
					if top > base {
						peak = max(peak, top-base)
					}
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
				rowsPerSec(b, rows)
			})
		}
	}
}

// count drains seq and returns its rows.
func count(b *testing.B, seq func(func(reports.Row, error) bool)) int {
	n := 0
	for _, err := range seq {
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	return n
}

// valueSink keeps countValues' values from being optimised away.
var valueSink any

// countValues drains seq, asking every row for each of its values (as
// the hand-written loop decodes them all), and returns its rows.
func countValues(b *testing.B, seq func(func(reports.Row, error) bool)) int {
	n := 0
	for r, err := range seq {
		if err != nil {
			b.Fatal(err)
		}
		for i := range r.Len() {
			valueSink = r.Value(i)
		}
		n++
	}
	return n
}
