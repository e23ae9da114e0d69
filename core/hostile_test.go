package core

// Tests of the client against a hostile server (docs/reliability.md,
// "Hostile server"), each over loopback.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// loopbackClient returns a Client on srv with quick retries.
func loopbackClient(t *testing.T, srv *httptest.Server, edit ...func(*Config)) *Client {
	t.Helper()
	u, _ := url.Parse(srv.URL)
	cfg := Config{BaseURL: u, Retry: RetryPolicy{MaxRetries: 1, MinWait: time.Microsecond, MaxWait: time.Microsecond, NoBudget: true}}
	for _, e := range edit {
		e(&cfg)
	}
	c := New(cfg)
	t.Cleanup(c.cfg.HTTPClient.CloseIdleConnections)
	return c
}

// received counts the requests a server got and keeps their bodies.
type received struct {
	n      atomic.Int32
	bodies chan string
}

func newReceived() *received { return &received{bodies: make(chan string, 16)} }

func (r *received) handler(w http.ResponseWriter, req *http.Request) {
	r.n.Add(1)
	b, _ := io.ReadAll(req.Body)
	select {
	case r.bodies <- string(b):
	default:
	}
	w.Write([]byte(`{"ok":true}`))
}

// redirectServers starts the service, which redirects /307, /308 and
// /302 to the other host and /here to /same on itself, and the other
// host; svcCalls counts the service's redirects.
func redirectServers(t *testing.T) (svc *httptest.Server, other, same *received, svcCalls *atomic.Int32) {
	other, same, svcCalls = newReceived(), newReceived(), new(atomic.Int32)
	otherSrv := httptest.NewServer(http.HandlerFunc(other.handler))
	t.Cleanup(otherSrv.Close)
	codes := map[string]int{"/307": http.StatusTemporaryRedirect, "/308": http.StatusPermanentRedirect, "/302": http.StatusFound}
	svc = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/same" {
			same.handler(w, req)
			return
		}
		svcCalls.Add(1)
		if req.URL.Path == "/here" {
			http.Redirect(w, req, "/same", http.StatusTemporaryRedirect)
			return
		}
		http.Redirect(w, req, otherSrv.URL+"/x", codes[req.URL.Path])
	}))
	t.Cleanup(svc.Close)
	return svc, other, same, svcCalls
}

// TestCrossHostRedirectCarriesNoBody: a 307 or 308 answer to a request
// with a body, pointing at another host, is refused before anything is
// sent there, and not retried.
func TestCrossHostRedirectCarriesNoBody(t *testing.T) {
	svc, other, _, svcCalls := redirectServers(t)
	c := loopbackClient(t, svc)
	body := map[string]string{"client_secret": "CS-never-elsewhere"}
	for _, p := range []string{"/307", "/308"} {
		for _, idempotent := range []bool{false, true} {
			svcCalls.Store(0)
			err := c.Do(context.Background(), &Request{Method: "POST", Path: p, JSON: body, Idempotent: idempotent}, nil)
			if !errors.Is(err, ErrCrossHostRedirect) || !strings.Contains(err.Error(), "would carry the request's body") {
				t.Errorf("POST %s (idempotent %v): %v, want ErrCrossHostRedirect saying why", p, idempotent, err)
			}
			if n := svcCalls.Load(); n != 1 {
				t.Errorf("POST %s: sent %d times, want once (a refused redirect is not retried)", p, n)
			}
		}
	}
	if n := other.n.Load(); n != 0 {
		t.Errorf("the other host got %d requests", n)
	}
}

// TestNoCrossHostRedirect: a 302 turns a POST into a GET without body,
// which is followed, unless the request forbids any cross-host redirect
// (a token request); a 307 on the same host still carries the body.
func TestNoCrossHostRedirect(t *testing.T) {
	svc, other, same, _ := redirectServers(t)
	c := loopbackClient(t, svc)
	ctx := context.Background()
	body := map[string]string{"client_secret": "CS-never-elsewhere"}
	if err := c.Do(ctx, &Request{Method: "POST", Path: "/302", JSON: body}, nil); err != nil {
		t.Errorf("POST /302: %v", err)
	}
	if b := <-other.bodies; b != "" {
		t.Errorf("the other host got a body after a 302: %q", b)
	}
	for _, p := range []string{"/302", "/307"} {
		err := c.Do(ctx, &Request{Method: "POST", Path: p, JSON: body, NoCrossHostRedirect: true}, nil)
		if !errors.Is(err, ErrCrossHostRedirect) || !strings.Contains(err.Error(), "a token request follows none") {
			t.Errorf("POST %s NoCrossHostRedirect: %v, want ErrCrossHostRedirect", p, err)
		}
	}
	if n := other.n.Load(); n != 1 {
		t.Errorf("the other host got %d requests, want only the bodiless one after the 302", n)
	}
	var out struct{ OK bool }
	if err := c.Do(ctx, &Request{Method: "POST", Path: "/here", JSON: body, NoCrossHostRedirect: true}, &out); err != nil || !out.OK {
		t.Fatalf("307 on the same host: %v %+v", err, out)
	}
	if b := <-same.bodies; !strings.Contains(b, "CS-never-elsewhere") {
		t.Errorf("307 on the same host lost the body: %q", b)
	}
}

// infiniteJSON writes the start of a JSON string and then 'a's, gzipped
// when gz, until limit bytes or the client leaves; it counts what it
// wrote before compression.
func infiniteJSON(w io.Writer, limit int64, written *atomic.Int64) {
	chunk := bytes.Repeat([]byte("a"), 32<<10)
	if _, err := w.Write([]byte(`{"id":"`)); err != nil {
		return
	}
	for n := int64(0); n < limit; n += int64(len(chunk)) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
		written.Add(int64(len(chunk)))
	}
	w.Write([]byte(`"}`))
}

// TestAnswerCapped: an answer longer than its request's cap fails with
// ErrAnswerTooLarge, is not retried, and is read no further than the cap:
// declared longer (fails before reading), of unknown length (read up to
// the cap), and gzipped (the cap counts decompressed bytes). A write cut
// this way says its outcome is unknown: the service answered 2xx.
func TestAnswerCapped(t *testing.T) {
	const limit = 1 << 20
	var written atomic.Int64
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		calls.Add(1)
		switch req.URL.Path {
		case "/declared":
			w.Header().Set("Content-Length", "1073741824")
			w.WriteHeader(200)
		case "/unknown":
			infiniteJSON(w, 64<<20, &written)
		case "/fits":
			w.Write([]byte(`{"id":"` + strings.Repeat("a", limit-10) + `"}`))
		}
	}))
	defer srv.Close()
	c := loopbackClient(t, srv)
	for _, p := range []string{"/declared", "/unknown"} {
		for _, method := range []string{"GET", "POST"} {
			calls.Store(0)
			written.Store(0)
			checkTooLarge(t, c, method, p, limit)
			if n := calls.Load(); n != 1 {
				t.Errorf("%s %s: %d attempts, want 1 (too large is not retried)", method, p, n)
			}
			// The server gets ahead by what the connection buffers, far
			// less than the 64 MiB it would send.
			if n := written.Load(); n > 16<<20 {
				t.Errorf("%s %s: the server wrote %d bytes before the client left", method, p, n)
			}
		}
	}
	// Send: the caller reading the body meets the cap.
	resp, err := c.Send(context.Background(), &Request{Method: "GET", Path: "/unknown", MaxAnswerSize: limit})
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if !errors.Is(err, ErrAnswerTooLarge) || n != limit {
		t.Fatalf("Send: read %d bytes then %v, want %d then ErrAnswerTooLarge", n, err, limit)
	}
	var out struct{ ID string }
	if err := c.Do(context.Background(), &Request{Method: "GET", Path: "/fits", MaxAnswerSize: limit}, &out); err != nil || len(out.ID) != limit-10 {
		t.Fatalf("an answer within the cap: %v (%d bytes)", err, len(out.ID))
	}
}

// checkTooLarge calls method path with the cap limit and checks that it
// fails with ErrAnswerTooLarge, its outcome unknown for a POST.
func checkTooLarge(t *testing.T, c *Client, method, path string, limit int64) {
	t.Helper()
	var out struct{ ID string }
	err := c.Do(context.Background(), &Request{Method: method, Path: path, MaxAnswerSize: limit}, &out)
	if !errors.Is(err, ErrAnswerTooLarge) || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("%s %s: %v, want ErrAnswerTooLarge", method, path, err)
	}
	if got, want := IsOutcomeUnknown(err), method == "POST"; got != want {
		t.Errorf("%s %s: IsOutcomeUnknown = %v, want %v", method, path, got, want)
	}
}

// stallServer answers with 200 and Content-Length 100 (none for
// /chunked), sends 9 bytes and then nothing until the test ends.
func stallServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	release := make(chan struct{})
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		attempts.Add(1)
		if req.URL.Path != "/chunked" {
			w.Header().Set("Content-Length", "100")
		}
		w.WriteHeader(200)
		w.Write([]byte(`{"id":"aa`))
		w.(http.Flusher).Flush()
		<-release
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	return srv, &attempts
}

// TestStalledAnswerFails: a body that sends nothing for the stall timeout
// fails the attempt with ErrAnswerStalled: a read is retried, a write not
// safe to repeat is not and says its outcome is unknown. The call must
// end long before the context's generous deadline.
func TestStalledAnswerFails(t *testing.T) {
	t.Parallel()
	srv, attempts := stallServer(t)
	c := loopbackClient(t, srv, func(cfg *Config) { cfg.StallTimeout = 10 * time.Millisecond })
	for _, tc := range []struct {
		method   string
		attempts int32
		unknown  bool
	}{{"GET", 2, false}, {"POST", 1, true}} {
		attempts.Store(0)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var out struct{ ID string }
		err := c.Do(ctx, &Request{Method: tc.method, Path: "/x", JSON: map[string]int{"a": 1}}, &out)
		cancel()
		if !errors.Is(err, ErrAnswerStalled) {
			t.Fatalf("%s: %v, want ErrAnswerStalled", tc.method, err)
		}
		if n := attempts.Load(); n != tc.attempts {
			t.Errorf("%s: %d attempts, want %d", tc.method, n, tc.attempts)
		}
		if IsOutcomeUnknown(err) != tc.unknown {
			t.Errorf("%s: IsOutcomeUnknown = %v, want %v: %v", tc.method, !tc.unknown, tc.unknown, err)
		}
	}
	// A streamed answer (Send, of unknown length) stalls for its reader
	// the same way.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := c.Send(ctx, &Request{Method: "GET", Path: "/chunked"})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); !errors.Is(err, ErrAnswerStalled) {
		t.Fatalf("reading a stalled streamed answer: %v, want ErrAnswerStalled", err)
	}
}

// TestStallTimeoutDefault: the stall timeout defaults to 60s.
func TestStallTimeoutDefault(t *testing.T) {
	if c := New(Config{}); c.cfg.StallTimeout != DefaultStallTimeout || DefaultStallTimeout != 60*time.Second {
		t.Fatalf("StallTimeout = %v", c.cfg.StallTimeout)
	}
}

// staticTokens gives one token.
type staticTokens struct{ tok *oauth2.Token }

func (s staticTokens) Token(context.Context) (*oauth2.Token, error) { return s.tok, nil }
func (staticTokens) Invalidate(*oauth2.Token)                       {}

// TestEchoedSecretsMasked: secrets a server echoes (the access and
// refresh tokens sent, the subscription key, a secret added with
// MaskSecrets, each also JSON- and URL-escaped) appear neither in the
// error, nor in the *Error's fields, nor in the log. One answer is an
// error answer, the other a malformed response whose header line
// net/http quotes in its error.
func TestEchoedSecretsMasked(t *testing.T) {
	secrets := []string{"AT-access-123456", "RT-refresh-123456", "SUBKEY-123456", "CS-client/secret+1&"}
	echo := strings.Join(secrets, " ") + " " + url.QueryEscape(secrets[3]) + ` \u0026`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/malformed" {
			conn, rw, _ := w.(http.Hijacker).Hijack()
			defer conn.Close()
			rw.WriteString("HTTP/1.1 200 OK\r\n" + secrets[0] + "\r\n\r\n")
			rw.Flush()
			return
		}
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"error":"` + secrets[1] + `","message":"token ` + req.Header.Get("Authorization") + ` rejected; ` + strings.ReplaceAll(echo, `"`, `\"`) + `","error_uri":"` + secrets[2] + `"}`))
	}))
	defer srv.Close()
	var logs bytes.Buffer
	c := loopbackClient(t, srv, func(cfg *Config) {
		cfg.Tokens = staticTokens{&oauth2.Token{AccessToken: secrets[0], RefreshToken: secrets[1]}}
		cfg.SubscriptionKey = secrets[2]
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		cfg.Retry.NoRetries = true
	})
	c.MaskSecrets(secrets[1], secrets[3])
	for _, p := range []string{"/echo", "/malformed"} {
		err := c.Do(context.Background(), &Request{Method: "GET", Path: p}, nil)
		if err == nil {
			t.Fatalf("%s: no error", p)
		}
		texts := []string{err.Error()}
		if e, ok := errors.AsType[*Error](err); ok {
			texts = append(texts, string(e.Body), e.Message, e.Code, e.URI)
			if !strings.Contains(e.Message, redactedText) {
				t.Errorf("%s: Message %q does not show where a secret was", p, e.Message)
			}
		}
		c.Logger().Debug("partner: test", "error", err, "text", err.Error())
		texts = append(texts, logs.String())
		for _, s := range append(secrets, url.QueryEscape(secrets[3]), `CS-client\/secret+1\u0026`) {
			for _, text := range texts {
				if strings.Contains(text, s) {
					t.Errorf("%s: %q appears in %q", p, s, text)
				}
			}
		}
	}
	if !strings.Contains(logs.String(), "malformed") {
		t.Errorf("no log of the failed request: %s", logs.String())
	}
}

// TestURLPasswordNotInErrors: the password of a base URL, or of an
// absolute URL, never reaches an error about it.
func TestURLPasswordNotInErrors(t *testing.T) {
	u, _ := url.Parse("https://admin:PW-hunter2@api.example.test/base")
	c := New(Config{BaseURL: u})
	for _, r := range []*Request{
		{Method: "GET", Path: "/a%zz"},
		{Method: "GET", Path: "/a%zz", Query: url.Values{"q": {"1"}}},
		{Method: "GET", URL: "https://admin:PW-hunter2@files.example.test/%zz"},
	} {
		err := c.Do(context.Background(), r, nil)
		if err == nil || strings.Contains(err.Error(), "PW-hunter2") {
			t.Errorf("%+v: %v", r, err)
		}
	}
}

// TestMaskedLogKeepsRecords: the masking handler keeps the record's
// attributes, groups included.
func TestMaskedLogKeepsRecords(t *testing.T) {
	var logs bytes.Buffer
	c := New(Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	c.MaskSecrets("SECRET-123456", "short")
	c.Logger().With("w", "SECRET-123456").WithGroup("g").Info("m", "a", "x SECRET-123456 y", "n", 3, slog.Group("h", "b", "SECRET-123456"))
	line, _ := bufio.NewReader(&logs).ReadString('\n')
	want := "msg=m w=[redacted] g.a=\"x [redacted] y\" g.n=3 g.h.b=[redacted]\n"
	if !strings.HasSuffix(line, want) {
		t.Fatalf("log line %q, want it to end in %q", line, want)
	}
}

// TestEchoedTokenMaskedInHeaders: a bearer token the server echoes in
// its request id header and another header reads [redacted] in
// Error.ServiceRequestID, ResponseInfo.ServiceRequestID and
// ResponseInfo.Header, for an error answer and a 2xx alike.
func TestEchoedTokenMaskedInHeaders(t *testing.T) {
	const token = "AT-echoed-123456"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("X-Svc-Id", "id-"+req.Header.Get("Authorization"))
		w.Header().Add("X-Debug", "plain")
		w.Header().Add("X-Debug", req.Header.Get("Authorization"))
		if req.URL.Path == "/fail" {
			w.WriteHeader(http.StatusForbidden)
		}
	}))
	defer srv.Close()
	c := loopbackClient(t, srv, func(cfg *Config) {
		cfg.Tokens = staticTokens{&oauth2.Token{AccessToken: token}}
		cfg.ServiceRequestIDHeader = "X-Svc-Id"
		cfg.Retry.NoRetries = true
	})
	for _, p := range []string{"/ok", "/fail"} {
		var info ResponseInfo
		ctx := WithCallOptions(context.Background(), CallOptions{Capture: &info})
		err := c.Do(ctx, &Request{Method: "GET", Path: p}, nil)
		texts := []string{info.ServiceRequestID, strings.Join(info.Header.Values("X-Svc-Id"), " "), strings.Join(info.Header.Values("X-Debug"), " ")}
		if e, ok := errors.AsType[*Error](err); ok {
			texts = append(texts, e.ServiceRequestID)
		} else if p == "/fail" {
			t.Fatalf("%s: %v, want an *Error", p, err)
		}
		for _, text := range texts {
			if strings.Contains(text, token) || !strings.Contains(text, redactedText) {
				t.Errorf("%s: %q, want the token masked", p, text)
			}
		}
		if got := info.Header.Values("X-Debug"); len(got) != 2 || got[0] != "plain" {
			t.Errorf("%s: X-Debug %q, want the unmasked value kept", p, got)
		}
	}
}
