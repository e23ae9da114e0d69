package core

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// readSeeker hides every method but Read and Seek.
type readSeeker struct{ io.ReadSeeker }

// plainReader hides every method but Read.
type plainReader struct{ io.Reader }

// bodies records the body of every request a responder saw.
type bodies struct {
	mu  sync.Mutex
	got []string
}

func (b *bodies) responder(statuses ...int) httpmock.Responder {
	seq := sequence(statuses...)
	return func(req *http.Request) (*http.Response, error) {
		var data []byte
		if req.Body != nil {
			data, _ = io.ReadAll(req.Body)
		}
		b.mu.Lock()
		b.got = append(b.got, string(data))
		b.mu.Unlock()
		return seq(req)
	}
}

func TestReadSeekerRewoundForRetry(t *testing.T) {
	c, mt := newMockClient(t)
	var b bodies
	mt.RegisterResponder("PUT", base+"/r", b.responder(503, 503, 200))
	src := strings.NewReader("skip:payload")
	src.Seek(5, io.SeekStart) // the body starts where the reader stands
	err := c.Do(context.Background(), &Request{Method: "PUT", Path: "/r", Body: readSeeker{src}, Idempotent: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.got) != 3 || b.got[0] != "payload" || b.got[1] != "payload" || b.got[2] != "payload" {
		t.Fatalf("server saw %q, want \"payload\" three times", b.got)
	}
}

func TestBodyFuncOpenedPerAttempt(t *testing.T) {
	c, mt := newMockClient(t)
	var b bodies
	mt.RegisterResponder("PUT", base+"/r", b.responder(500, 200))
	opened := 0
	fn := func() (io.Reader, error) { opened++; return strings.NewReader("fresh"), nil }
	if err := c.Do(context.Background(), &Request{Method: "PUT", Path: "/r", BodyFunc: fn, Idempotent: true}, nil); err != nil {
		t.Fatal(err)
	}
	if opened != 2 || len(b.got) != 2 || b.got[1] != "fresh" {
		t.Fatalf("opened %d times, server saw %q", opened, b.got)
	}
}

func TestPlainReaderNotReplayed(t *testing.T) {
	t.Run("retryable status", func(t *testing.T) {
		c, mt := newMockClient(t)
		var b bodies
		mt.RegisterResponder("POST", base+"/r", b.responder(429, 200))
		err := c.Do(context.Background(), &Request{Method: "POST", Path: "/r", Body: plainReader{strings.NewReader("once")}}, nil)
		if !errors.Is(err, ErrBodyNotReplayable) || !HasStatus(err, 429) {
			t.Fatalf("err = %v, want ErrBodyNotReplayable wrapping the 429", err)
		}
		if len(b.got) != 1 {
			t.Fatalf("server saw %d requests, want 1", len(b.got))
		}
	})
	t.Run("network error", func(t *testing.T) {
		c, mt := newMockClient(t)
		var n atomic.Int32
		mt.RegisterResponder("GET", base+"/r", func(req *http.Request) (*http.Response, error) {
			n.Add(1)
			io.ReadAll(req.Body)
			return nil, errors.New("connection reset by peer")
		})
		err := c.Do(context.Background(), &Request{Method: "GET", Path: "/r", Body: plainReader{strings.NewReader("once")}}, nil)
		if !errors.Is(err, ErrBodyNotReplayable) || n.Load() != 1 {
			t.Fatalf("err = %v after %d calls, want ErrBodyNotReplayable after 1", err, n.Load())
		}
	})
	t.Run("unread body can still be sent", func(t *testing.T) {
		// A first attempt that failed before reading leaves the reader whole.
		c, mt := newMockClient(t)
		var b bodies
		mt.RegisterResponder("POST", base+"/r", httpmock.Responder(httpmock.ConnectionFailure).Then(b.responder(200)))
		err := c.Do(context.Background(), &Request{Method: "POST", Path: "/r", Body: plainReader{strings.NewReader("once")}}, nil)
		if err != nil || len(b.got) != 1 || b.got[0] != "once" {
			t.Fatalf("err=%v server saw %q", err, b.got)
		}
	})
}

// TestBodyStreamed proves that bodies are not buffered before sending
// (go-retryablehttp reads unknown readers fully into memory by default):
// the second chunk of each body is produced only after the server has
// received the first, so a buffering client would deadlock.
func TestBodyStreamed(t *testing.T) {
	got := make(chan string, 1)
	firstSeen := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 5)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			t.Errorf("server: %v", err)
			return
		}
		firstSeen <- struct{}{}
		rest, _ := io.ReadAll(r.Body)
		got <- string(buf) + string(rest)
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	c := New(Config{BaseURL: u, HTTPClient: srv.Client(), Retry: fastRetry})

	producer := func() io.Reader {
		pr, pw := io.Pipe()
		go func() {
			pw.Write([]byte("first"))
			select {
			case <-firstSeen:
				pw.Write([]byte("-second"))
				pw.Close()
			case <-time.After(10 * time.Second):
				pw.CloseWithError(errors.New("server never saw the first chunk: body buffered"))
			}
		}()
		return pr
	}
	for name, req := range map[string]*Request{
		"plain reader": {Method: "POST", Path: "/up", Body: producer(), ContentType: "text/csv"},
		"BodyFunc":     {Method: "POST", Path: "/up", BodyFunc: func() (io.Reader, error) { return producer(), nil }, ContentType: "text/csv"},
	} {
		if err := c.Do(context.Background(), req, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s := <-got; s != "first-second" {
			t.Fatalf("%s: server got %q", name, s)
		}
	}
}

func TestErrorParsing(t *testing.T) {
	for _, tc := range []struct {
		name, body                  string
		status                      int
		code, msg, uri, scim, inErr string
	}{
		{"generic", `{"error":"not_found","message":"report 7 not found"}`, 404, "not_found", "report 7 not found", "", "", "404 Not Found: not_found: report 7 not found"},
		{"oauth", `{"error":"invalid_client","error_description":"bad client","error_uri":"https://e.test/doc"}`, 400, "invalid_client", "bad client", "https://e.test/doc", "", "invalid_client: bad client"},
		{"scim", `{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"409","scimType":"uniqueness","detail":"userName taken"}`, 409, "uniqueness", "userName taken", "", "uniqueness", "uniqueness: userName taken"},
		{"nested", `{"error":{"code":42,"message":"quota exceeded"}}`, 403, "42", "quota exceeded", "", "", "42: quota exceeded"},
		{"code only", `{"error":"boom"}`, 400, "boom", "", "", "", "400 Bad Request: boom"},
		{"text", "upstream timed out\n", 502, "", "upstream timed out", "", "", "502 Bad Gateway: upstream timed out"},
		{"html", "<html><body>Bad gateway</body></html>", 400, "", "", "", "", "400 Bad Request"},
		{"empty", "", 404, "", "", "", "", "404 Not Found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, mt := newMockClient(t, func(cfg *Config) { cfg.Retry.NoRetries = true })
			mt.RegisterResponder("GET", base+"/report/v1/x", httpmock.NewStringResponder(tc.status, tc.body))
			err := c.Do(context.Background(), &Request{Method: "GET", Path: "/report/v1/x", Query: url.Values{"q": {"1"}}}, nil)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.StatusCode != tc.status || e.Code != tc.code || e.Message != tc.msg || e.URI != tc.uri || e.SCIMType != tc.scim {
				t.Fatalf("got %+v", e)
			}
			if e.Method != "GET" || e.Path != "/report/v1/x" || string(e.Body) != tc.body {
				t.Fatalf("method %q path %q body %q", e.Method, e.Path, e.Body)
			}
			if !strings.Contains(err.Error(), tc.inErr) || !strings.HasPrefix(err.Error(), "partner: GET /report/v1/x: ") {
				t.Fatalf("Error() = %q, want it to contain %q", err.Error(), tc.inErr)
			}
		})
	}
}

// TestErrorBodyCapped: an error keeps the first 64 KiB of the body.
func TestErrorBodyCapped(t *testing.T) {
	big := `{"error":"too_big","message":"` + strings.Repeat("x", 70<<10) + `"}`
	{
		c, mt := newMockClient(t)
		mt.RegisterResponder("GET", base+"/x", httpmock.NewStringResponder(400, big))
		err := c.Do(context.Background(), &Request{Method: "GET", Path: "/x"}, nil)
		var e *Error
		if !errors.As(err, &e) || len(e.Body) != 64<<10 || !bytes.Equal(e.Body, []byte(big)[:64<<10]) {
			t.Fatalf("body of %d bytes kept, want the first 64 KiB", len(e.Body))
		}
	}
}

// TestErrorRetryAfter: an error carries the Retry-After of its answer.
func TestErrorRetryAfter(t *testing.T) {
	{
		c, mt := newMockClient(t, func(cfg *Config) { cfg.Retry.NoRetries = true })
		r := httpmock.NewStringResponse(429, "")
		r.Header.Set("Retry-After", "17")
		mt.RegisterResponder("GET", base+"/x", httpmock.ResponderFromResponse(r))
		err := c.Do(context.Background(), &Request{Method: "GET", Path: "/x"}, nil)
		var e *Error
		if !errors.As(err, &e) || e.RetryAfter != 17*time.Second {
			t.Fatalf("err = %#v, want RetryAfter 17s", err)
		}
	}
}

func TestHeaders(t *testing.T) {
	c, mt := newMockClient(t, func(cfg *Config) {
		cfg.Env = "sandbox-7"
		cfg.UserAgent = "partner-go/test app/1"
		cfg.Header = http.Header{"Ocp-Subscription-Key": {"k1"}}
	})
	var h headerLog
	mt.RegisterResponder("POST", base+"/json", h.record)
	mt.RegisterResponder("POST", base+"/csv", h.record)
	mt.RegisterResponder("POST", "https://storage.other.test/upload", h.record)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Do(ctx, &Request{Method: "POST", Path: "/json", JSON: map[string]string{"a": "b"}, Header: http.Header{"X-Op-Header": {"r1"}}}, nil))
	must(c.Do(ctx, &Request{Method: "POST", Path: "/csv", Body: strings.NewReader("a,b\n"), ContentType: "text/csv"}, nil))
	must(c.Do(ctx, &Request{Method: "POST", URL: "https://storage.other.test/upload", Body: strings.NewReader("x"), ContentType: "text/csv"}, nil))

	j, csv, up := h.seen[0], h.seen[1], h.seen[2]
	for name, want := range map[string]string{
		"x-svc-env": "sandbox-7", "User-Agent": "partner-go/test app/1", "Ocp-Subscription-Key": "k1",
		"Content-Type": "application/json", "Accept": "application/json", "X-Op-Header": "r1",
	} {
		if got := j.Get(name); got != want {
			t.Errorf("JSON request: %s = %q, want %q", name, got, want)
		}
	}
	if csv.Get("Content-Type") != "text/csv" || csv.Get("X-Op-Header") != "" ||
		len(csv.Get("X-Request-Id")) != 36 || csv.Get("X-Request-Id") == j.Get("X-Request-Id") {
		t.Errorf("CSV request headers: %v", csv)
	}
	if up.Get("Ocp-Subscription-Key") != "" || up.Get("x-svc-env") != "" || up.Get("Authorization") != "" {
		t.Errorf("absolute URL on another host got service headers: %v", up)
	}
}

type listParams struct {
	IntegrationID string   `url:"integration_id"`
	IncludeErrors bool     `url:"include_errors,omitempty"`
	MaxErrors     int      `url:"max_errors,omitempty"`
	Tags          []string `url:"tag,omitempty"`
	Note          *string  `url:"note,omitempty"`
}

func TestQueryEncoding(t *testing.T) {
	c, mt := newMockClient(t)
	var got []string
	mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		got = append(got, req.URL.String())
		return httpmock.NewStringResponse(200, "{}"), nil
	})
	ctx := context.Background()
	note := "a b&c"
	for _, r := range []*Request{
		{Method: "GET", Path: "/bulk/v1/status/i1", Query: listParams{IntegrationID: "i 1", IncludeErrors: true, Tags: []string{"x", "y"}, Note: &note}},
		{Method: "GET", Path: "/bulk/v1/status/i1", Query: &listParams{IntegrationID: "i1"}},
		{Method: "GET", Path: "/x?keep=1", Query: url.Values{"add": {"2"}}},
	} {
		if err := c.Do(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		base + "/bulk/v1/status/i1?include_errors=true&integration_id=i+1&note=a+b%26c&tag=x&tag=y",
		base + "/bulk/v1/status/i1?integration_id=i1",
		base + "/x?add=2&keep=1",
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("URL %d = %s, want %s", i, got[i], want[i])
		}
	}
	if err := c.Do(ctx, &Request{Method: "GET", Path: "/x", Query: 42}, nil); err == nil {
		t.Error("a query that is not a struct was accepted")
	}
}

type objectID string

func TestPathOf(t *testing.T) {
	for _, tc := range []struct {
		path   string
		values []any
		want   string
	}{
		{"/report/v1/list", nil, "/report/v1/list"},
		{"/app/v1/object/{object_id}/audit", []any{"o-1"}, "/app/v1/object/o-1/audit"},
		{"/app/v1/object/{object_id}/audit", []any{"a/b?c#d e"}, "/app/v1/object/a%2Fb%3Fc%23d%20e/audit"},
		{"/app/v1/object/{object_id}/audit", []any{objectID("x/y")}, "/app/v1/object/x%2Fy/audit"},
		{"/report/v1/{reportId}/data", []any{int64(42)}, "/report/v1/42/data"},
		{"/api/scim/v2/Users/{user_id}", []any{".."}, "/api/scim/v2/Users/%2E%2E"},
		{"/api/scim/v2/Users/{user_id}", []any{"."}, "/api/scim/v2/Users/%2E"},
		{"/a/{w}/{x}/{y}/{z}", []any{"x y", -7, int32(9), uint8(200)}, "/a/x%20y/-7/9/200"},
		{"/a/{id}", []any{"{b}"}, "/a/%7Bb%7D"},
	} {
		rt := PathOf(tc.path, tc.values...)
		if rt.err != nil || rt.String() != tc.want || rt.Template() != tc.path {
			t.Errorf("PathOf(%s, %v) = %q (template %q), %v; want %q", tc.path, tc.values, rt, rt.Template(), rt.err, tc.want)
		}
	}
	// The escaped path reaches the wire as it is: no segment climbs.
	c, mt := newMockClient(t)
	var paths []string
	mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		paths = append(paths, req.URL.EscapedPath())
		return httpmock.NewStringResponse(200, "{}"), nil
	})
	for _, id := range []string{"..", "a/b", "ü"} {
		if err := c.Do(context.Background(), &Request{Method: "GET", Route: PathOf("/api/scim/v2/Users/{user_id}", id)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"/api/scim/v2/Users/%2E%2E", "/api/scim/v2/Users/a%2Fb", "/api/scim/v2/Users/%C3%BC"}
	for i := range want {
		if paths[i] != want[i] {
			t.Errorf("wire path %q, want %q", paths[i], want[i])
		}
	}
}

// A Route whose placeholders do not match its values is an error of Do
// and Send, and nothing is sent.
func TestPathOfMismatch(t *testing.T) {
	c, mt := newMockClient(t)
	mt.RegisterNoResponder(httpmock.NewStringResponder(200, "{}"))
	for _, tc := range []struct {
		path   string
		values []any
		want   string
	}{
		{"/app/v1/object/{object_id}/audit", nil, `partner: path "/app/v1/object/{object_id}/audit" has 1 placeholders, given 0 values`},
		{"/report/v1/list", []any{"x"}, `partner: path "/report/v1/list" has 0 placeholders, given 1 values`},
		{"/a/{x}/{y}", []any{"x"}, `partner: path "/a/{x}/{y}" has 2 placeholders, given 1 values`},
		{"/a/{x", []any{"x"}, `partner: path "/a/{x": unclosed placeholder`},
		{"/a/{x}", []any{1.5}, `partner: path "/a/{x}": {x}: value of type float64, want a string or an integer`},
	} {
		r := &Request{Method: "GET", Route: PathOf(tc.path, tc.values...)}
		if err := c.Do(context.Background(), r, nil); err == nil || err.Error() != tc.want {
			t.Errorf("Do %s with %v: %v, want %s", tc.path, tc.values, err, tc.want)
		}
		if resp, err := c.Send(context.Background(), r); err == nil || err.Error() != tc.want {
			if resp != nil {
				resp.Body.Close()
			}
			t.Errorf("Send %s with %v: %v, want %s", tc.path, tc.values, err, tc.want)
		}
	}
	both := &Request{Method: "GET", Path: "/a/x", Route: PathOf("/a/{x}", "x")}
	if err := c.Do(context.Background(), both, nil); err == nil || !strings.Contains(err.Error(), "both Path") {
		t.Errorf("Do with both Path and Route: %v", err)
	}
	withURL := &Request{Method: "GET", URL: base + "/elsewhere", Route: PathOf("/a/{x}", "x")}
	if err := c.Do(context.Background(), withURL, nil); err == nil || !strings.Contains(err.Error(), "both URL and a path") {
		t.Errorf("Do with both URL and Route: %v", err)
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

func TestBaseURLWithPath(t *testing.T) {
	c, mt := newMockClient(t, func(cfg *Config) { cfg.BaseURL, _ = url.Parse(base + "/gw/partner") })
	mt.RegisterResponder("GET", base+"/gw/partner/report/v1/x", httpmock.NewStringResponder(200, "{}"))
	if err := c.Do(context.Background(), &Request{Method: "GET", Path: "/report/v1/x"}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestDecode(t *testing.T) {
	c, mt := newMockClient(t)
	mt.RegisterResponder("GET", base+"/json", httpmock.NewStringResponder(200, `{"n":3}`))
	mt.RegisterResponder("GET", base+"/empty", httpmock.NewStringResponder(200, ``))
	mt.RegisterResponder("DELETE", base+"/none", httpmock.NewStringResponder(204, ``))
	mt.RegisterResponder("GET", base+"/bad", httpmock.NewStringResponder(200, `{"n":`))
	ctx := context.Background()
	var v struct{ N int }
	if err := c.Do(ctx, &Request{Method: "GET", Path: "/json"}, &v); err != nil || v.N != 3 {
		t.Fatalf("json: %v %+v", err, v)
	}
	if err := c.Do(ctx, &Request{Method: "GET", Path: "/empty"}, &v); err != nil {
		t.Fatalf("empty body: %v", err)
	}
	if err := c.Do(ctx, &Request{Method: "DELETE", Path: "/none"}, &v); err != nil {
		t.Fatalf("204: %v", err)
	}
	var raw string
	dec := Decoder(func(r io.Reader) error { b, err := io.ReadAll(r); raw = string(b); return err })
	if err := c.Do(ctx, &Request{Method: "GET", Path: "/json"}, dec); err != nil || raw != `{"n":3}` {
		t.Fatalf("decoder: %v %q", err, raw)
	}
	if err := c.Do(ctx, &Request{Method: "GET", Path: "/bad"}, &v); err == nil || !strings.Contains(err.Error(), "partner: GET /bad: reading response") {
		t.Fatalf("truncated JSON: %v", err)
	}
}

// rawAnswer keeps the bytes it is given, checking nothing itself.
type rawAnswer struct{ b string }

func (r *rawAnswer) UnmarshalJSON(b []byte) error { r.b = string(b); return nil }

// TestDecodeUnmarshalerGetsOneValidValue: a type with its own
// UnmarshalJSON gets only valid JSON, one value of it, as with
// encoding/json, though Do hands it the body's bytes directly.
func TestDecodeUnmarshalerGetsOneValidValue(t *testing.T) {
	c, mt := newMockClient(t)
	ctx := context.Background()
	for _, tc := range []struct{ body, want string }{
		{`{"n":3}`, `{"n":3}`},
		{"{\"n\":3}\n", "{\"n\":3}\n"},
		{`{"n":3} {"n":4}`, `{"n":3}`},
		{`{"n":`, ""},
		{`{"n":3,}`, ""},
	} {
		mt.RegisterResponder("GET", base+"/raw", httpmock.NewStringResponder(200, tc.body))
		var r rawAnswer
		err := c.Do(ctx, &Request{Method: "GET", Path: "/raw"}, &r)
		switch {
		case tc.want == "" && (err == nil || r.b != ""):
			t.Errorf("%q: got %q, %v; want an error and no call", tc.body, r.b, err)
		case tc.want != "" && (err != nil || r.b != tc.want):
			t.Errorf("%q: got %q, %v; want %q", tc.body, r.b, err, tc.want)
		}
	}
}

// TestErrorsHideURLQuery checks that a network failure's error does not
// repeat the URL's query string, where signed URLs keep their signature.
func TestErrorsHideURLQuery(t *testing.T) {
	c, mt := newMockClient(t, func(cfg *Config) { cfg.Retry.MaxRetries = 1 })
	mt.RegisterNoResponder(httpmock.ConnectionFailure)
	err := c.Do(context.Background(), &Request{Method: "GET", URL: "https://storage.other.test/u?sig=SECRETSIG", Query: url.Values{"file_token": {"SECRETTOK"}}}, nil)
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mt.RegisterNoResponder(func(*http.Request) (*http.Response, error) {
		cancel()
		return nil, errors.New("boom")
	})
	err = c.Do(ctx, &Request{Method: "GET", Path: "/x", Query: url.Values{"file_token": {"SECRETTOK"}}}, nil)
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("err = %v, want context.Canceled without the query", err)
	}
}

// closeCounter counts CloseIdleConnections calls on a transport.
type closeCounter struct {
	http.RoundTripper
	closes atomic.Int32
}

func (c *closeCounter) CloseIdleConnections() { c.closes.Add(1) }

// TestFailedRequestKeepsIdleConnections checks that a request that finally
// fails does not empty the shared connection pool, as go-retryablehttp
// would by calling CloseIdleConnections on its client.
func TestFailedRequestKeepsIdleConnections(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	cc := &closeCounter{RoundTripper: srv.Client().Transport}
	u, _ := url.Parse(srv.URL)
	c := New(Config{BaseURL: u, HTTPClient: &http.Client{Transport: cc}, Retry: RetryPolicy{MaxRetries: 1, MinWait: time.Millisecond, MaxWait: time.Millisecond}})
	err := c.Do(context.Background(), &Request{Method: http.MethodGet, Path: "/x"}, nil)
	if !HasStatus(err, http.StatusServiceUnavailable) {
		t.Fatalf("err = %v, want 503", err)
	}
	if n := cc.closes.Load(); n != 0 {
		t.Errorf("CloseIdleConnections called %d times", n)
	}
}

// TestRedirectToOtherHostDropsFixedHeaders checks that a gateway key set
// with the fixed headers, and the trace context, do not follow a
// redirect to another host.
func TestRedirectToOtherHostDropsFixedHeaders(t *testing.T) {
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator()) })
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), sc)
	var got http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
	}))
	defer other.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Gateway-Key") != "k1" || r.Header.Get("traceparent") == "" {
			t.Errorf("origin did not get the gateway key and the trace context: %v", r.Header)
		}
		// 127.0.0.1 and localhost are different hosts to net/http.
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/landing", http.StatusFound)
	}))
	defer origin.Close()
	u, _ := url.Parse(origin.URL)
	c := New(Config{BaseURL: u, Header: http.Header{"X-Gateway-Key": {"k1"}}, Env: "sandbox1"})
	if err := c.Do(ctx, &Request{Method: http.MethodGet, Path: "/x"}, nil); err != nil {
		t.Fatal(err)
	}
	if got == nil {
		t.Fatal("redirect not followed")
	}
	if v := got.Get("X-Gateway-Key"); v != "" {
		t.Errorf("gateway key followed the redirect: %q", v)
	}
	if v := got.Get("traceparent"); v != "" {
		t.Errorf("trace context followed the redirect: %q", v)
	}
}
