package partner_test

// The client against a hostile server, over loopback
// (docs/reliability.md, "Hostile server").

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/oauth"
)

const (
	hostileSecret  = "CS-client-secret-123456"
	hostileAccess  = "AT-access-token-123456"
	hostileRefresh = "RT-refresh-token-123456"
	hostileSubKey  = "SUBKEY-gateway-123456"
)

// hostileClient returns a client of srv with the test's secrets and no
// retries.
func hostileClient(t *testing.T, srv *httptest.Server, opts ...partner.Option) *partner.Client {
	t.Helper()
	c, err := partner.New(append([]partner.Option{
		partner.WithBaseURL(srv.URL), partner.WithClientCredentials("id", hostileSecret),
		partner.WithSubscriptionKey(hostileSubKey), partner.WithMaxRetries(0),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tokenBody is the token endpoint's answer with the test's tokens.
var tokenBody = `{"access_token":"` + hostileAccess + `","refresh_token":"` + hostileRefresh + `","token_type":"Bearer","expires_in":3600}`

// TestHostileTokenRedirect: a token endpoint that redirects to another
// host gets neither the client secret sent there (307, 308) nor its
// answer taken for a token (302, 303: a GET without body).
func TestHostileTokenRedirect(t *testing.T) {
	var otherCalls atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		otherCalls.Add(1)
		io.WriteString(w, tokenBody)
	}))
	defer other.Close()
	for _, code := range []int{307, 308, 302, 303} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			http.Redirect(w, req, other.URL+"/oauth/token", code)
		}))
		c := hostileClient(t, srv)
		_, err := c.OAuth.Token(context.Background())
		srv.Close()
		if !errors.Is(err, partner.ErrCrossHostRedirect) || !strings.Contains(err.Error(), "redirect to") {
			t.Errorf("%d: %v, want ErrCrossHostRedirect", code, err)
		}
	}
	if n := otherCalls.Load(); n != 0 {
		t.Fatalf("the other host got %d token requests", n)
	}
}

// heapGrowthDuring runs f and returns how far the heap grew above what
// it held before, sampled while f runs.
func heapGrowthDuring(f func()) uint64 {
	const name = "/memory/classes/heap/objects:bytes"
	read := func() uint64 {
		s := []metrics.Sample{{Name: name}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	done, peak := make(chan struct{}), make(chan uint64)
	go func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		var most uint64
		for {
			most = max(most, read())
			select {
			case <-done:
				peak <- most
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	most := max(<-peak, read())
	if most < base {
		return 0
	}
	return most - base
}

// endlessJSON writes a JSON object whose string goes on for limit bytes
// (or until the client leaves).
func endlessJSON(w io.Writer, limit int) {
	chunk := bytes.Repeat([]byte("a"), 32<<10)
	io.WriteString(w, `{"access_token":"`)
	for n := 0; n < limit; n += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
	io.WriteString(w, `"}`)
}

// gzipBomb returns a gzip stream that decompresses to a JSON object whose
// string is mib MiB long: gzip members in a row, which a gzip reader
// reads as one stream, the middle one (about 1 KiB) repeated.
func gzipBomb(mib int) []byte {
	member := func(b []byte) []byte {
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		gz.Write(b)
		gz.Close()
		return buf.Bytes()
	}
	bomb := member([]byte(`{"id":"`))
	bomb = append(bomb, bytes.Repeat(member(bytes.Repeat([]byte("a"), 1<<20)), mib)...)
	return append(bomb, member([]byte(`"}`))...)
}

// TestHostileAnswerSize: a gzip bomb in answer to SCIM.Get (256 KiB
// gzipped, 256 MiB decompressed, of unknown length) and 256 MiB streamed
// at the token endpoint fail with ErrAnswerTooLarge, and the heap stays
// tens of MiB below what reading them would take.
func TestHostileAnswerSize(t *testing.T) {
	const size = 256 << 20
	bomb := gzipBomb(size >> 20)
	var bombs atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/oauth/token" && req.URL.Query().Get("stream") == "" && bombs.Load() == 0 {
			io.WriteString(w, tokenBody)
			return
		}
		if strings.HasPrefix(req.URL.Path, "/api/scim/") {
			bombs.Add(1)
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "application/scim+json")
			w.Write(bomb)
			return
		}
		endlessJSON(w, size)
	}))
	defer srv.Close()
	c := hostileClient(t, srv)
	var err error
	grew := heapGrowthDuring(func() { _, err = c.SCIM.Get(context.Background(), "u1") })
	if !errors.Is(err, partner.ErrAnswerTooLarge) {
		t.Fatalf("SCIM.Get of a gzip bomb: %v, want ErrAnswerTooLarge", err)
	}
	t.Logf("SCIM.Get of a gzip bomb: heap grew %d MiB", grew>>20)
	if grew > 64<<20 {
		t.Errorf("SCIM.Get of a gzip bomb: heap grew %d MiB, want far less than the 256 MiB answer", grew>>20)
	}

	c = hostileClient(t, srv) // its first token request meets the stream
	grew = heapGrowthDuring(func() { _, err = c.OAuth.Token(context.Background()) })
	if !errors.Is(err, partner.ErrAnswerTooLarge) {
		t.Fatalf("a streamed token answer: %v, want ErrAnswerTooLarge", err)
	}
	t.Logf("token stream: heap grew %d MiB", grew>>20)
	if grew > 16<<20 {
		t.Errorf("a streamed token answer: heap grew %d MiB", grew>>20)
	}
}

// TestHostileStall: a token endpoint that sends headers and then nothing
// fails the call with ErrAnswerStalled after WithStallTimeout.
func TestHostileStall(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-release
	}))
	defer srv.Close()
	defer close(release)
	c := hostileClient(t, srv, partner.WithStallTimeout(20*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.OAuth.Token(ctx); !errors.Is(err, partner.ErrAnswerStalled) {
		t.Fatalf("%v, want ErrAnswerStalled", err)
	}
	if _, err := partner.New(partner.WithBaseURL(srv.URL), partner.WithClientCredentials("id", "s"), partner.WithStallTimeout(-1)); err == nil {
		t.Fatal("a negative stall timeout accepted")
	}
}

// TestHostileEchoedSecrets: a server that echoes the client secret, the
// tokens and the subscription key in its error answers (the token
// endpoint refusing a refresh, the API refusing a call) gets none of them
// into an error's text, an Error's fields or the debug log.
func TestHostileEchoedSecrets(t *testing.T) {
	var apiCalls atomic.Int32
	echo := func(w http.ResponseWriter, req *http.Request, status int, code string) {
		b, _ := io.ReadAll(req.Body)
		msg := "got " + string(b) + " with " + req.Header.Get("Authorization") + " key " + req.Header.Get("Ocp-Apim-Subscription-Key") +
			"; known: " + strings.Join([]string{hostileSecret, hostileAccess, hostileRefresh, hostileSubKey}, ",")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": msg, "message": msg})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/oauth/token" {
			b, _ := io.ReadAll(req.Body)
			if strings.Contains(string(b), "refresh_token") {
				req.Body = io.NopCloser(bytes.NewReader(b))
				echo(w, req, 400, "invalid_grant")
				return
			}
			io.WriteString(w, tokenBody)
			return
		}
		if apiCalls.Add(1) == 1 {
			w.WriteHeader(401) // the token is dropped: a refresh follows
			return
		}
		echo(w, req, 403, "forbidden")
	}))
	defer srv.Close()
	var logs bytes.Buffer
	c := hostileClient(t, srv, partner.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	_, err := c.SCIM.Get(context.Background(), "u1")
	var perr *partner.Error
	if !errors.As(err, &perr) || perr.StatusCode != 403 {
		t.Fatalf("%v, want the 403", err)
	}
	if !strings.Contains(logs.String(), "refresh failed") {
		t.Fatalf("no log of the refused refresh: %s", logs.String())
	}
	// The token endpoint's own refusal, echoing the client secret.
	_, terr := c.OAuth.Request(context.Background(), oauth.TokenParams{GrantType: "refresh_token", ClientID: "id", ClientSecret: hostileSecret, RefreshToken: hostileRefresh})
	var tperr *partner.Error
	if !errors.As(terr, &tperr) || tperr.StatusCode != 400 {
		t.Fatalf("%v, want the 400", terr)
	}
	for _, s := range []string{hostileSecret, hostileAccess, hostileRefresh, hostileSubKey} {
		for what, text := range map[string]string{
			"error": err.Error(), "Error.Body": string(perr.Body), "Error.Message": perr.Message,
			"token error": terr.Error(), "token Error.Body": string(tperr.Body), "log": logs.String(),
		} {
			if strings.Contains(text, s) {
				t.Errorf("%s holds %s: %s", what, s, text)
			}
		}
	}
	if !strings.Contains(perr.Message, "[redacted]") {
		t.Errorf("Message %q does not show what was masked", perr.Message)
	}
}

// TestHostileBaseURLPassword: a base URL's password is in no error about
// it.
func TestHostileBaseURLPassword(t *testing.T) {
	for _, u := range []string{
		"ftp://admin:PW-hunter2@api.example.com",
		"https://admin:PW-hunter2@api.example.com/%zz",
		"https://admin:PW-hunter2@api example.com/",
		"admin:PW-hunter2@api.example.com",
		"http://admin:PW-hunter2@api.example.com",
		"https://admin:PW-hunter2@api.example.com",
	} {
		_, err := partner.New(partner.WithBaseURL(u), partner.WithClientCredentials("id", "secret"))
		if err == nil || strings.Contains(err.Error(), "PW-hunter2") {
			t.Errorf("base URL with a password: %v", err)
		}
	}
}
