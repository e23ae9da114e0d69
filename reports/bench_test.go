package reports_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
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
	{ID: "id", Name: "Deal ID", Type: "NUMBER"}, {ID: "account", Name: "Account"},
	{ID: "region", Name: "Region"}, {ID: "stage", Name: "Stage"},
	{ID: "amount", Name: "Amount", Type: "CURRENCY"}, {ID: "registered", Name: "Registered", Type: "DATE"},
	{ID: "active", Name: "Active", Type: "BOOLEAN"}, {ID: "owner", Name: "Owner"},
	{ID: "score", Name: "Score", Type: "NUMBER"}, {ID: "note", Name: "Note"},
}

func benchRow(i int) []any {
	var note any
	if i%3 == 0 {
		note = "call back next week"
	}
	return []any{1_000_000 + i, "Account " + strconv.Itoa(i%5000), regions[i%4], stages[(i/7)%5],
		float64(1000+(i*7919)%99000) + 0.25, days[i%365], i%5 != 0, owners[i%100], i % 100, note}
}

// benchEnv is a fake behind a pageCounter (export_count_test.go), with a
// client, a token for the hand-written loops, and one prepared view per
// report size.
type benchEnv struct {
	f     *fake.Fake
	pc    *pageCounter
	url   string
	c     *partner.Client
	token string
	views map[int]int64 // rows → view
	ids   map[int]int64 // rows → report
}

var (
	benchOnce sync.Once
	benchE    *benchEnv
)

// env builds the fake and the client once per run. The server is left
// running until the process exits.
func env(b *testing.B) *benchEnv {
	benchOnce.Do(func() {
		f := fake.New()
		pc := &pageCounter{h: f}
		ts := httptest.NewServer(pc)
		c, err := partner.New(partner.WithBaseURL(ts.URL), partner.WithInsecureHTTP(),
			partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret))
		if err != nil {
			panic(err)
		}
		tok, err := c.OAuth.Token(context.Background())
		if err != nil {
			panic(err)
		}
		benchE = &benchEnv{f: f, pc: pc, url: ts.URL, c: c, token: tok.AccessToken, views: map[int]int64{}, ids: map[int]int64{}}
	})
	return benchE
}

// report returns a report of rows rows, and a prepared view of it.
func (e *benchEnv) report(b *testing.B, rows int) (reportID, viewID int64) {
	if v, ok := e.views[rows]; ok {
		return e.ids[rows], v
	}
	e.latency(0)
	id := e.f.AddReport(fake.Report{Name: fmt.Sprintf("bench %d", rows), Columns: benchCols, RowCount: rows, Generate: benchRow})
	ctx := context.Background()
	viewID, err := e.c.Reports.PrepareExport(ctx, id)
	if err == nil {
		_, err = e.c.Reports.WaitView(ctx, viewID, reports.WaitOptions{})
	}
	if err != nil {
		b.Fatal(err)
	}
	e.ids[rows], e.views[rows] = id, viewID
	return id, viewID
}

func (e *benchEnv) latency(d time.Duration) {
	e.f.ClearFaults()
	if d > 0 {
		e.f.InjectFault(fake.Fault{Method: "POST", Path: "/report/v1/view/*/data", Latency: d})
	}
}

// requests reports the view data requests counted at the server since
// the last reset, per export: all of them (reqs/op) against the bound
// pages + ceil(log2 pages) + 2 (bound/op), whole pages, those past the
// last page, and one-row probes (all, and past the last row).
func (e *benchEnv) requests(b *testing.B, rows int64, exports int) {
	pages, past, probes, probesPast := e.pc.counts(rows, benchPageSize)
	n := float64(exports)
	b.ReportMetric(float64(e.pc.total())/n, "reqs/op")
	b.ReportMetric(float64(requestBound(max(int(rows+benchPageSize-1)/benchPageSize, 1))), "bound/op")
	b.ReportMetric(float64(pages)/n, "page-reqs/op")
	b.ReportMetric(float64(past)/n, "pages-past-end/op")
	b.ReportMetric(float64(probes)/n, "probes/op")
	b.ReportMetric(float64(probesPast)/n, "probes-past-end/op")
}

func (c *pageCounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs = nil
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

// handPage is what a hand-written loop decodes a page into.
type handPage struct {
	EndOfList bool             `json:"endOfList"`
	Results   []map[string]any `json:"results"`
}

// handLoop reads every page of a view the way one would without the SDK:
// net/http and encoding/json, one page after the other, rows into
// map[string]any. It returns the number of rows.
func (e *benchEnv) handLoop(b *testing.B, viewID int64) int {
	rows := 0
	for n := 0; ; n++ {
		req, _ := http.NewRequest("POST", fmt.Sprintf("%s/report/v1/view/%d/data", e.url, viewID),
			strings.NewReader(fmt.Sprintf(`{"page":{"number":%d,"size":%d}}`, n, benchPageSize)))
		req.Header.Set("Authorization", "Bearer "+e.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var p handPage
		err = json.NewDecoder(resp.Body).Decode(&p)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("page %d: %d %v", n, resp.StatusCode, err)
		}
		rows += len(p.Results)
		if p.EndOfList || len(p.Results) == 0 {
			return rows
		}
	}
}

// handExport is the hand-written whole export: prepare a view, read its
// status every 50ms until SUCCESS, then handLoop.
func (e *benchEnv) handExport(b *testing.B, reportID int64) int {
	call := func(method, path string, out any) {
		req, _ := http.NewRequest(method, e.url+path, strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer "+e.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			b.Fatal(err)
		}
	}
	var prep struct {
		ViewID int64 `json:"viewId"`
	}
	call("POST", fmt.Sprintf("/report/v1/view/%d/prepare_export", reportID), &prep)
	for {
		var st struct {
			Status string `json:"viewStatus"`
		}
		call("GET", fmt.Sprintf("/report/v1/view/%d/status", prep.ViewID), &st)
		if st.Status == "SUCCESS" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return e.handLoop(b, prep.ViewID)
}

func rowsPerSec(b *testing.B, rows int) {
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkExport reads a view of -reports.rows rows (default 1M, 100
// pages of 10,000 rows) at 100ms and 0ms per page: Export with its
// defaults and with a cap of 8, against the hand-written loop (handLoop),
// and the same page bodies decoded from memory by the SDK's decoder and
// by encoding/json into map[string]any. Page requests are counted at the
// server.
func BenchmarkExport(b *testing.B) {
	e := env(b)
	ctx := context.Background()
	rows := *benchRows
	_, viewID := e.report(b, rows)
	for _, lat := range []time.Duration{100 * time.Millisecond, 0} {
		for _, conc := range []int{0, 8} {
			b.Run(fmt.Sprintf("latency=%s/Export-concurrency=%d", lat, conc), func(b *testing.B) {
				e.latency(lat)
				e.pc.reset()
				for b.Loop() {
					drain(b, e.c.Reports.ExportView(ctx, viewID, reports.ExportOptions{Concurrency: conc}), rows)
				}
				rowsPerSec(b, rows)
				e.requests(b, int64(rows), b.N)
			})
		}
		b.Run(fmt.Sprintf("latency=%s/hand-written", lat), func(b *testing.B) {
			e.latency(lat)
			for b.Loop() {
				if n := e.handLoop(b, viewID); n != rows {
					b.Fatalf("%d rows", n)
				}
			}
			rowsPerSec(b, rows)
		})
	}
	e.latency(0)

	bodies := fetchBodies(b, e, viewID)
	// The limit of decoding: the same page bodies from memory, one after
	// the other, with no network and no server.
	b.Run("decode-from-memory/sdk", func(b *testing.B) {
		for b.Loop() {
			n := 0
			for _, body := range bodies {
				var p reports.Page
				if _, err := reports.DecodePage(bytes.NewReader(body), int64(len(body)), 10000, &p); err != nil {
					b.Fatal(err)
				}
				n += len(p.Rows)
			}
			if n != rows {
				b.Fatalf("decoded %d rows", n)
			}
		}
		rowsPerSec(b, rows)
	})
	b.Run("decode-from-memory/encoding-json", func(b *testing.B) {
		for b.Loop() {
			n := 0
			for _, body := range bodies {
				var p handPage
				if err := json.Unmarshal(body, &p); err != nil {
					b.Fatal(err)
				}
				n += len(p.Results)
			}
			if n != rows {
				b.Fatalf("decoded %d rows", n)
			}
		}
		rowsPerSec(b, rows)
	})
}

// BenchmarkExportFloor compares, interleaved in every iteration so that
// a noisy machine slows all alike, Export at 100ms per page with what it
// cannot beat. It reports the ratio to the largest of three bounds
// (export/floor):
//
//   - the same export at 0ms per page (the machine's decoding and
//     serving), plus one round trip for the first page;
//   - two round trips, plus what the 0ms export took after it had yielded
//     its first speculative+1 pages: with at most 2 page requests wasted
//     past the end of a view whose length nobody knows, an export may
//     request only pages 0 to 2 before the first answer, so page 3 comes
//     two round trips after the start at the earliest, and the pages from
//     there on take at least as long to read as in the 0ms export;
//   - the latency of the pages at the full cap once the first answer is
//     in: (1 + ceil((pages-3)/16)) × 100ms.
//
// It also reports export/floor-1rt, the ratio to the first and the
// plain ceil(pages/16) × 100ms only (as if 16 pages could be requested
// before anything is known of the view).
func BenchmarkExportFloor(b *testing.B) {
	e := env(b)
	ctx := context.Background()
	rows := *benchRows
	_, viewID := e.report(b, rows)
	const rtt = 100 * time.Millisecond
	const known = 3 // pages 0 to speculative: the most an export may request before an answer
	pages := (rows + benchPageSize - 1) / benchPageSize
	conc := reports.DefaultExportConcurrency
	latencyFloor := time.Duration(1+(pages-known+conc-1)/conc) * rtt
	latencyFloor1 := time.Duration((pages+conc-1)/conc) * rtt
	var slow, fast, fastTail time.Duration
	n := 0
	for b.Loop() {
		for i := range 2 {
			lat := []time.Duration{rtt, 0}[(i+n)%2]
			e.latency(lat)
			var head time.Time
			opts := reports.ExportOptions{Progress: func(r int64) {
				if head.IsZero() && r >= known*benchPageSize {
					head = time.Now()
				}
			}}
			start := time.Now()
			drain(b, e.c.Reports.ExportView(ctx, viewID, opts), rows)
			if lat > 0 {
				slow += time.Since(start)
			} else {
				fast += time.Since(start)
				fastTail += time.Since(head)
			}
		}
		n++
	}
	e.latency(0)
	avg := func(d time.Duration) time.Duration { return d / time.Duration(n) }
	floor1 := max(avg(fast)+rtt, latencyFloor1)
	floor := max(avg(fast)+rtt, 2*rtt+avg(fastTail), latencyFloor)
	b.ReportMetric(avg(slow).Seconds(), "export-100ms-s")
	b.ReportMetric(avg(fast).Seconds(), "export-0ms-s")
	b.ReportMetric(floor.Seconds(), "floor-s")
	b.ReportMetric(float64(avg(slow))/float64(floor), "export/floor")
	b.ReportMetric(float64(avg(slow))/float64(floor1), "export/floor-1rt")
}

// BenchmarkExportSmall is a whole export of a 10-page report (100,000
// rows) at 100ms per page, prepare and wait included, through Export and
// through the hand-written equivalent (handExport). The fake's view takes
// 250ms to be ready.
func BenchmarkExportSmall(b *testing.B) {
	e := env(b)
	ctx := context.Background()
	const rows = 10 * benchPageSize
	reportID, _ := e.report(b, rows)
	e.latency(100 * time.Millisecond)
	defer e.latency(0)
	b.Run("Export", func(b *testing.B) {
		e.pc.reset()
		for b.Loop() {
			drain(b, e.c.Reports.Export(ctx, reportID, reports.ExportOptions{}), rows)
		}
		e.requests(b, rows, b.N)
	})
	b.Run("hand-written", func(b *testing.B) {
		for b.Loop() {
			if n := e.handExport(b, reportID); n != rows {
				b.Fatalf("%d rows", n)
			}
		}
	})
}

// fetchBodies reads every page of the view as raw bytes, with a plain
// net/http loop.
func fetchBodies(b *testing.B, e *benchEnv, viewID int64) [][]byte {
	var bodies [][]byte
	for n := 0; ; n++ {
		req, _ := http.NewRequest("POST", fmt.Sprintf("%s/report/v1/view/%d/data", e.url, viewID),
			bytes.NewReader(fmt.Appendf(nil, `{"page":{"number":%d,"size":%d}}`, n, benchPageSize)))
		req.Header.Set("Authorization", "Bearer "+e.token)
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

// BenchmarkExportLatency reads views of 3 to 300 pages of 100 rows at
// 100ms per page: pages this small cost next to nothing to encode and
// decode, so that the figures show the export's round trips even on a
// loaded machine. round-trips/op is the time of an export over 100ms;
// floor-rt/op the round trips of an export that knew the view's length
// and honoured the waste bound (see BenchmarkExportFloor): the first
// answer, then 16 pages a round trip, 1 + ceil((pages-3)/16); reqs/op
// all the view data requests, against bound/op.
func BenchmarkExportLatency(b *testing.B) {
	e := env(b)
	ctx := context.Background()
	const size = 100
	for _, pages := range []int{3, 10, 30, 100, 300} {
		rows := pages * size
		_, viewID := e.report(b, rows)
		b.Run(fmt.Sprintf("pages=%d", pages), func(b *testing.B) {
			e.latency(100 * time.Millisecond)
			defer e.latency(0)
			e.pc.reset()
			start := time.Now()
			for b.Loop() {
				drain(b, e.c.Reports.ExportView(ctx, viewID, reports.ExportOptions{PageSize: size}), rows)
			}
			per := time.Since(start) / time.Duration(b.N)
			b.ReportMetric(per.Seconds()/0.1, "round-trips/op")
			b.ReportMetric(float64(1+max(0, (pages-3+15)/16)), "floor-rt/op")
			b.ReportMetric(float64(e.pc.total())/float64(b.N), "reqs/op")
			b.ReportMetric(float64(requestBound(pages)), "bound/op")
		})
	}
}
