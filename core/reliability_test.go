package core

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/jarcoal/httpmock"
)

// dropAfterWrite answers like a connection that died after the request
// was written: the trace learns that the headers went out, then an error.
func dropAfterWrite(req *http.Request) (*http.Response, error) {
	if tr := httptrace.ContextClientTrace(req.Context()); tr != nil && tr.WroteHeaders != nil {
		tr.WroteHeaders()
	}
	return nil, errors.New("connection reset by peer")
}

// TestOutcomeUnknown pins which errors of a non-idempotent write say that
// the service may have processed it, and that no other error does.
func TestOutcomeUnknown(t *testing.T) {
	status := func(code int) httpmock.Responder { return sequence(code) }
	refused := func(*http.Request) (*http.Response, error) { return nil, errors.New("connection refused") }
	for _, tc := range []struct {
		name       string
		idempotent bool
		responder  httpmock.Responder
		unknown    bool
	}{
		{"500", false, status(500), true},
		{"503", false, status(503), true},
		{"dropped after write", false, dropAfterWrite, true},
		{"429 then 500", false, sequence(429, 500), true},
		{"400", false, status(400), false},
		{"409", false, status(409), false},
		{"429 throughout", false, status(429), false},
		{"refused before write", false, refused, false},
		{"idempotent 500", true, status(500), false},
		{"idempotent dropped", true, dropAfterWrite, false},
	} {
		c, mt := newMockClient(t)
		mt.RegisterResponder("POST", base+"/w", tc.responder)
		err := c.Do(context.Background(), &Request{Method: "POST", Path: "/w", JSON: map[string]int{"a": 1}, Idempotent: tc.idempotent}, nil)
		if err == nil {
			t.Fatalf("%s: no error", tc.name)
		}
		if got := IsOutcomeUnknown(err); got != tc.unknown {
			t.Errorf("%s: IsOutcomeUnknown = %v, want %v (%v)", tc.name, got, tc.unknown, err)
		}
		var e *Error
		if errors.As(err, &e) && e.OutcomeUnknown != tc.unknown {
			t.Errorf("%s: Error.OutcomeUnknown = %v, want %v", tc.name, e.OutcomeUnknown, tc.unknown)
		}
	}
}

// TestOutcomeUnknownLostAnswer: a 2xx whose body is cut short means the
// write happened but its result is lost; a context cancelled, or whose
// deadline passed, after the request was written is ambiguous too. The
// context ends once the server has the request, not at a time that could
// come before the request is written.
func TestOutcomeUnknownLostAnswer(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/slow" {
			arrived <- struct{}{}
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(201)
		w.Write([]byte(`{"id":`))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	c := New(Config{BaseURL: u, HTTPClient: srv.Client(), Retry: fastRetry})
	var out struct{ ID string }
	err := c.Do(context.Background(), &Request{Method: "POST", Path: "/w", JSON: 1}, &out)
	if err == nil || !IsOutcomeUnknown(err) {
		t.Fatalf("cut answer: %v, want outcome unknown", err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	defer cancel()
	expired := &deadlineOnCue{Context: context.Background(), done: make(chan struct{})}
	for _, tc := range []struct {
		ctx  context.Context
		end  func()
		want error
	}{{cancelled, cancel, context.Canceled}, {expired, expired.pass, context.DeadlineExceeded}} {
		go func() {
			<-arrived
			tc.end()
		}()
		err = c.Do(tc.ctx, &Request{Method: "POST", Path: "/slow", JSON: 1}, nil)
		if !errors.Is(err, tc.want) || !IsOutcomeUnknown(err) {
			t.Fatalf("context ended after the write: %v, want %v and outcome unknown", err, tc.want)
		}
	}
	if err := c.Do(context.Background(), &Request{Method: "GET", Path: "/w"}, &out); err == nil || IsOutcomeUnknown(err) {
		t.Fatalf("cut answer of a read: %v, want an error not marked", err)
	}
}

// deadlineOnCue is a context whose deadline passes when pass is called:
// Done closes and Err is context.DeadlineExceeded, as when a deadline
// passes, at the moment the test chooses.
type deadlineOnCue struct {
	context.Context
	done chan struct{}
}

func (c *deadlineOnCue) pass()                 { close(c.done) }
func (c *deadlineOnCue) Done() <-chan struct{} { return c.done }
func (c *deadlineOnCue) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// TestDeleteGoneAfterUnknownOutcome: a DELETE whose first attempt may have
// removed the resource and whose retry finds it gone is done; a 404 at
// the first attempt is still an error.
func TestDeleteGoneAfterUnknownOutcome(t *testing.T) {
	for _, first := range []httpmock.Responder{sequence(503), dropAfterWrite} {
		c, mt := newMockClient(t)
		var n atomic.Int32
		mt.RegisterResponder("DELETE", base+"/s/1", func(req *http.Request) (*http.Response, error) {
			if n.Add(1) == 1 {
				return first(req)
			}
			return httpmock.NewStringResponse(404, `{"error":"not_found"}`), nil
		})
		if err := c.Do(context.Background(), &Request{Method: "DELETE", Path: "/s/1", Idempotent: true}, nil); err != nil {
			t.Fatalf("retried DELETE finding nothing: %v, want success", err)
		}
		if n.Load() != 2 {
			t.Fatalf("%d attempts, want 2", n.Load())
		}
	}
	c, mt := newMockClient(t)
	mt.RegisterResponder("DELETE", base+"/s/1", sequence(404))
	if err := c.Do(context.Background(), &Request{Method: "DELETE", Path: "/s/1", Idempotent: true}, nil); !HasStatus(err, 404) {
		t.Fatalf("DELETE of an unknown id: %v, want 404", err)
	}
	mt.RegisterResponder("DELETE", base+"/s/2", sequence(429, 404))
	if err := c.Do(context.Background(), &Request{Method: "DELETE", Path: "/s/2", Idempotent: true}, nil); !HasStatus(err, 404) {
		t.Fatalf("DELETE 404 after a 429 (not processed): %v, want 404", err)
	}
}

// TestRetryAfterBeyondCap: a Retry-After longer than MaxRetryAfter ends the
// retries at once; the error carries the server's wait.
func TestRetryAfterBeyondCap(t *testing.T) {
	c, mt := newMockClient(t, func(cfg *Config) { cfg.Retry.MaxRetryAfter = time.Minute })
	mt.RegisterResponder("GET", base+"/r", func(*http.Request) (*http.Response, error) {
		r := httpmock.NewStringResponse(429, `{"error":"slow_down"}`)
		r.Header.Set("Retry-After", "120")
		return r, nil
	})
	var waits []time.Duration
	c.testHookWait = func(d time.Duration) { waits = append(waits, d) }
	err := c.Do(context.Background(), &Request{Method: "GET", Path: "/r"}, nil)
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != 429 || e.RetryAfter != 120*time.Second {
		t.Fatalf("err = %v, want the 429 with RetryAfter 2m", err)
	}
	if calls(mt) != 1 || len(waits) != 0 {
		t.Fatalf("%d calls and waits %v, want 1 call and no wait", calls(mt), waits)
	}
}

// TestMaxRetryTime: a retry whose wait would end past MaxRetryTime is not
// made; without the cap it is.
func TestMaxRetryTime(t *testing.T) {
	answer := func(*http.Request) (*http.Response, error) {
		r := httpmock.NewStringResponse(503, `{}`)
		r.Header.Set("Retry-After", "1")
		return r, nil
	}
	c, mt := newMockClient(t, func(cfg *Config) {
		cfg.Retry.MaxRetryAfter, cfg.Retry.MaxRetryTime = time.Minute, 500*time.Millisecond
	})
	mt.RegisterResponder("GET", base+"/r", answer)
	if err := c.Do(context.Background(), &Request{Method: "GET", Path: "/r"}, nil); !HasStatus(err, 503) || calls(mt) != 1 {
		t.Fatalf("err = %v after %d calls, want the 503 after 1", err, calls(mt))
	}
	c, mt = newMockClient(t, func(cfg *Config) {
		cfg.Retry.MaxRetries, cfg.Retry.MaxRetryAfter, cfg.Retry.NoRetryTimeCap = 1, time.Minute, true
	})
	var waits []time.Duration
	c.testHookWait = func(d time.Duration) { waits = append(waits, d) }
	mt.RegisterResponder("GET", base+"/r", sequence(503, 200))
	if err := c.Do(context.Background(), &Request{Method: "GET", Path: "/r"}, nil); err != nil || len(waits) != 1 {
		t.Fatalf("no cap: %v, waits %v", err, waits)
	}
}

// TestRetryBudget: retries draw on one bucket per client; an empty bucket
// fails calls at once with ErrRetryBudgetExhausted; successes refill it;
// Capacity 0 disables it.
func TestRetryBudget(t *testing.T) {
	c, mt := newMockClient(t, func(cfg *Config) {
		cfg.Retry.MaxRetries = 10
		cfg.Retry.Budget = BudgetPolicy{Capacity: 12, RetryCost: 5}
	})
	mt.RegisterResponder("GET", base+"/down", sequence(503))
	err := c.Do(context.Background(), &Request{Method: "GET", Path: "/down"}, nil)
	if !HasStatus(err, 503) || !errors.Is(err, ErrRetryBudgetExhausted) || calls(mt) != 3 {
		t.Fatalf("err = %v after %d calls, want the 503 with ErrRetryBudgetExhausted after 3", err, calls(mt))
	}
	mt.ZeroCallCounters()
	err = c.Do(context.Background(), &Request{Method: "GET", Path: "/down"}, nil)
	if !errors.Is(err, ErrRetryBudgetExhausted) || calls(mt) != 1 {
		t.Fatalf("empty bucket: %v after %d calls, want no retry", err, calls(mt))
	}
	// Three first-try successes add three tokens: 2+3 = 5 pays one retry,
	// which a success refunds.
	mt.RegisterResponder("GET", base+"/up", sequence(200))
	for range 3 {
		if err := c.Do(context.Background(), &Request{Method: "GET", Path: "/up"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	mt.RegisterResponder("GET", base+"/flaky", sequence(503, 200))
	if err := c.Do(context.Background(), &Request{Method: "GET", Path: "/flaky"}, nil); err != nil {
		t.Fatalf("one retry paid by successes: %v", err)
	}
	if got := c.budget.available(); got != 5 {
		t.Fatalf("bucket holds %d, want 5 (the retry refunded)", got)
	}

	c, mt = newMockClient(t, func(cfg *Config) {
		cfg.Retry.MaxRetries = 5
		cfg.Retry.NoBudget = true
	})
	mt.RegisterResponder("GET", base+"/down", sequence(503))
	if err := c.Do(context.Background(), &Request{Method: "GET", Path: "/down"}, nil); errors.Is(err, ErrRetryBudgetExhausted) || calls(mt) != 6 {
		t.Fatalf("no budget: %v after %d calls, want every retry", err, calls(mt))
	}
}

// TestRedirectRules: an https→http redirect is refused; a redirect to
// another host (even a subdomain, which net/http trusts) gets no bearer
// token; one on the same host keeps it.
func TestRedirectRules(t *testing.T) {
	c, mt := newMockClient(t)
	mt.RegisterResponder("GET", base+"/down", redirectTo("http://api.example.test/plain"))
	mt.RegisterResponder("GET", "http://api.example.test/plain", sequence(200))
	err := c.Do(context.Background(), &Request{Method: "GET", Path: "/down", Token: "secret-token"}, nil)
	if !errors.Is(err, ErrInsecureRedirect) || calls(mt) != 1 {
		t.Fatalf("https→http: %v after %d calls, want ErrInsecureRedirect and no retry", err, calls(mt))
	}
	auth := map[string]string{}
	record := func(req *http.Request) (*http.Response, error) {
		auth[req.URL.Host+req.URL.Path] = req.Header.Get("Authorization")
		return httpmock.NewStringResponse(200, "{}"), nil
	}
	mt.RegisterResponder("GET", base+"/away", redirectTo("https://files.api.example.test/x"))
	mt.RegisterResponder("GET", "https://files.api.example.test/x", record)
	mt.RegisterResponder("GET", base+"/near", redirectTo(base+"/y"))
	mt.RegisterResponder("GET", base+"/y", record)
	for _, p := range []string{"/away", "/near"} {
		if err := c.Do(context.Background(), &Request{Method: "GET", Path: p, Token: "secret-token"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if auth["files.api.example.test/x"] != "" || auth["api.example.test/y"] != "Bearer secret-token" {
		t.Fatalf("Authorization after redirects: %q", auth)
	}
}

// TestPlainHTTPAbsoluteURL: an absolute plain http URL (a signed upload
// URL) to a non-loopback host is refused unless insecure HTTP is allowed.
func TestPlainHTTPAbsoluteURL(t *testing.T) {
	c, mt := newMockClient(t)
	mt.RegisterResponder("POST", "http://storage.example.test/u", sequence(200))
	mt.RegisterResponder("POST", "http://127.0.0.1:9/u", sequence(200))
	req := func(u string) *Request {
		return &Request{Method: "POST", URL: u, Body: nil}
	}
	if err := c.Do(context.Background(), req("http://storage.example.test/u"), nil); err == nil || calls(mt) != 0 {
		t.Fatalf("plain http upload URL: %v after %d calls, want refused before sending", err, calls(mt))
	}
	if err := c.Do(context.Background(), req("http://127.0.0.1:9/u"), nil); err != nil {
		t.Fatalf("loopback: %v", err)
	}
	c, mt = newMockClient(t, func(cfg *Config) { cfg.AllowInsecureHTTP = true })
	mt.RegisterResponder("POST", "http://storage.example.test/u", sequence(200))
	if err := c.Do(context.Background(), req("http://storage.example.test/u"), nil); err != nil {
		t.Fatalf("allowed: %v", err)
	}
}

// TestUserClientKept: a client given through Config.HTTPClient keeps its
// own timeouts and its CheckRedirect runs after the transport's rules.
func TestUserClientKept(t *testing.T) {
	mt := httpmock.NewMockTransport()
	var asked int
	hc := &http.Client{Transport: mt, Timeout: 7 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		asked++
		return http.ErrUseLastResponse
	}}
	u, _ := url.Parse(base)
	c := New(Config{BaseURL: u, HTTPClient: hc, Retry: fastRetry})
	if c.cfg.HTTPClient != hc || c.hc.hc.Timeout != 7*time.Second {
		t.Fatal("the given client was replaced")
	}
	mt.RegisterResponder("GET", base+"/r", func(*http.Request) (*http.Response, error) {
		r := httpmock.NewStringResponse(302, "")
		r.Header.Set("Location", base+"/elsewhere")
		return r, nil
	})
	err := c.Do(context.Background(), &Request{Method: "GET", Path: "/r"}, nil)
	if asked != 1 || !HasStatus(err, 302) {
		t.Fatalf("CheckRedirect asked %d times, err %v; want once and the 302 kept", asked, err)
	}
}

// cutAnswer answers 200 with a JSON body, cut off half way with an
// unexpected EOF for the first cut requests: Content-Length announces the
// whole body, or none is sent (chunked) when sized is false.
func cutAnswer(cut int, sized bool) httpmock.Responder {
	const whole = `{"ok":true,"pad":"0123456789"}`
	var n atomic.Int32
	return func(req *http.Request) (*http.Response, error) {
		if req.Body != nil {
			io.Copy(io.Discard, req.Body)
		}
		resp := httpmock.NewStringResponse(200, whole)
		resp.ContentLength = -1
		if sized {
			resp.ContentLength = int64(len(whole))
		}
		if int(n.Add(1)) <= cut {
			resp.Body = io.NopCloser(io.MultiReader(strings.NewReader(whole[:len(whole)/2]), iotest.ErrReader(io.ErrUnexpectedEOF)))
		}
		return resp, nil
	}
}

// TestTruncatedAnswerRetried: a 2xx answer cut off mid-body is retried
// within the call's retries for a request safe to repeat (Do and Send).
func TestTruncatedAnswerRetried(t *testing.T) {
	ctx := context.Background()
	var out struct{ OK bool }
	for _, sized := range []bool{true, false} {
		c, mt := newMockClient(t)
		mt.RegisterResponder("GET", base+"/r", cutAnswer(1, sized))
		if err := c.Do(ctx, &Request{Method: "GET", Path: "/r"}, &out); err != nil || !out.OK || calls(mt) != 2 {
			t.Errorf("read, sized %v: %v ok=%v after %d calls, want ok after 2", sized, err, out.OK, calls(mt))
		}
	}

	c, mt := newMockClient(t)
	mt.RegisterResponder("POST", base+"/page", cutAnswer(2, true))
	resp, err := c.Send(ctx, &Request{Method: "POST", Path: "/page", JSON: map[string]int{"page": 1}, Idempotent: true})
	if err != nil {
		t.Fatalf("idempotent Send: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !strings.HasSuffix(string(b), `"}`) || calls(mt) != 3 {
		t.Fatalf("idempotent Send: %q %v after %d calls, want the whole body after 3", b, err, calls(mt))
	}
}

// TestTruncatedAnswerFails: a read cut off on every attempt fails after
// its retries with the reading error, not marked outcome unknown
// (TestTruncatedAnswerWrite has the write that is not safe to repeat).
func TestTruncatedAnswerFails(t *testing.T) {
	ctx := context.Background()
	var out struct{ OK bool }
	c, mt := newMockClient(t)
	mt.RegisterResponder("GET", base+"/r", cutAnswer(100, true))
	err := c.Do(ctx, &Request{Method: "GET", Path: "/r"}, &out)
	if err == nil || !strings.Contains(err.Error(), "partner: GET /r: reading response: unexpected EOF") || IsOutcomeUnknown(err) ||
		calls(mt) != fastRetry.MaxRetries+1 {
		t.Fatalf("read cut every time: %v after %d calls, want reading response after %d", err, calls(mt), fastRetry.MaxRetries+1)
	}
}

// TestTruncatedAnswerWrite: a 2xx answer cut off mid-body fails a write
// that is not safe to repeat with an error marked outcome unknown, sent
// once.
func TestTruncatedAnswerWrite(t *testing.T) {
	ctx := context.Background()
	var out struct{ OK bool }
	for _, sized := range []bool{true, false} {
		c, mt := newMockClient(t)
		mt.RegisterResponder("POST", base+"/w", cutAnswer(1, sized))
		err := c.Do(ctx, &Request{Method: "POST", Path: "/w", JSON: map[string]int{"a": 1}}, &out)
		if err == nil || !IsOutcomeUnknown(err) || !strings.Contains(err.Error(), "reading response: unexpected EOF") || calls(mt) != 1 {
			t.Errorf("write, sized %v: %v after %d calls, want outcome unknown after 1", sized, err, calls(mt))
		}
	}
}
