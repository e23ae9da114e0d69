package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"go.uber.org/goleak"
)

const base = "https://api.example.test"

// fastRetry retries quickly so that tests never wait on a real backoff.
var fastRetry = RetryPolicy{MaxRetries: 3, MinWait: time.Microsecond, MaxWait: 10 * time.Microsecond, MaxRetryAfter: time.Millisecond}

// newMockClient returns a Client whose HTTP client sends through its own
// httpmock transport, never the global default.
func newMockClient(t *testing.T, edit ...func(*Config)) (*Client, *httpmock.MockTransport) {
	t.Helper()
	mt := httpmock.NewMockTransport()
	u, _ := url.Parse(base)
	cfg := Config{BaseURL: u, HTTPClient: &http.Client{Transport: mt}, Retry: fastRetry}
	for _, e := range edit {
		e(&cfg)
	}
	return New(cfg), mt
}

// sequence answers with the given statuses in turn, then repeats the last.
func sequence(statuses ...int) httpmock.Responder {
	var n atomic.Int32
	return func(req *http.Request) (*http.Response, error) {
		if req.Body != nil {
			io.Copy(io.Discard, req.Body)
		}
		i := int(n.Add(1)) - 1
		st := statuses[min(i, len(statuses)-1)]
		if st == 200 {
			return httpmock.NewStringResponse(200, `{"ok":true}`), nil
		}
		return httpmock.NewStringResponse(st, `{"error":"e","message":"status `+fmt.Sprint(st)+`"}`), nil
	}
}

func calls(mt *httpmock.MockTransport) int { return mt.GetTotalCallCount() }

// redirectTo answers 307 with Location to.
func redirectTo(to string) httpmock.Responder {
	return func(*http.Request) (*http.Response, error) {
		r := httpmock.NewStringResponse(307, "")
		r.Header.Set("Location", to)
		return r, nil
	}
}

// headerLog keeps the headers of the requests its record answers, in
// the order they came.
type headerLog struct {
	mu   sync.Mutex
	seen []http.Header
}

// record is a responder: it keeps req's headers and answers 200 {}.
func (l *headerLog) record(req *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.seen = append(l.seen, req.Header.Clone())
	l.mu.Unlock()
	return httpmock.NewStringResponse(200, "{}"), nil
}

func TestIdempotentRetriedOnRetryableStatus(t *testing.T) {
	for _, st := range []int{429, 500, 502, 503, 504} {
		t.Run(fmt.Sprint(st), func(t *testing.T) {
			c, mt := newMockClient(t)
			mt.RegisterResponder("GET", base+"/r", sequence(st, 200))
			var out struct{ OK bool }
			if err := c.Do(context.Background(), &Request{Method: "GET", Path: "/r"}, &out); err != nil {
				t.Fatal(err)
			}
			if !out.OK || calls(mt) != 2 {
				t.Fatalf("ok=%v calls=%d, want true and 2", out.OK, calls(mt))
			}
		})
	}
}

func TestNotRetriedOnOtherStatus(t *testing.T) {
	for _, st := range []int{400, 401, 403, 404, 409, 501} {
		c, mt := newMockClient(t)
		mt.RegisterResponder("GET", base+"/r", sequence(st, 200))
		err := c.Do(context.Background(), &Request{Method: "GET", Path: "/r"}, nil)
		if !HasStatus(err, st) || calls(mt) != 1 {
			t.Errorf("status %d: err=%v calls=%d, want that status after 1 call", st, err, calls(mt))
		}
	}
}

func TestIdempotentWriteRetried(t *testing.T) {
	c, mt := newMockClient(t)
	mt.RegisterResponder("PUT", base+"/r", sequence(503, 200))
	if err := c.Do(context.Background(), &Request{Method: "PUT", Path: "/r", JSON: map[string]int{"a": 1}, Idempotent: true}, nil); err != nil {
		t.Fatal(err)
	}
	if calls(mt) != 2 {
		t.Fatalf("calls=%d, want 2", calls(mt))
	}
}

func TestNonIdempotentPOST(t *testing.T) {
	t.Run("429 retried", func(t *testing.T) {
		c, mt := newMockClient(t)
		mt.RegisterResponder("POST", base+"/r", sequence(429, 200))
		if err := c.Do(context.Background(), &Request{Method: "POST", Path: "/r", JSON: 1}, nil); err != nil {
			t.Fatal(err)
		}
		if calls(mt) != 2 {
			t.Fatalf("calls=%d, want 2", calls(mt))
		}
	})
	for _, st := range []int{500, 502, 503, 504} {
		t.Run(fmt.Sprint(st, " not retried"), func(t *testing.T) {
			c, mt := newMockClient(t)
			mt.RegisterResponder("POST", base+"/r", sequence(st, 200))
			err := c.Do(context.Background(), &Request{Method: "POST", Path: "/r", JSON: 1}, nil)
			if !HasStatus(err, st) || calls(mt) != 1 {
				t.Fatalf("err=%v calls=%d, want status %d after 1 call", err, calls(mt), st)
			}
		})
	}
	t.Run("network error before writing retried", func(t *testing.T) {
		c, mt := newMockClient(t)
		mt.RegisterResponder("POST", base+"/r",
			httpmock.Responder(httpmock.ConnectionFailure).Then(sequence(200)))
		if err := c.Do(context.Background(), &Request{Method: "POST", Path: "/r", JSON: 1}, nil); err != nil {
			t.Fatal(err)
		}
		if calls(mt) != 2 {
			t.Fatalf("calls=%d, want 2", calls(mt))
		}
	})
	t.Run("network error after writing not retried", func(t *testing.T) {
		c, mt := newMockClient(t)
		mt.RegisterResponder("POST", base+"/r", func(req *http.Request) (*http.Response, error) {
			if tr := httptrace.ContextClientTrace(req.Context()); tr != nil && tr.WroteHeaders != nil {
				tr.WroteHeaders()
			}
			return nil, errors.New("connection reset by peer")
		})
		err := c.Do(context.Background(), &Request{Method: "POST", Path: "/r", JSON: 1}, nil)
		if err == nil || calls(mt) != 1 {
			t.Fatalf("err=%v calls=%d, want an error after 1 call", err, calls(mt))
		}
	})
}

func TestIdempotentRetriedOnNetworkError(t *testing.T) {
	c, mt := newMockClient(t)
	var n atomic.Int32
	mt.RegisterResponder("GET", base+"/r", func(req *http.Request) (*http.Response, error) {
		if n.Add(1) > 2 {
			return httpmock.NewStringResponse(200, "{}"), nil
		}
		if tr := httptrace.ContextClientTrace(req.Context()); tr != nil && tr.WroteHeaders != nil {
			tr.WroteHeaders()
		}
		return nil, errors.New("connection reset by peer")
	})
	if err := c.Do(context.Background(), &Request{Method: "GET", Path: "/r"}, nil); err != nil {
		t.Fatal(err)
	}
	if calls(mt) != 3 {
		t.Fatalf("calls=%d, want 3", calls(mt))
	}
}

// TestRealNetworkFailures checks the write tracking on a real connection:
// a POST whose connection dies after the request was sent is not
// repeated, a GET is; a POST whose dial fails is repeated.
func TestRealNetworkFailures(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if hits.Add(1) == 1 {
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close()
			return
		}
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	newClient := func(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *Client {
		u, _ := url.Parse(srv.URL)
		tr := &http.Transport{DialContext: dial, DisableKeepAlives: true}
		t.Cleanup(tr.CloseIdleConnections)
		return New(Config{BaseURL: u, HTTPClient: &http.Client{Transport: tr}, Retry: fastRetry})
	}
	var d net.Dialer

	c := newClient(d.DialContext)
	err := c.Do(context.Background(), &Request{Method: "POST", Path: "/x", JSON: 1}, nil)
	if err == nil || hits.Load() != 1 {
		t.Fatalf("POST dropped after writing: err=%v server hits=%d, want an error and 1 hit", err, hits.Load())
	}

	hits.Store(0)
	if err := c.Do(context.Background(), &Request{Method: "GET", Path: "/x"}, nil); err != nil || hits.Load() != 2 {
		t.Fatalf("GET dropped: err=%v server hits=%d, want success after 2 hits", err, hits.Load())
	}

	hits.Store(1) // the server answers normally from now on
	var dials atomic.Int32
	c = newClient(func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
		}
		return d.DialContext(ctx, network, addr)
	})
	if err := c.Do(context.Background(), &Request{Method: "POST", Path: "/x", Body: strings.NewReader("x"), ContentType: "text/plain"}, nil); err != nil {
		t.Fatalf("POST after a refused dial: %v", err)
	}
	if dials.Load() != 2 || hits.Load() != 2 {
		t.Fatalf("dials=%d server hits=%d, want 2 dials and 1 request served", dials.Load(), hits.Load()-1)
	}
}

func TestRetriesExhaustedKeepLastResponse(t *testing.T) {
	c, mt := newMockClient(t)
	mt.RegisterResponder("GET", base+"/r", sequence(503))
	err := c.Do(context.Background(), &Request{Method: "GET", Path: "/r"}, nil)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if e.StatusCode != 503 || e.Message != "status 503" || calls(mt) != 1+fastRetry.MaxRetries {
		t.Fatalf("got %d %q after %d calls, want 503 \"status 503\" after %d", e.StatusCode, e.Message, calls(mt), 1+fastRetry.MaxRetries)
	}
}

func TestMaxRetriesZero(t *testing.T) {
	c, mt := newMockClient(t, func(cfg *Config) { cfg.Retry.NoRetries = true })
	mt.RegisterResponder("GET", base+"/r", sequence(503, 200))
	if err := c.Do(context.Background(), &Request{Method: "GET", Path: "/r"}, nil); !HasStatus(err, 503) || calls(mt) != 1 {
		t.Fatalf("err=%v calls=%d, want 503 after 1 call", err, calls(mt))
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 120 * time.Second, true},
		{" 0 ", 0, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"-5", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	} {
		got, ok := parseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBackoffRetryAfter(t *testing.T) {
	p := RetryPolicy{MinWait: time.Second, MaxWait: 10 * time.Second, MaxRetryAfter: time.Minute}.withDefaults()
	resp := func(v string) *http.Response {
		return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {v}}}
	}
	if got, server := p.wait(0, resp("7")); got != 7*time.Second || !server {
		t.Errorf("Retry-After 7: wait %v (server %v), want 7s", got, server)
	}
	if got, _ := p.wait(0, resp("3600")); got != time.Hour {
		t.Errorf("Retry-After 3600: wait %v, want 1h (checkRetry refuses it)", got)
	}
	date := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	if got, _ := p.wait(0, resp(date)); got < 28*time.Second || got > 30*time.Second {
		t.Errorf("Retry-After in 30s as a date: wait %v, want about 30s", got)
	}
}

func TestBackoffJitterBounds(t *testing.T) {
	p := RetryPolicy{MinWait: 100 * time.Millisecond, MaxWait: 2 * time.Second}.withDefaults()
	for attempt := range 40 {
		step := min(p.MinWait<<min(attempt, 30), p.MaxWait)
		seen := map[time.Duration]bool{}
		for range 200 {
			d, _ := p.wait(attempt, nil)
			if d < p.MinWait/2 || d > step {
				t.Fatalf("attempt %d: wait %v outside [%v, %v]", attempt, d, p.MinWait/2, step)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Fatalf("attempt %d: only %d distinct waits in 200: no jitter", attempt, len(seen))
		}
	}
	// A 503 without Retry-After uses the exponential step too.
	if d, server := p.wait(0, &http.Response{StatusCode: 503, Header: http.Header{}}); d > p.MinWait || server {
		t.Fatalf("first retry waits %v, want at most %v", d, p.MinWait)
	}
}

func TestRetryPolicyDefaults(t *testing.T) {
	got := RetryPolicy{}.withDefaults()
	if got != defaultRetryPolicy {
		t.Fatalf("defaults = %+v, want %+v", got, defaultRetryPolicy)
	}
	if got := (RetryPolicy{MinWait: time.Second, MaxWait: time.Millisecond}).withDefaults(); got.MaxWait != time.Second {
		t.Fatalf("MaxWait below MinWait not raised: %+v", got)
	}
}

// TestCancelDuringBackoff cancels the context while the client waits for
// a long Retry-After: Do returns at once with context.Canceled and leaves
// no goroutine behind.
func TestCancelDuringBackoff(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	c, mt := newMockClient(t, func(cfg *Config) { cfg.Retry.MaxRetryAfter, cfg.Retry.MaxRetryTime = time.Hour, 2*time.Hour })
	waiting := make(chan struct{})
	c.testHookWait = func(time.Duration) { close(waiting) }
	mt.RegisterResponder("GET", base+"/r", func(*http.Request) (*http.Response, error) {
		r := httpmock.NewStringResponse(503, "")
		r.Header.Set("Retry-After", "3600")
		return r, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Do(ctx, &Request{Method: "GET", Path: "/r"}, nil) }()
	<-waiting
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Do still waiting after cancel")
	}
	if calls(mt) != 1 {
		t.Fatalf("calls=%d, want 1", calls(mt))
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	c, mt := newMockClient(t)
	mt.RegisterResponder("GET", base+"/r", sequence(200))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Do(ctx, &Request{Method: "GET", Path: "/r"}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestCheckRetryUnitRules(t *testing.T) {
	c, _ := newMockClient(t)
	st := &call{c: c, idempotent: true, start: time.Now(), maxRetries: c.cfg.Retry.maxRetries()}
	st.bindHooks()
	ctx := withCall(context.Background(), st, true)
	checkRetry := st.checkRetry
	certErr := &url.Error{Op: "Get", URL: base, Err: fmt.Errorf("tls: %w", errors.New("x"))}
	if ok, _ := checkRetry(ctx, nil, certErr); !ok {
		t.Error("plain network error on a GET not retried")
	}
	for _, msg := range []string{"stopped after 10 redirects", `unsupported protocol scheme "ftp"`} {
		if ok, _ := checkRetry(ctx, nil, &url.Error{Op: "Get", URL: base, Err: errors.New(msg)}); ok {
			t.Errorf("%q retried", msg)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if ok, err := checkRetry(cctx, &http.Response{StatusCode: 503}, nil); ok || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: retry=%v err=%v", ok, err)
	}
}

// TestObserveSeesRetriedAnswers: Request.Observe is called with every
// answer, the retried 429 and 503 included, so that a caller can slow
// down even when the transport's retries hide them.
func TestObserveSeesRetriedAnswers(t *testing.T) {
	c, mt := newMockClient(t)
	mt.RegisterResponder("POST", base+"/r", sequence(429, 503, 200))
	var seen []int
	err := c.Do(context.Background(), &Request{Method: "POST", Path: "/r", Idempotent: true,
		Observe: func(resp *http.Response) { seen = append(seen, resp.StatusCode) }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[429 503 200]" {
		t.Fatalf("observed %v, want [429 503 200]", seen)
	}
}

// TestFileBodyResentWhole: a file body is sent whole, from the file's
// offset when the request began, by every attempt (here a 429, then
// success), each attempt reading a handle of its own.
func TestFileBodyResentWhole(t *testing.T) {
	path := t.TempDir() + "/body.csv"
	content := strings.Repeat("id,name\n1,a\n", 10000)
	if err := os.WriteFile(path, []byte("skip"+content), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	var lengths []int64
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, string(b))
		lengths = append(lengths, r.ContentLength)
		if n++; n == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	c := New(Config{BaseURL: u, Retry: fastRetry})
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Seek(4, io.SeekStart)
	if err := c.Do(context.Background(), &Request{Method: "POST", Path: "/load", Body: f, ContentType: "text/csv"}, nil); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d attempts, want 2", len(got))
	}
	for i := range got {
		if got[i] != content || lengths[i] != int64(len(content)) {
			t.Errorf("attempt %d: %d bytes (Content-Length %d), want the %d bytes after the offset", i, len(got[i]), lengths[i], len(content))
		}
	}
}
