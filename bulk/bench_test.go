package bulk_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)

// BenchmarkLoadCSV1M loads a 1,000,000-row CSV file (about 100 MB) to
// the fake over loopback four ways, interleaved in every iteration so
// that a noisy machine slows all alike: a plain http.Post of the *os.File
// (the baseline, sent with a Content-Length), the SDK's Load, the SDK's
// LoadAttachment (multipart, its length computed up front), and the plain
// http.Post of the same file behind an io.Reader (sent chunked), and a
// hand-written sized multipart POST of the file (the baseline of the
// multipart load: the fake parses multipart more slowly than a raw body).
// It reports the throughput of each, their ratios to the baseline
// (load/post, attach/post, chunked/post, attach/post-multipart), and sdk-peak-heap-MB, the highest heap in use
// (live and not yet swept objects, sampled every millisecond) during the
// SDK's loads.
//
// The fake runs in a child process (this test binary, see
// TestBenchFakeProcess), so that the heap measured here is the client's
// alone. It runs with WithBulkDiscard: it parses and checks every row but
// stores none.
//
//	go test -run '^$' -bench LoadCSV1M -benchtime 5x ./bulk/
func BenchmarkLoadCSV1M(b *testing.B) {
	if testing.Short() {
		b.Skip("writes a 100 MB file")
	}
	path, size := writeBenchCSV(b, 1_000_000)
	base := startFakeProcess(b)
	c, err := partner.New(partner.WithBaseURL(base),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret))
	if err != nil {
		b.Fatal(err)
	}
	token := benchToken(b, base)
	loadURL := base + "/bulk/v1/bulkload?integration_id=" + demo.OpportunityIntegration
	ctx := context.Background()
	p := bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}

	post := func(body io.Reader, length int64, contentType string) (string, error) {
		req, err := http.NewRequest("POST", loadURL, body)
		if err != nil {
			return "", err
		}
		req.ContentLength = length
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return "", fmt.Errorf("status %d", resp.StatusCode)
		}
		var ack struct {
			ExecutionID string `json:"execution_id"`
		}
		err = json.NewDecoder(resp.Body).Decode(&ack)
		return ack.ExecutionID, err
	}
	// http.NewRequest leaves ContentLength 0 for an *os.File, which
	// net/http then sends chunked: the sized baseline sets it.
	sized := func(f *os.File) (string, error) { return post(f, size, "text/csv") }
	// The same file behind a plain io.Reader: net/http cannot tell its
	// size and sends it chunked.
	chunked := func(f *os.File) (string, error) { return post(struct{ io.Reader }{f}, 0, "text/csv") }
	// The multipart body LoadAttachment sends, written by hand: the part
	// header and the closing boundary around the file, with its length.
	const boundary = "bench-boundary-1a2b3c"
	head := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"opps.csv\"\r\nContent-Type: text/csv\r\n\r\n"
	tail := "\r\n--" + boundary + "--\r\n"
	postMultipart := func(f *os.File) (string, error) {
		return post(io.MultiReader(strings.NewReader(head), f, strings.NewReader(tail)),
			int64(len(head))+size+int64(len(tail)), "multipart/form-data; boundary="+boundary)
	}
	load := func(f *os.File) (string, error) {
		ack, err := c.Bulk.Load(ctx, p, f)
		if err != nil {
			return "", err
		}
		return ack.ExecutionID, nil
	}
	attach := func(f *os.File) (string, error) {
		ack, err := c.Bulk.LoadAttachment(ctx, p, "opps.csv", f)
		if err != nil {
			return "", err
		}
		return ack.ExecutionID, nil
	}
	ways := []struct {
		name string
		sdk  bool
		fn   func(*os.File) (string, error)
		took time.Duration
	}{{"post", false, sized, 0}, {"load", true, load, 0}, {"attach", true, attach, 0}, {"post-chunked", false, chunked, 0},
		{"post-multipart", false, postMultipart, 0}}

	var peak uint64
	n := 0
	b.SetBytes(int64(len(ways)) * size)
	for b.Loop() {
		for i := range ways {
			w := &ways[(i+n)%len(ways)] // rotate who goes first
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			// The heap is sampled during every way, so that the sampler's
			// wake-ups cost the baselines what they cost the SDK.
			runtime.GC()
			stop := mocktest.SampleHeap(time.Millisecond)
			start := time.Now()
			exID, err := w.fn(f)
			w.took += time.Since(start)
			if h := stop(); w.sdk {
				peak = max(peak, h)
			}
			f.Close()
			if err != nil {
				b.Fatalf("%s: %v", w.name, err)
			}
			if ex, err := c.Bulk.Status(ctx, p.IntegrationID, exID, bulk.StatusParams{}); err != nil || ex.SuccessCount != 1_000_000 {
				b.Fatalf("%s: execution %+v, %v", w.name, ex, err)
			}
		}
		n++
	}
	mbps := func(d time.Duration) float64 { return float64(size) * float64(n) / d.Seconds() / 1e6 }
	for _, w := range ways {
		b.ReportMetric(mbps(w.took), w.name+"-MB/s")
	}
	b.ReportMetric(ways[0].took.Seconds()/ways[1].took.Seconds(), "load/post")
	b.ReportMetric(ways[0].took.Seconds()/ways[2].took.Seconds(), "attach/post")
	b.ReportMetric(ways[0].took.Seconds()/ways[3].took.Seconds(), "chunked/post")
	b.ReportMetric(ways[4].took.Seconds()/ways[2].took.Seconds(), "attach/post-multipart")
	b.ReportMetric(float64(peak)/(1<<20), "sdk-peak-heap-MB")
}

const fakeProcessEnv = "PARTNER_BULK_BENCH_FAKE"

// TestBenchFakeProcess is not a test: BenchmarkLoadCSV1M runs the test
// binary with it to host the fake in a process of its own. It serves
// until its standard input is closed.
func TestBenchFakeProcess(t *testing.T) {
	if os.Getenv(fakeProcessEnv) != "1" {
		t.Skip("the fake's process of BenchmarkLoadCSV1M")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := fake.New(fake.WithDemoData(), fake.WithBulkDiscard(), fake.WithBulkDelay(0))
	f.SetURL("http://" + ln.Addr().String())
	go http.Serve(ln, f)
	fmt.Printf("\nLISTENING %s\n", f.URL())
	io.Copy(io.Discard, os.Stdin)
}

// startFakeProcess starts TestBenchFakeProcess and returns its URL.
func startFakeProcess(b *testing.B) string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchFakeProcess$", "-test.v")
	cmd.Env = append(os.Environ(), fakeProcessEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "LISTENING "); ok {
			go io.Copy(io.Discard, stdout)
			return u
		}
	}
	b.Fatalf("the fake's process did not start: %v", sc.Err())
	return ""
}

// writeBenchCSV writes rows opportunities of about 100 bytes each.
func writeBenchCSV(b *testing.B, rows int) (string, int64) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "opportunities.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "sales_details.crm_opportunity_id,name,stage,amount,close_date,owner")
	for i := range rows {
		fmt.Fprintf(w, "CRM-%08d,Opportunity %08d for a partner account,negotiation,%d.50,2026-%02d-15,owner-%04d\n",
			i, i, 1000+i%90000, 1+i%12, i%5000)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	return path, st.Size()
}

func benchToken(b *testing.B, base string) string {
	b.Helper()
	body := fmt.Sprintf(`{"grant_type":"client_credentials","client_id":%q,"client_secret":%q}`, fake.DefaultClientID, fake.DefaultClientSecret)
	resp, err := http.Post(base+"/oauth/token", "application/json", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	return tok.AccessToken
}
