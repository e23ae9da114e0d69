package fake

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testFake is a fake with two test-only authenticated routes:
// GET /testonly/v1/ping (scope reports) and POST /testonly/v1/bump
// (scope scim), which count the requests they handled.
type testFake struct {
	*Fake
	srv   *httptest.Server
	pings atomic.Int32
	bumps atomic.Int32
}

func newTestFake(t *testing.T, opts ...Option) *testFake {
	t.Helper()
	tf := serveTestFake(opts...)
	t.Cleanup(tf.srv.Close)
	return tf
}

// newTestFakeNoLinger is newTestFake on a server whose Close does not
// wait for its connections to end: a connection on which the server
// refused a body it did not read stays open half a second (net/http
// waits for the client to stop sending), which a test need not wait out.
func newTestFakeNoLinger(t *testing.T, opts ...Option) *testFake {
	t.Helper()
	tf := serveTestFake(opts...)
	t.Cleanup(func() { tf.srv.Config.Close() })
	return tf
}

// serveTestFake serves a fake with opts and the test-only routes on an
// httptest server, which its caller closes.
func serveTestFake(opts ...Option) *testFake {
	tf := &testFake{Fake: New(opts...)}
	tf.handle("GET /testonly/v1/ping", scopeReports, func(w http.ResponseWriter, r *http.Request) {
		tf.pings.Add(1)
		writeJSON(w, http.StatusOK, map[string]string{"client": clientID(r)})
	})
	tf.handle("POST /testonly/v1/bump", scopeSCIM, func(w http.ResponseWriter, r *http.Request) {
		tf.bumps.Add(1)
		writeJSON(w, http.StatusOK, map[string]int{"n": int(tf.bumps.Load())})
	})
	tf.srv = httptest.NewServer(tf.Fake)
	return tf
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (tf *testFake) do(t *testing.T, method, path, contentType, body string, hdr ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, tf.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := tf.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	json.Unmarshal(raw, &a.body)
	return a
}

// token gets an access and a refresh token for the default client.
func (tf *testFake) token(t *testing.T) (access, refresh string) {
	t.Helper()
	a := tf.do(t, "POST", "/oauth/token", "application/json",
		`{"grant_type":"client_credentials","client_id":"`+DefaultClientID+`","client_secret":"`+DefaultClientSecret+`"}`)
	if a.status != 200 {
		t.Fatalf("token: %d %s", a.status, a.raw)
	}
	return a.body["access_token"].(string), a.body["refresh_token"].(string)
}

func TestTokenEndpointBadInput(t *testing.T) {
	tf := newTestFake(t, WithClient(DefaultClientID, DefaultClientSecret), WithClient("narrow", "narrow-secret", scopeReports), WithScopeChecks())
	_, spent := tf.token(t)
	if a := tf.do(t, "POST", "/oauth/token", "application/json", `{"grant_type":"refresh_token","refresh_token":"`+spent+`"}`); a.status != 200 {
		t.Fatalf("first refresh: %d %s", a.status, a.raw)
	}
	cc := func(id, secret, extra string) string {
		return `{"grant_type":"client_credentials","client_id":"` + id + `","client_secret":"` + secret + `"` + extra + `}`
	}
	for _, tc := range []struct {
		name, ct, body, code, inDesc string
	}{
		{"malformed JSON", "application/json", `{"grant_type":`, "invalid_request", "malformed JSON"},
		{"trailing data", "application/json", `{"grant_type":"client_credentials"} {}`, "invalid_request", "data after"},
		{"wrong type", "application/json", `{"grant_type":5}`, "invalid_request", "grant_type"},
		{"empty body", "application/json", ``, "invalid_request", "empty"},
		{"wrong content type", "text/plain", cc(DefaultClientID, DefaultClientSecret, ""), "invalid_request", "Content-Type"},
		{"missing grant_type", "application/json", `{"client_id":"x"}`, "invalid_request", "grant_type is required"},
		{"unknown grant", "application/json", `{"grant_type":"password"}`, "unsupported_grant_type", "grant_type"},
		{"missing secret", "application/json", `{"grant_type":"client_credentials","client_id":"x"}`, "invalid_request", "client_secret"},
		{"bad secret", "application/json", cc(DefaultClientID, "guess-123", ""), "invalid_client", "client"},
		{"unknown client", "application/json", cc("nobody", "guess-123", ""), "invalid_client", "client"},
		{"scope not allowed", "application/json", cc("narrow", "narrow-secret", `,"scope":"reports scim"`), "unauthorized_client", "scim"},
		{"unknown refresh token", "application/json", `{"grant_type":"refresh_token","refresh_token":"rt_nope"}`, "invalid_grant", "refresh token"},
		{"refresh token reuse", "application/json", `{"grant_type":"refresh_token","refresh_token":"` + spent + `"}`, "invalid_grant", "refresh token"},
		{"form without grant", "application/x-www-form-urlencoded", "client_id=x", "invalid_request", "grant_type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tf.do(t, "POST", "/oauth/token", tc.ct, tc.body)
			if a.status != 400 || a.body["error"] != tc.code {
				t.Fatalf("%d %s, want 400 %s", a.status, a.raw, tc.code)
			}
			desc, _ := a.body["error_description"].(string)
			if !strings.Contains(desc, tc.inDesc) {
				t.Fatalf("error_description %q lacks %q", desc, tc.inDesc)
			}
			if a.header.Get("Content-Type") != "application/json" || a.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("headers %v", a.header)
			}
			if strings.Contains(a.raw, "guess-123") || strings.Contains(a.raw, spent) {
				t.Fatalf("answer echoes a secret: %s", a.raw)
			}
		})
	}
}

func TestTokenEndpointStyles(t *testing.T) {
	const odd = "s3cr:et/%+&=" // survives Basic only if form-url-decoded
	tf := newTestFake(t, WithClient("app one", odd), WithTokenLifetime(90*time.Second))
	check := func(name string, a answer) string {
		t.Helper()
		if a.status != 200 || a.body["token_type"] != "Bearer" || a.body["expires_in"] != 90.0 ||
			!strings.HasPrefix(fmt.Sprint(a.body["access_token"]), "at_") || a.body["refresh_token"] == "" {
			t.Fatalf("%s: %d %s", name, a.status, a.raw)
		}
		if a.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: no Cache-Control: no-store", name)
		}
		return a.body["access_token"].(string)
	}
	j, _ := json.Marshal(map[string]string{"grant_type": "client_credentials", "client_id": "app one", "client_secret": odd, "state": "xyz"})
	a := tf.do(t, "POST", "/oauth/token", "application/json; charset=utf-8", string(j))
	t1 := check("json", a)
	if a.body["state"] != "xyz" {
		t.Fatalf("state not echoed: %s", a.raw)
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"app one"}, "client_secret": {odd}}
	t2 := check("form", tf.do(t, "POST", "/oauth/token", "application/x-www-form-urlencoded", form.Encode()))

	req, _ := http.NewRequest("POST", tf.srv.URL+"/oauth/token", strings.NewReader("grant_type=client_credentials"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape("app one"), url.QueryEscape(odd))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	t3 := check("basic", answer{status: resp.StatusCode, header: resp.Header, body: body})
	if t1 == t2 || t2 == t3 {
		t.Fatal("tokens repeat")
	}
	// Basic and a different client_id in the body contradict each other.
	a = tf.do(t, "POST", "/oauth/token", "application/x-www-form-urlencoded", "grant_type=client_credentials&client_id=other",
		"Authorization", "Basic "+basic("app one", odd))
	if a.status != 400 || a.body["error"] != "invalid_request" {
		t.Fatalf("Basic vs body client_id: %d %s", a.status, a.raw)
	}
	if n := tf.TokensIssued(); n != 3 {
		t.Fatalf("TokensIssued = %d, want 3", n)
	}
}

func basic(id, secret string) string {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
}

func TestRefreshRotation(t *testing.T) {
	tf := newTestFake(t)
	_, rt := tf.token(t)
	a := tf.do(t, "POST", "/oauth/token", "application/json", `{"grant_type":"refresh_token","refresh_token":"`+rt+`"}`)
	if a.status != 200 || a.body["refresh_token"] == rt {
		t.Fatalf("refresh: %d %s", a.status, a.raw)
	}
	if a := tf.do(t, "GET", "/testonly/v1/ping", "", "", "Authorization", "Bearer "+a.body["access_token"].(string)); a.status != 200 {
		t.Fatalf("refreshed token refused: %d", a.status)
	}
	if a := tf.do(t, "POST", "/oauth/token", "application/json", `{"grant_type":"refresh_token","refresh_token":"`+rt+`"}`); a.status != 400 {
		t.Fatalf("reused refresh token: %d", a.status)
	}
	// A refresh token belongs to its client.
	tf.addClient("other", "other-secret")
	_, rt2 := tf.token(t)
	if a := tf.do(t, "POST", "/oauth/token", "application/json", `{"grant_type":"refresh_token","refresh_token":"`+rt2+`","client_id":"other"}`); a.status != 400 || a.body["error"] != "invalid_grant" {
		t.Fatalf("another client's refresh token: %d %s", a.status, a.raw)
	}
}

func TestInvalidateToken(t *testing.T) {
	tf := newTestFake(t)
	at1, _ := tf.token(t)
	at2, _ := tf.token(t)
	if a := tf.do(t, "DELETE", "/oauth/token", "", "", "Authorization", "Bearer "+at1); a.status != 200 || a.raw != "" {
		t.Fatalf("DELETE with bearer: %d %q", a.status, a.raw)
	}
	if a := tf.do(t, "DELETE", "/oauth/token", "", "", "Authorization", "Bearer "+at1); a.status != 403 || a.body["error"] != "invalid_token" {
		t.Fatalf("second DELETE: %d %s", a.status, a.raw)
	}
	if a := tf.do(t, "DELETE", "/oauth/token", "application/json", `{"token":"`+at2+`"}`); a.status != 200 {
		t.Fatalf("DELETE with JSON body: %d %s", a.status, a.raw)
	}
	if a := tf.do(t, "DELETE", "/oauth/token", "application/json", `{"token":"`+at2+`"}`); a.status != 403 {
		t.Fatalf("second DELETE with JSON body: %d", a.status)
	}
	if a := tf.do(t, "DELETE", "/oauth/token", "", "", "Authorization", "Bearer at_unknown"); a.status != 403 {
		t.Fatalf("unknown token: %d", a.status)
	}
	if a := tf.do(t, "DELETE", "/oauth/token", "", ""); a.status != 403 {
		t.Fatalf("no token: %d", a.status)
	}
	if a := tf.do(t, "DELETE", "/oauth/token", "application/json", `{"token":`); a.status != 400 {
		t.Fatalf("malformed body: %d", a.status)
	}
	for _, at := range []string{at1, at2} {
		if a := tf.do(t, "GET", "/testonly/v1/ping", "", "", "Authorization", "Bearer "+at); a.status != 401 || !strings.Contains(a.raw, "invalidated") {
			t.Fatalf("invalidated token used: %d %s", a.status, a.raw)
		}
	}
}

func TestAuthorization(t *testing.T) {
	clk := NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tf := newTestFake(t, WithClock(clk), WithClient(DefaultClientID, DefaultClientSecret), WithClient("scimonly", "s", scopeSCIM), WithScopeChecks())
	at, _ := tf.token(t)
	a := tf.do(t, "GET", "/testonly/v1/ping", "", "", "Authorization", "Bearer "+at)
	if a.status != 200 || a.body["client"] != DefaultClientID || tf.pings.Load() != 1 {
		t.Fatalf("valid token: %d %s", a.status, a.raw)
	}
	for _, tc := range []struct{ name, auth, inMsg string }{
		{"missing", "", "missing"},
		{"not bearer", "Basic abc", "Bearer"},
		{"empty bearer", "Bearer ", "Bearer"},
		{"unknown", "Bearer at_nope", "unknown"},
	} {
		var hdr []string
		if tc.auth != "" {
			hdr = []string{"Authorization", tc.auth}
		}
		a := tf.do(t, "GET", "/testonly/v1/ping", "", "", hdr...)
		if a.status != 401 || a.body["error"] != "invalid_token" || !strings.Contains(fmt.Sprint(a.body["message"]), tc.inMsg) {
			t.Errorf("%s: %d %s", tc.name, a.status, a.raw)
		}
		if !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: no WWW-Authenticate", tc.name)
		}
	}

	// Scope.
	a = tf.do(t, "POST", "/oauth/token", "application/json", `{"grant_type":"client_credentials","client_id":"scimonly","client_secret":"s"}`)
	narrow := a.body["access_token"].(string)
	if a := tf.do(t, "GET", "/testonly/v1/ping", "", "", "Authorization", "Bearer "+narrow); a.status != 403 || a.body["error"] != "insufficient_scope" {
		t.Fatalf("missing scope: %d %s", a.status, a.raw)
	}
	if a := tf.do(t, "POST", "/testonly/v1/bump", "", "", "Authorization", "Bearer "+narrow); a.status != 200 {
		t.Fatalf("granted scope: %d %s", a.status, a.raw)
	}
	// A token asked for with fewer scopes gets only those.
	a = tf.do(t, "POST", "/oauth/token", "application/json", `{"grant_type":"client_credentials","client_id":"`+DefaultClientID+`","client_secret":"`+DefaultClientSecret+`","scope":"scim"}`)
	if a := tf.do(t, "GET", "/testonly/v1/ping", "", "", "Authorization", "Bearer "+a.body["access_token"].(string)); a.status != 403 {
		t.Fatalf("token narrowed to scim used for reports: %d", a.status)
	}

	// Expiry follows the clock.
	clk.Advance(time.Hour - time.Second)
	if a := tf.do(t, "GET", "/testonly/v1/ping", "", "", "Authorization", "Bearer "+at); a.status != 200 {
		t.Fatalf("token refused before its expiry: %d", a.status)
	}
	clk.Advance(time.Second)
	if a := tf.do(t, "GET", "/testonly/v1/ping", "", "", "Authorization", "Bearer "+at); a.status != 401 || !strings.Contains(a.raw, "expired") {
		t.Fatalf("expired token: %d %s", a.status, a.raw)
	}
	at2, _ := tf.token(t)
	tf.ExpireTokens()
	if a := tf.do(t, "GET", "/testonly/v1/ping", "", "", "Authorization", "Bearer "+at2); a.status != 401 {
		t.Fatalf("token after ExpireTokens: %d", a.status)
	}
}

func TestFaults(t *testing.T) {
	tf := newTestFake(t)
	at, _ := tf.token(t)
	auth := []string{"Authorization", "Bearer " + at}

	t.Run("status with Retry-After, Times", func(t *testing.T) {
		tf.InjectFault(Fault{Method: "GET", Path: "/testonly/*/ping", Times: 2, Status: 503, RetryAfter: "7", Message: "try later"})
		for i := range 2 {
			a := tf.do(t, "GET", "/testonly/v1/ping", "", "", auth...)
			if a.status != 503 || a.header.Get("Retry-After") != "7" || a.body["error"] != "injected_fault" || a.body["message"] != "try later" {
				t.Fatalf("faulted request %d: %d %v %s", i, a.status, a.header, a.raw)
			}
		}
		before := tf.pings.Load()
		if a := tf.do(t, "GET", "/testonly/v1/ping", "", "", auth...); a.status != 200 || tf.pings.Load() != before+1 {
			t.Fatalf("after Times ran out: %d", a.status)
		}
	})
	t.Run("method and path filter", func(t *testing.T) {
		tf.InjectFault(Fault{Method: "POST", Path: "/testonly/v1/bump", Status: 500})
		if a := tf.do(t, "GET", "/testonly/v1/ping", "", "", auth...); a.status != 200 {
			t.Fatalf("fault hit another route: %d", a.status)
		}
		for range 3 { // Times 0: until cleared
			if a := tf.do(t, "POST", "/testonly/v1/bump", "", "", auth...); a.status != 500 {
				t.Fatalf("unlimited fault: %d", a.status)
			}
		}
		tf.ClearFaults()
		if a := tf.do(t, "POST", "/testonly/v1/bump", "", "", auth...); a.status != 200 {
			t.Fatalf("after ClearFaults: %d", a.status)
		}
	})
	t.Run("token endpoint keeps the OAuth shape", func(t *testing.T) {
		tf.InjectFault(Fault{Method: "POST", Path: "/oauth/token", Times: 1, Status: 500})
		a := tf.do(t, "POST", "/oauth/token", "application/json", `{}`)
		if a.status != 500 || a.body["error"] != "injected_fault" || a.body["error_description"] == nil {
			t.Fatalf("%d %s", a.status, a.raw)
		}
	})
	t.Run("latency", func(t *testing.T) {
		// A latency that has passed lets the request go on.
		before := tf.pings.Load()
		tf.InjectFault(Fault{Path: "/testonly/v1/ping", Times: 1, Latency: time.Millisecond})
		if a := tf.do(t, "GET", "/testonly/v1/ping", "", "", auth...); a.status != 200 || tf.pings.Load() != before+1 {
			t.Fatalf("after the latency: %d, handler runs %d", a.status, tf.pings.Load()-before)
		}
		// While the latency lasts nothing is answered and the handler
		// has not run; a client that gives up stops the wait, and the
		// handler never runs.
		tf.InjectFault(Fault{Path: "/testonly/v1/ping", Times: 1, Latency: time.Hour})
		before = tf.pings.Load()
		logged := tf.CountRequests("GET", "/testonly/v1/ping")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", tf.srv.URL+"/testonly/v1/ping", nil)
		req.Header.Set(auth[0], auth[1])
		answered := make(chan error, 1)
		go func() {
			resp, err := tf.srv.Client().Do(req)
			if err == nil {
				resp.Body.Close()
			}
			answered <- err
		}()
		waitUntil(t, "the fake takes the fault", func() bool { return !tf.faultPending() })
		select {
		case err := <-answered:
			t.Fatalf("request under a 1h latency answered: %v", err)
		default:
		}
		if tf.pings.Load() != before {
			t.Fatal("handler ran during the latency")
		}
		cancel()
		if err := <-answered; err == nil {
			t.Fatal("request under a 1h latency answered")
		}
		// The request is logged when the fake is done with it: wait for
		// that, so that a handler run after the wait would be seen.
		waitUntil(t, "the abandoned request finishes at the fake", func() bool {
			return tf.CountRequests("GET", "/testonly/v1/ping") > logged
		})
		if tf.pings.Load() != before {
			t.Fatal("handler ran although the client gave up")
		}
	})
	t.Run("drop", func(t *testing.T) {
		tf.ResetRequests()
		before := tf.bumps.Load()
		tf.InjectFault(Fault{Path: "/testonly/v1/bump", Times: 1, Drop: true})
		if _, err := tf.srv.Client().Post(tf.srv.URL+"/testonly/v1/bump", "", nil); err == nil {
			t.Fatal("dropped connection answered")
		}
		if tf.bumps.Load() != before {
			t.Fatal("Drop ran the handler")
		}
		tf.InjectFault(Fault{Path: "/testonly/v1/bump", Times: 1, DropAfter: true})
		req, _ := http.NewRequest("POST", tf.srv.URL+"/testonly/v1/bump", nil)
		req.Header.Set(auth[0], auth[1])
		if _, err := tf.srv.Client().Do(req); err == nil {
			t.Fatal("DropAfter answered")
		}
		if tf.bumps.Load() != before+1 {
			t.Fatal("DropAfter did not run the handler")
		}
		var log []LoggedRequest
		for _, e := range tf.Requests() {
			if e.Path == "/testonly/v1/bump" { // not the abandoned ping above
				log = append(log, e)
			}
		}
		if len(log) != 2 || log[0].Fault != "drop" || log[0].Status != 0 || log[1].Fault != "drop-after" || log[1].Status != 0 || log[1].ClientID != DefaultClientID {
			t.Fatalf("log %+v", log)
		}
	})
}

func TestRequestLog(t *testing.T) {
	clk := NewManualClock(time.Date(2026, 5, 5, 5, 5, 5, 0, time.UTC))
	tf := newTestFake(t, WithClock(clk))
	at, rt := tf.token(t)
	tf.do(t, "POST", "/oauth/token?client_secret=QSECRET&state=s", "application/x-www-form-urlencoded",
		"grant_type=refresh_token&refresh_token="+rt, "x-svc-env", "sandbox-2")
	tf.do(t, "GET", "/testonly/v1/ping?access_token="+at+"&page=2", "", "", "Authorization", "Bearer "+at)
	tf.do(t, "DELETE", "/oauth/token", "", "", "Authorization", "Bearer "+at)

	log := tf.Requests()
	if len(log) != 4 {
		t.Fatalf("%d entries: %+v", len(log), log)
	}
	if e := log[1]; e.Method != "POST" || e.Path != "/oauth/token" || e.Env != "sandbox-2" || e.Status != 200 || !e.Time.Equal(clk.Now()) {
		t.Fatalf("entry %+v", e)
	}
	if q := log[1].Query; !strings.Contains(q, "client_secret=%2A%2A%2A") || !strings.Contains(q, "state=s") {
		t.Fatalf("query %q", q)
	}
	if e := log[2]; e.ClientID != DefaultClientID || !strings.Contains(e.Query, "page=2") {
		t.Fatalf("entry %+v", e)
	}
	dump := fmt.Sprintf("%+v %#v", log, log)
	for _, s := range []string{DefaultClientSecret, "QSECRET", at, rt} {
		if strings.Contains(dump, s) {
			t.Fatalf("request log holds a secret: %s", dump)
		}
	}
	if n := tf.CountRequests("POST", "/oauth/token"); n != 2 {
		t.Fatalf("CountRequests = %d", n)
	}
	if n := tf.CountRequests("", "/testonly/*/*"); n != 1 {
		t.Fatalf("CountRequests with wildcards = %d", n)
	}
	tf.ResetRequests()
	if len(tf.Requests()) != 0 {
		t.Fatal("ResetRequests kept entries")
	}
}

func TestManualClock(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewManualClock(start)
	c.Advance(90 * time.Second)
	if !c.Now().Equal(start.Add(90 * time.Second)) {
		t.Fatal(c.Now())
	}
	c.Set(start)
	if !c.Now().Equal(start) {
		t.Fatal(c.Now())
	}
	f := New(WithClock(c))
	if !f.Now().Equal(start) {
		t.Fatal("fake ignores its clock")
	}
}

// TestRemoveFault: InjectFault's id removes that fault and no other.
func TestRemoveFault(t *testing.T) {
	tf := newTestFake(t)
	at, _ := tf.token(t)
	auth := []string{"Authorization", "Bearer " + at}
	ping := tf.InjectFault(Fault{Method: "GET", Path: "/testonly/v1/ping", Status: 503})
	bump := tf.InjectFault(Fault{Method: "POST", Path: "/testonly/v1/bump", Status: 500})
	if ping == bump || ping == "" {
		t.Fatalf("ids %q and %q", ping, bump)
	}
	if got := tf.Faults(); len(got) != 2 || got[0].ID != ping || got[1].ID != bump {
		t.Fatalf("Faults() = %+v", got)
	}
	if !tf.RemoveFault(ping) || tf.RemoveFault(ping) {
		t.Fatal("RemoveFault: want true once, then false")
	}
	if a := tf.do(t, "GET", "/testonly/v1/ping", "", "", auth...); a.status != 200 {
		t.Fatalf("removed fault still applies: %d", a.status)
	}
	if a := tf.do(t, "POST", "/testonly/v1/bump", "", "", auth...); a.status != 500 {
		t.Fatalf("the other fault: %d, want 500", a.status)
	}
}

// waitUntil waits for cond, which another goroutine makes true; the
// deadline only ends a test that would otherwise hang.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
	}
}
