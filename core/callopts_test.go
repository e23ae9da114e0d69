package core

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"golang.org/x/oauth2"
)

// TestCallOptionsRetries: a call's MaxRetries and NoRetries replace the
// client's for that call only.
func TestCallOptionsRetries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  *CallOptions
		calls int
	}{
		{"client's", nil, 4}, // fastRetry: 3 retries
		{"none", &CallOptions{NoRetries: true}, 1},
		{"more", &CallOptions{MaxRetries: 6}, 7},
		{"fewer", &CallOptions{MaxRetries: 1}, 2},
	} {
		c, mt := newMockClient(t)
		mt.RegisterResponder("GET", base+"/r", sequence(503))
		ctx := context.Background()
		if tc.opts != nil {
			ctx = WithCallOptions(ctx, *tc.opts)
		}
		if err := c.Do(ctx, &Request{Method: "GET", Path: "/r"}, nil); !HasStatus(err, 503) || calls(mt) != tc.calls {
			t.Errorf("%s: err %v after %d calls, want the 503 after %d", tc.name, err, calls(mt), tc.calls)
		}
		// The next call without options has the client's retries.
		mt.Reset()
		mt.RegisterResponder("GET", base+"/r", sequence(503))
		c.Do(context.Background(), &Request{Method: "GET", Path: "/r"}, nil)
		if calls(mt) != 4 {
			t.Errorf("%s: a later call made %d calls, want 4", tc.name, calls(mt))
		}
	}
}

// blockUntilDone answers like a service that never answers: it returns
// once the attempt's context ends. wrote says whether the request went
// out first.
func blockUntilDone(wrote bool) func(*http.Request) (*http.Response, error) {
	return func(req *http.Request) (*http.Response, error) {
		if tr := httptrace.ContextClientTrace(req.Context()); wrote && tr != nil && tr.WroteHeaders != nil {
			tr.WroteHeaders()
		}
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
}

// firstThen answers the first request with first, the others with 200.
func firstThen(first httpmock.Responder) httpmock.Responder {
	var n atomic.Int32
	return func(req *http.Request) (*http.Response, error) {
		if n.Add(1) == 1 {
			return first(req)
		}
		return httpmock.NewStringResponse(200, `{"ok":true}`), nil
	}
}

// TestAttemptTimeout: an attempt that runs past AttemptTimeout is
// retried within the call when that is safe (a read, a write not yet
// written), and a write that went out is not repeated and ends outcome
// unknown, with the attempt timeout as its error.
func TestAttemptTimeout(t *testing.T) {
	// Only the first attempt blocks; a later one answers at once, and up
	// to five of them may run past d before the call fails.
	const d = 25 * time.Millisecond
	for _, tc := range []struct {
		name   string
		method string
		wrote  bool
		ok     bool
	}{
		{"read", "GET", true, true},
		{"write not written", "POST", false, true},
		{"write written", "POST", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each waits out its own timeout
			c, mt := newMockClient(t)
			mt.RegisterResponder(tc.method, base+"/a", firstThen(blockUntilDone(tc.wrote)))
			var info ResponseInfo
			ctx := WithCallOptions(context.Background(), CallOptions{AttemptTimeout: d, MaxRetries: 5, Capture: &info})
			err := c.Do(ctx, &Request{Method: tc.method, Path: "/a", JSON: map[string]int{"a": 1}}, nil)
			if tc.ok {
				if err != nil || info.Attempts < 2 || info.StatusCode != 200 {
					t.Errorf("err %v, %+v; want a success after the timed-out attempt", err, info)
				}
				return
			}
			if !IsOutcomeUnknown(err) || calls(mt) != 1 || !strings.Contains(err.Error(), "attempt timed out") || !isTimeout(err) {
				t.Errorf("err %v after %d calls; want an outcome-unknown attempt timeout after 1", err, calls(mt))
			}
		})
	}
}

// TestCallOptionsKeepOutcomeUnknown: whatever a call sets, a write that
// is not safe to repeat is repeated only when it was certainly not
// processed, and its error says when it may have been.
func TestCallOptionsKeepOutcomeUnknown(t *testing.T) {
	refused := func(*http.Request) (*http.Response, error) { return nil, errors.New("connection refused") }
	for _, opts := range []CallOptions{
		{MaxRetries: 10},
		{MaxRetries: 10, AttemptTimeout: time.Hour, Header: http.Header{"X-Team": {"a"}}},
		{NoRetries: true},
	} {
		for _, tc := range []struct {
			name      string
			responder httpmock.Responder
			calls     int // the most calls allowed
			unknown   bool
		}{
			{"500", sequence(500), 1, true},
			{"dropped after write", dropAfterWrite, 1, true},
			{"429 then 503", sequence(429, 503), 2, true},
			{"refused before write", refused, 11, false},
		} {
			c, mt := newMockClient(t)
			mt.RegisterResponder("POST", base+"/w", tc.responder)
			ctx := WithCallOptions(context.Background(), opts)
			err := c.Do(ctx, &Request{Method: "POST", Path: "/w", JSON: map[string]int{"a": 1}}, nil)
			if opts.NoRetries && tc.name == "429 then 503" {
				tc.unknown = false // the 429 is not retried: the 503 never comes
			}
			if err == nil || IsOutcomeUnknown(err) != tc.unknown || calls(mt) > tc.calls {
				t.Errorf("%+v %s: err %v after %d calls; want IsOutcomeUnknown %v after at most %d",
					opts, tc.name, err, calls(mt), tc.unknown, tc.calls)
			}
		}
	}
}

// TestCallOptionsHeader: a call's headers go to the service and no
// further; a header the SDK sets itself is refused before sending.
func TestCallOptionsHeader(t *testing.T) {
	c, mt := newMockClient(t, func(cfg *Config) { cfg.Env = "sandbox" })
	var h headerLog
	mt.RegisterResponder("GET", base+"/h", h.record)
	mt.RegisterResponder("PUT", "https://storage.other.test/up", h.record)
	ctx := WithCallOptions(context.Background(), CallOptions{Header: http.Header{"X-Correlation": {"c-1"}}})
	if err := c.Do(ctx, &Request{Method: "GET", Path: "/h"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, &Request{Method: "PUT", URL: "https://storage.other.test/up", Body: strings.NewReader("x")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(context.Background(), &Request{Method: "GET", Path: "/h"}, nil); err != nil {
		t.Fatal(err)
	}
	seen := h.seen
	if seen[0].Get("X-Correlation") != "c-1" || seen[1].Get("X-Correlation") != "" || seen[2].Get("X-Correlation") != "" {
		t.Errorf("X-Correlation sent as %q, %q (other host), %q (no options)",
			seen[0].Get("X-Correlation"), seen[1].Get("X-Correlation"), seen[2].Get("X-Correlation"))
	}
	for _, k := range []string{"Authorization", "x-request-id", "X-Svc-Env", "Content-Type", "traceparent"} {
		ctx := WithCallOptions(context.Background(), CallOptions{Header: http.Header{k: {"v"}}})
		err := c.Do(ctx, &Request{Method: "GET", Path: "/h"}, nil)
		if err == nil || !strings.Contains(err.Error(), "is set by the SDK") {
			t.Errorf("header %s: err %v, want a refusal", k, err)
		}
	}
	if calls(mt) != 3 {
		t.Errorf("%d requests sent, want 3: a refused header must send nothing", calls(mt))
	}
}

// TestRequestID: one id per call, the same on every attempt, in the
// header, the capture, the error and the log records; another name, or
// none, by configuration; the service's own id read when its header is
// named.
func TestRequestID(t *testing.T) {
	var logs bytes.Buffer
	c, mt := newMockClient(t, func(cfg *Config) {
		cfg.ServiceRequestIDHeader = "X-Svc-Request"
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	var ids []string
	answer := func(statuses ...int) httpmock.Responder {
		next := sequence(statuses...)
		return func(req *http.Request) (*http.Response, error) {
			ids = append(ids, req.Header.Get("X-Request-Id"))
			resp, err := next(req)
			resp.Header.Set("X-Svc-Request", "svc-"+req.Header.Get("X-Request-Id"))
			return resp, err
		}
	}
	mt.RegisterResponder("GET", base+"/ok", answer(503, 200))
	mt.RegisterResponder("GET", base+"/missing", answer(404))
	var info ResponseInfo
	ctx := WithCallOptions(context.Background(), CallOptions{Capture: &info})
	if err := c.Do(ctx, &Request{Method: "GET", Path: "/ok"}, nil); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2 || ids[0] != ids[1] || len(ids[0]) != 36 {
		t.Fatalf("ids %q, want one id on both attempts", ids)
	}
	want := ResponseInfo{StatusCode: 200, Attempts: 2, RequestID: ids[0], ServiceRequestID: "svc-" + ids[0]}
	if got := info; got.Header.Get("X-Svc-Request") == "" || got.Duration <= 0 || !sameInfo(got, want) {
		t.Fatalf("capture %+v, want %+v", info, want)
	}
	err := c.Do(ctx, &Request{Method: "GET", Path: "/missing"}, nil)
	var e *Error
	if !errors.As(err, &e) || e.RequestID != ids[2] || e.ServiceRequestID != "svc-"+ids[2] {
		t.Fatalf("err %#v, want RequestID %q", err, ids[2])
	}
	if ids[2] == ids[0] {
		t.Errorf("two calls sent the same id %s", ids[0])
	}
	if !sameInfo(info, ResponseInfo{StatusCode: 404, Attempts: 1, RequestID: ids[2], ServiceRequestID: "svc-" + ids[2]}) {
		t.Errorf("capture of the failed call: %+v", info)
	}
	if strings.Count(logs.String(), "request_id="+ids[0]) != 2 {
		t.Errorf("log records without the request ids:\n%s", logs.String())
	}
}

// TestRequestIDIsRandomUUID: a request id is a version 4 UUID in its
// text form, and ids do not repeat.
func TestRequestIDIsRandomUUID(t *testing.T) {
	t.Parallel()
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := make(map[string]bool)
	for range 1000 {
		id := newRequestID()[0]
		if !uuid.MatchString(id) || seen[id] {
			t.Fatalf("request id %q: not a version 4 UUID, or a repeat", id)
		}
		seen[id] = true
	}
}

// sameInfo compares the status, attempts and ids of two captures.
func sameInfo(a, b ResponseInfo) bool {
	a.Header, a.Duration, b.Header, b.Duration = nil, 0, nil, 0
	return reflect.DeepEqual(a, b)
}

// TestRequestIDHeaderName: the request id header's name is the client's
// choice; NoRequestID sends none.
func TestRequestIDHeaderName(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		name string
	}{
		{func(cfg *Config) { cfg.RequestIDHeader = "X-Correlation-Id" }, "X-Correlation-Id"},
		{func(cfg *Config) { cfg.NoRequestID = true }, ""},
	} {
		c, mt := newMockClient(t, tc.edit)
		var h http.Header
		mt.RegisterResponder("GET", base+"/h", func(req *http.Request) (*http.Response, error) {
			h = req.Header
			return httpmock.NewStringResponse(404, "{}"), nil
		})
		err := c.Do(context.Background(), &Request{Method: "GET", Path: "/h"}, nil)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("err %v, want an *Error", err)
		}
		if tc.name == "" {
			if h.Get("X-Request-Id") != "" || e.RequestID != "" {
				t.Errorf("NoRequestID: header %q, error %q", h.Get("X-Request-Id"), e.RequestID)
			}
			continue
		}
		if h.Get(tc.name) == "" || h.Get(tc.name) != e.RequestID || h.Get("X-Request-Id") != "" {
			t.Errorf("%s: headers %v, error's id %q", tc.name, h, e.RequestID)
		}
	}
}

// TestCallOptionsNotOnTokenRequest: the token request a call makes for
// itself does not take the call's options (its headers, its capture).
func TestCallOptionsNotOnTokenRequest(t *testing.T) {
	tokens, mt := newMockClient(t)
	c := tokens.WithTokens(&fetchingTokens{c: tokens})
	var tokenHeader, callHeader string
	mt.RegisterResponder("POST", base+"/token", func(req *http.Request) (*http.Response, error) {
		tokenHeader = req.Header.Get("X-Team")
		return httpmock.NewStringResponse(200, `{"access_token":"t"}`), nil
	})
	mt.RegisterResponder("GET", base+"/r", func(req *http.Request) (*http.Response, error) {
		callHeader = req.Header.Get("X-Team")
		return httpmock.NewStringResponse(200, `{}`), nil
	})
	var info ResponseInfo
	ctx := WithCallOptions(context.Background(), CallOptions{Header: http.Header{"X-Team": {"a"}}, Capture: &info})
	if err := c.Do(ctx, &Request{Method: "GET", Path: "/r"}, nil); err != nil {
		t.Fatal(err)
	}
	if callHeader != "a" || tokenHeader != "" || info.StatusCode != 200 {
		t.Errorf("call header %q, token request header %q, capture %+v", callHeader, tokenHeader, info)
	}
}

// fetchingTokens fetches a token through c with the caller's context,
// as the oauth package does.
type fetchingTokens struct{ c *Client }

func (f *fetchingTokens) Token(ctx context.Context) (*oauth2.Token, error) {
	var tok oauth2.Token
	err := f.c.Do(ctx, &Request{Method: "POST", Path: "/token", NoAuth: true, JSON: map[string]string{"grant_type": "client_credentials"}}, &tok)
	return &tok, err
}

func (f *fetchingTokens) Invalidate(*oauth2.Token) {}

// TestCallHeaderNotPastRedirect: a call's headers follow a redirect on
// the service's host, not one to another host.
func TestCallHeaderNotPastRedirect(t *testing.T) {
	c, mt := newMockClient(t)
	got := map[string]string{}
	record := func(req *http.Request) (*http.Response, error) {
		got[req.URL.Host+req.URL.Path] = req.Header.Get("X-Team")
		return httpmock.NewStringResponse(200, "{}"), nil
	}
	mt.RegisterResponder("GET", base+"/away", redirectTo("https://files.other.test/x"))
	mt.RegisterResponder("GET", base+"/near", redirectTo(base+"/y"))
	mt.RegisterResponder("GET", "https://files.other.test/x", record)
	mt.RegisterResponder("GET", base+"/y", record)
	ctx := WithCallOptions(context.Background(), CallOptions{Header: http.Header{"X-Team": {"a"}}})
	for _, p := range []string{"/away", "/near"} {
		if err := c.Do(ctx, &Request{Method: "GET", Path: p}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got["files.other.test/x"] != "" || got["api.example.test/y"] != "a" {
		t.Errorf("X-Team after redirects: %q", got)
	}
}

// TestReplayHeadersRefused: Idempotency-Key and X-Idempotency-Key, in
// any case, would let net/http replay a write after a broken connection;
// a call that sets one fails before sending, saying why.
func TestReplayHeadersRefused(t *testing.T) {
	var sent atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { sent.Add(1) }))
	defer srv.Close()
	c := loopbackClient(t, srv)
	for _, k := range []string{"Idempotency-Key", "x-idempotency-key", "IDEMPOTENCY-KEY"} {
		ctx := WithCallOptions(context.Background(), CallOptions{Header: http.Header{k: {"k-1"}}})
		err := c.Do(ctx, &Request{Method: http.MethodPost, Path: "/bulk", JSON: 1}, nil)
		if err == nil || !strings.Contains(err.Error(), "send a write again after a broken connection") {
			t.Errorf("%s: %v, want a refusal that says why", k, err)
		}
	}
	if n := sent.Load(); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}
