package fake

import (
	"archive/zip"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/fake/demo"
)

// The memory model of a shared fake (docs/reliability.md, "Shared fake"),
// measured: each hostile request the model guards against, and the ordinary
// large ones, is sent to an in-process fake while its heap is sampled.
// Each must be answered as documented (400/413, or accepted) with the
// heap growing by at most maxPeakGrowth during it and keeping at most
// maxRetained after a collection, above the state the request
// legitimately created (the objects a load writes, the file an upload
// keeps). The tests are not parallel, so that the heap they sample is
// theirs; BENCHMARKS.md records their figures (go test -run
// TestMemoryModel -v ./fake).

const (
	maxPeakGrowth = 64 << 20
	maxRetained   = 16 << 20
	// maxHeapSamples bounds the sampler goroutine; it stops earlier, when
	// the request ends.
	maxHeapSamples = 1 << 22
	// sampleEvery is the sampler goroutine's period, besides the samples
	// taken at every read of the body and write of the answer. The bytes
	// of heap objects only grow between two collections (sweeping is
	// what lowers them), and a collection's mark phase, at the top of
	// that growth, lasts longer than this, so a sample lands near every
	// peak; sampling without a pause took a core of its own, which the
	// package's other tests and the packages beside it need.
	sampleEvery = 100 * time.Microsecond
	// gcPercent is the GOGC of a measure: the heap it samples holds what
	// the fake keeps and what it let go since the last collection, which
	// GOGC=100 lets grow as large as the live heap (the objects of a
	// large load); a lower one collects sooner, so that the peak is
	// the fake's and not the collector's pacing.
	gcPercent = 50
)

// heapObjects is the bytes of heap objects, live or not yet swept.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// heapWatch samples the heap from a goroutine, and at every read of a
// request body and write of an answer (sampledBody, sink), from a base
// taken after a collection.
type heapWatch struct {
	gcPercent  int // to restore
	base       uint64
	peak       atomic.Uint64
	stop, done chan struct{}
}

func watchHeap() *heapWatch {
	runtime.GC()
	w := &heapWatch{base: heapObjects(), stop: make(chan struct{}), done: make(chan struct{}), gcPercent: debug.SetGCPercent(gcPercent)}
	w.peak.Store(w.base)
	go func() {
		defer close(w.done)
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for range maxHeapSamples {
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
			w.sample()
		}
	}()
	return w
}

func (w *heapWatch) sample() {
	v := heapObjects()
	for p := w.peak.Load(); v > p && !w.peak.CompareAndSwap(p, v); p = w.peak.Load() {
	}
}

// end stops the sampler and returns the peak growth and what is retained
// after a collection, both above the base.
func (w *heapWatch) end() (peak, retained int64) {
	w.sample()
	close(w.stop)
	<-w.done
	debug.SetGCPercent(w.gcPercent)
	runtime.GC()
	return int64(w.peak.Load() - w.base), int64(heapObjects()) - int64(w.base)
}

// sampledBody samples the heap at every read of a request body.
type sampledBody struct {
	r io.Reader
	w *heapWatch
}

func (b *sampledBody) Read(p []byte) (int, error) {
	b.w.sample()
	return b.r.Read(p)
}

// sink is a ResponseWriter that keeps the status and the first 64 KiB of
// the answer, counts the rest and samples the heap at every write.
type sink struct {
	header http.Header
	status int
	head   []byte
	n      int64
	w      *heapWatch
}

func (s *sink) Header() http.Header { return s.header }
func (s *sink) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}

func (s *sink) Write(p []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	s.w.sample()
	if room := 64<<10 - len(s.head); room > 0 {
		s.head = append(s.head, p[:min(room, len(p))]...)
	}
	s.n += int64(len(p))
	return len(p), nil
}

// memEnv sends requests to a fake as an http.Handler, with a token.
type memEnv struct {
	t     testing.TB
	f     *Fake
	token string
	w     *heapWatch // set while a measure runs
	// the last measure's figures
	peak, retained, legit int64
}

// skipUnderRace skips a heap measure under the race detector.
func skipUnderRace(t testing.TB) {
	if raceEnabled {
		t.Skip("measures the heap, which the race detector changes; runs without -race")
	}
}

// newMemEnv is a fake with the demo data; its caller closes it.
func newMemEnv(t testing.TB, opts ...Option) *memEnv {
	f := New(append([]Option{WithDemoData(), WithBulkDelay(0), WithViewDelay(0), WithRequestLogSize(16)}, opts...)...)
	return &memEnv{t: t, f: f, token: handlerToken(t, f)}
}

// send serves one request; body is read as the fake reads it.
func (e *memEnv) send(method, target, ctype string, body io.Reader) *sink {
	w := e.w
	if w == nil {
		w = &heapWatch{}
	}
	if body == nil {
		body = http.NoBody
	}
	req := httptest.NewRequest(method, target, &sampledBody{r: body, w: w})
	req.Header.Set("Authorization", "Bearer "+e.token)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	s := &sink{header: http.Header{}, w: w}
	e.f.ServeHTTP(s, req)
	return s
}

// measure runs fn while the heap is sampled, and checks the bounds above
// legit, the bytes of state fn legitimately creates.
func (e *memEnv) measure(name string, legit int64, fn func()) {
	e.t.Helper()
	e.w = watchHeap()
	fn()
	peak, retained := e.w.end()
	e.w = nil
	e.peak, e.retained, e.legit = peak, retained, legit
	e.t.Logf("%-40s peak +%6.1f MiB, retained %+6.1f MiB (legitimate state %.1f MiB)", name, mib(peak), mib(retained), mib(legit))
	if peak > legit+maxPeakGrowth {
		e.t.Errorf("%s: the heap grew by %.1f MiB during it, want at most %d MiB above the %.1f MiB it keeps", name, mib(peak), maxPeakGrowth>>20, mib(legit))
	}
	if retained > legit+maxRetained {
		e.t.Errorf("%s: %.1f MiB retained after it, want at most %d MiB above the %.1f MiB it keeps", name, mib(retained), maxRetained>>20, mib(legit))
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// want checks an answer's status and that its message says msg.
func (e *memEnv) want(s *sink, status int, msg string) {
	e.t.Helper()
	if s.status != status || !strings.Contains(string(s.head), msg) {
		e.t.Errorf("answer %d %.300s, want %d saying %q", s.status, s.head, status, msg)
	}
}

// csvRows is a CSV body of the demo opportunity integration made as it is
// read: a header, then n rows whose keys start at K-<from>, of fields
// columns each (key, name, then empty or failing ones).
type csvRows struct {
	n, i, from int
	noKey      bool   // rows without their key: each fails
	oneKey     bool   // every row of the key K-1
	name       string // the name of every row of the key K-1 ("Deal" when empty)
	extra      int    // columns after key and name
	buf        bytes.Buffer
}

func (c *csvRows) Read(p []byte) (int, error) {
	for c.buf.Len() < len(p) && c.i <= c.n {
		if c.i == 0 {
			c.buf.WriteString("sales_details.crm_opportunity_id,name")
			for j := range c.extra {
				fmt.Fprintf(&c.buf, ",x%d", j)
			}
		} else {
			switch {
			case c.oneKey:
				c.buf.WriteString("K-1")
			case !c.noKey:
				fmt.Fprintf(&c.buf, "K-%d", c.from+c.i)
			}
			if c.oneKey {
				c.buf.WriteString("," + cmp.Or(c.name, "Deal"))
			} else {
				fmt.Fprintf(&c.buf, ",Deal %d", c.i)
			}
			c.buf.WriteString(strings.Repeat(",v", c.extra))
		}
		c.buf.WriteByte('\n')
		c.i++
	}
	if c.buf.Len() == 0 {
		return 0, io.EOF
	}
	return c.buf.Read(p)
}

// oppObjectsCost is the heap the fake keeps for n opportunities as a
// load writes them: the legitimate state of such a load, measured on a
// fake of its own that adds them directly.
func oppObjectsCost(n, from int) int64 {
	f := New(WithDemoData())
	defer f.Close()
	f.lookupKey("opportunity", "sales_details.crm_opportunity_id", "") // the load's key index
	runtime.GC()
	base := heapObjects()
	for i := 1; i <= n; i++ {
		f.AddObject(Object{Type: "opportunity", IntegrationID: demo.OpportunityIntegration, Fields: map[string]any{
			"sales_details": map[string]any{"crm_opportunity_id": fmt.Sprintf("K-%d", from+i)},
			"name":          fmt.Sprintf("Deal %d", i),
		}})
	}
	runtime.GC()
	cost := int64(heapObjects()) - int64(base)
	runtime.KeepAlive(f)
	return cost
}

func loadPath(extra ...string) string { return "/bulk/v1/bulkload?" + opps(extra...).Encode() }

// paddedFile is a multipart/form-data body with the part "file"
// holding data, then n bytes of pad made as they are read.
func paddedFile(data []byte, pad int) (string, io.Reader) {
	var head bytes.Buffer
	boundary := "memory-test-boundary"
	fmt.Fprintf(&head, "--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.xlsx\"\r\n\r\n", boundary)
	tail := "\r\n--" + boundary + "--\r\n"
	return "multipart/form-data; boundary=" + boundary,
		io.MultiReader(&head, bytes.NewReader(data), &endless{b: 'z', n: pad}, strings.NewReader(tail))
}

// unmatchedEndTags is the workbook of the table's first row: cells closed
// by many unmatched </c>, a row by many </row>, a shared string by many
// </si>. An end tag without its start does nothing: the limits hold no
// matter how many there are, and the one row loads.
func unmatchedEndTags(t testing.TB, n int) []byte {
	sheet := repeat(sheetOpen+header+`<row r="2"><c r="A2" t="s"><v>0</v></c><c r="B2" t="inlineStr"><is><t>x</t></is></c>`,
		"</c></row>", n, sheetEnd)
	shared := repeat(xmlHead+`<sst xmlns="`+nsMain+`"><si><t>K-1</t></si>`, "</si>", n, "</sst>")
	sheet.name, shared.name = "xl/worksheets/sheet1.xml", "xl/sharedStrings.xml"
	return workbookZip(t, append(bookParts(), shared, sheet)...)
}

// manyEntries is a zip archive of n empty entries besides a workbook.
func manyEntries(t testing.TB, n int) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range n {
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("e%d", i), Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range append(bookParts(), sheetText(header)) {
		if p.name == "" {
			p.name = "xl/worksheets/sheet1.xml"
		}
		w, err := zw.Create(p.name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, p.text)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// memoryRows is the row count of the ordinary large load of the test;
// BenchmarkMemoryModelCSVLoad loads 100,000 (go test -bench
// MemoryModel -benchtime 1x ./fake), a few seconds on a shared machine.
const memoryRows = 10_000

// TestMemoryModelLoads sends the hostile loads the model guards against and an
// ordinary large one, each to a fake of its own.
func TestMemoryModelLoads(t *testing.T) {
	skipUnderRace(t)
	run := func(name string, fn func(t *testing.T, e *memEnv)) {
		t.Run(name, func(t *testing.T) {
			e := newMemEnv(t)
			defer e.f.Close()
			fn(t, e)
		})
	}
	run("unmatched end tags", func(t *testing.T, e *memEnv) {
		book := unmatchedEndTags(t, 1<<16)
		e.measure(fmt.Sprintf("XLSX of %d B, unmatched end tags", len(book)), 0, func() {
			ctype, body := paddedFile(book, 0)
			e.want(e.send("POST", loadPath("data_format", "XLSX"), ctype, body), 200, "execution_id")
		})
		if st := e.f.BulkExecutions()[0]; st.InputCount != 1 || st.SuccessCount != 1 {
			t.Errorf("execution %+v, want the one row loaded", st)
		}
	})
	run("CSV load", func(t *testing.T, e *memEnv) { loadCSVRows(t, e, memoryRows) })
	run("CSV load of one key", func(t *testing.T, e *memEnv) {
		// 100,000 valid rows of one object (1.3 MiB): a load that held its
		// rows until the body ended grew with them; the first is written,
		// the others skipped as they change nothing.
		e.measure("CSV load of 100,000 rows of one key", oppObjectsCost(1, 0), func() {
			e.want(e.send("POST", loadPath(), "text/csv", &csvRows{n: 100_000, oneKey: true}), 200, "execution_id")
		})
		if st := e.f.BulkExecutions()[0]; st.InputCount != 100_000 || st.SuccessCount+st.SkipCount != 100_000 {
			t.Errorf("execution %+v, want 100,000 rows applied", st)
		}
		// 50,000 rows of 110 bytes (5.2 MiB): past the spool's memory
		// (4 MiB), the body is checked into a temporary file and applied
		// from it. Long rows take the body past it in fewer rows, each of
		// which costs the fake a parse and a lookup.
		name := "Deal " + strings.Repeat("x", 100)
		e.measure("CSV load of 5.2 MiB, 50,000 rows of one key, on disk", 0, func() {
			e.want(e.send("POST", loadPath(), "text/csv", &csvRows{n: 50_000, oneKey: true, name: name}), 200, "execution_id")
		})
		if st := e.f.BulkExecutions()[1]; st.InputCount != 50_000 || e.f.bulk.spills.Load() != 1 {
			t.Errorf("execution %+v, %d spools on disk, want 50,000 rows applied from one", st, e.f.bulk.spills.Load())
		}
	})
	run("failing rows", func(t *testing.T, e *memEnv) {
		// 4 MiB of rows that fail, 1,000 columns each: the execution keeps
		// 1,000 error rows, each capped; then a status read of them all.
		var exID string
		e.measure("CSV load of 4 MiB of failing rows", 0, func() {
			s := e.send("POST", loadPath(), "text/csv", &csvRows{n: 2000, noKey: true, extra: 1000})
			e.want(s, 200, "execution_id")
			exID = between(string(s.head), `"execution_id":"`, `"`)
		})
		e.measure("status read of 1,000 error rows", 0, func() {
			q := url.Values{"execution_id": {exID}, "include_errors": {"true"}, "max_errors": {"1000"}}
			s := e.send("GET", "/bulk/v1/status/"+demo.OpportunityIntegration+"?"+q.Encode(), "", nil)
			e.want(s, 200, "Missing value of key field")
			t.Logf("status answer: %d bytes", s.n)
			if s.n > 4<<20 {
				t.Errorf("the status answer is %d bytes, want at most 4 MiB", s.n)
			}
		})
	})
	run("JSON record", func(t *testing.T, e *memEnv) {
		e.measure("JSON record of 192 MiB", 0, func() {
			body := io.MultiReader(strings.NewReader(`[{"sales_details":{"crm_opportunity_id":"J-1"},"name":"`), &endless{b: 'a', n: 192 << 20})
			e.want(e.send("POST", loadPath("data_format", "JSON"), "application/json", body), 400, "record 1 (byte 1) is longer than 1048576 bytes")
		})
	})
	run("zip entries", func(t *testing.T, e *memEnv) {
		entries := manyEntries(t, 20_000)
		e.measure(fmt.Sprintf("XLSX of %d B, 20,000 zip entries", len(entries)), 0, func() {
			ctype, body := paddedFile(entries, 0)
			e.want(e.send("POST", loadPath("data_format", "XLSX"), ctype, body), 400, "XLSX file: the zip")
		})
		e.measure("XLSX of 63 MiB", 0, func() {
			ctype, body := paddedFile(entries, 61<<20)
			e.want(e.send("POST", loadPath("data_format", "XLSX"), ctype, body), 413, "XLSX file larger than 33554432 bytes")
		})
	})
}

// loadCSVRows loads n valid rows and checks the fake keeps what n
// opportunities cost and little more.
func loadCSVRows(t testing.TB, e *memEnv, n int) {
	legit := oppObjectsCost(n, 0)
	e.measure(fmt.Sprintf("CSV load of %d valid rows", n), legit, func() {
		e.want(e.send("POST", loadPath(), "text/csv", &csvRows{n: n}), 200, "execution_id")
	})
	if got := len(e.f.Objects("opportunity")); got < n {
		t.Errorf("%d opportunities after the load, want at least %d", got, n)
	}
}

// BenchmarkMemoryModelCSVLoad is TestMemoryModelLoads's ordinary load at
// 100,000 rows; it reports the peak and retained heap above the objects.
func BenchmarkMemoryModelCSVLoad(b *testing.B) {
	skipUnderRace(b)
	for range b.N {
		e := newMemEnv(b)
		loadCSVRows(b, e, 100_000)
		e.f.Close()
		b.ReportMetric(mib(e.peak-e.legit), "peak-MiB-above-objects")
		b.ReportMetric(mib(e.retained-e.legit), "retained-MiB-above-objects")
	}
}

func between(s, from, to string) string {
	_, s, _ = strings.Cut(s, from)
	s, _, _ = strings.Cut(s, to)
	return s
}

// TestMemoryModelUploadsAndTokens: staged uploads and live tokens have
// totals, and the fake holds no more.
func TestMemoryModelUploadsAndTokens(t *testing.T) {
	skipUnderRace(t)
	e := newMemEnv(t, WithLimits(Limits{AccessTokens: 1000, Uploads: 100, UploadBytes: 12 << 20}))
	defer e.f.Close()
	e.f.SetURL("http://127.0.0.1:1")
	ticket := func() string {
		s := e.send("GET", "/bulk/v1/bulkload/"+demo.OpportunityIntegration+"/upload_url?file_name=a.csv", "", nil)
		if s.status != 200 {
			t.Fatalf("upload_url: %d %s", s.status, s.head)
		}
		return "/upload/" + between(string(s.head), "/upload/", `"`)
	}
	const file = 8 << 20
	e.measure("upload of 8 MiB (kept)", file, func() {
		e.want(e.send("POST", ticket(), "text/csv", &endless{b: 'a', n: file}), 200, "")
	})
	e.measure("upload of 8 MiB past the 12 MiB total", 0, func() {
		e.want(e.send("POST", ticket(), "text/csv", &endless{b: 'a', n: file}), 413, "bytes of uploaded files, its limit")
	})
	e.measure("5,000 upload URLs (100 kept)", 0, func() {
		for range 5000 {
			ticket()
		}
	})
	e.f.bulk.mu.Lock()
	held, urls, bytes := len(e.f.bulk.uploads), len(e.f.bulk.uploadURLs), e.f.bulk.upBytes
	e.f.bulk.mu.Unlock()
	if held != 100 || urls != 100 || bytes != 0 {
		t.Errorf("holding %d uploads, %d URLs, %d bytes of files; want 100, 100 and the first file forgotten", held, urls, bytes)
	}
	e.measure("5,000 access tokens (1,000 kept)", 0, func() {
		for range 5000 {
			handlerToken(t, e.f)
		}
	})
	if access, _ := e.f.tokensHeld(); access != 1000 {
		t.Errorf("holding %d access tokens, want 1000", access)
	}
	// The oldest are forgotten: the first token is refused, the newest works.
	ping := func(tok string) int {
		e.token = tok
		return e.send("GET", "/bulk/v1/status/"+demo.OpportunityIntegration+"?execution_id=x", "", nil).status
	}
	if first := e.token; ping(first) != http.StatusUnauthorized {
		t.Errorf("the first token still works past the total")
	}
	if ping(handlerToken(t, e.f)) != http.StatusNotFound {
		t.Errorf("a new token does not work")
	}
}

// TestMemoryModelReportRead reads a report of a million rows (the
// report's rows are its legitimate state, built before) through a view,
// page by page.
func TestMemoryModelReportRead(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("reads a million rows")
	}
	e := newMemEnv(t)
	defer e.f.Close()
	id := e.f.AddReport(Report{Name: "big", Columns: []Column{{ID: "n", Name: "N", Type: columnNumber}, {ID: "ok", Name: "OK", Type: columnBoolean}},
		RowCount: 1_000_000, Generate: func(i int) []any { return []any{i, i%2 == 0} }})
	e.f.snapshotReport(id)
	var read int64
	e.measure("report read of 1,000,000 rows (100 pages)", 0, func() {
		s := e.send("POST", fmt.Sprintf("/report/v1/view/%d/prepare_export", id), "application/json", strings.NewReader(`{}`))
		e.want(s, 200, "")
		view := between(string(s.head), `"viewId":`, `}`)
		for p := range 100 {
			s := e.send("POST", "/report/v1/view/"+strings.TrimSpace(view)+"/data", "application/json",
				strings.NewReader(fmt.Sprintf(`{"page":{"number":%d,"size":10000}}`, p+1)))
			if s.status != 200 {
				t.Fatalf("page %d: %d %.300s", p+1, s.status, s.head)
			}
			read += s.n
		}
	})
	if read < 20<<20 {
		t.Errorf("read %d bytes of a million rows", read)
	}
}
