package fake

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/fakeserver/fakehttp"
)

// TestSizeLimits: every route caps its body (413, even when the body
// declares no length), and bounds its headers (431) and query (414).
func TestSizeLimits(t *testing.T) {
	t.Parallel()
	tf := newTestFakeNoLinger(t)
	at, _ := tf.token(t)
	bearer := []string{"Authorization", "Bearer " + at}

	big := `{"pad":"` + strings.Repeat("x", fakehttp.MaxJSONBody) + `"}`
	if a := tf.do(t, "POST", "/testonly/v1/bump", "application/json", big, bearer...); a.status != 413 || a.body["error"] != "body_too_large" {
		t.Fatalf("JSON body over the cap: %d %s", a.status, a.raw[:min(len(a.raw), 200)])
	}
	// Chunked, no Content-Length: the cap is found while reading. The
	// SCIM create reads the body itself.
	req, _ := http.NewRequest("POST", tf.srv.URL+"/api/scim/v2/Users", io.MultiReader(strings.NewReader(`{"userName":"`), &endless{b: 'x', n: fakehttp.MaxJSONBody}, strings.NewReader(`"}`)))
	req.Header.Set("Authorization", "Bearer "+at)
	req.Header.Set("Content-Type", "application/scim+json")
	resp, err := tf.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Fatalf("chunked body over the cap: %d", resp.StatusCode)
	}
	if a := tf.do(t, "POST", "/oauth/token", "application/json", `{"grant_type":"`+strings.Repeat("x", maxTokenBody)+`"}`); a.status != 413 {
		t.Fatalf("token body over its cap: %d", a.status)
	}
	if a := tf.do(t, "GET", "/testonly/v1/ping?q="+strings.Repeat("x", fakehttp.MaxQueryBytes), "", "", bearer...); a.status != 414 {
		t.Fatalf("long query: %d", a.status)
	}
	hdr := append([]string{}, bearer...)
	for i := range 4 {
		hdr = append(hdr, fmt.Sprintf("X-Pad-%d", i), strings.Repeat("x", fakehttp.MaxHeaderBytes/4))
	}
	if a := tf.do(t, "GET", "/testonly/v1/ping", "", "", hdr...); a.status != 431 {
		t.Fatalf("large headers: %d", a.status)
	}
	// Within the limits, all is as before.
	if a := tf.do(t, "POST", "/testonly/v1/bump", "application/json", `{}`, bearer...); a.status != 200 {
		t.Fatalf("small body: %d", a.status)
	}
	for _, e := range tf.Requests() {
		if e.Status == 413 && e.Path == "/testonly/v1/bump" && e.Fault != "too-large" {
			t.Fatalf("refused request logged as %+v", e)
		}
	}
}

// TestRequestLogRing: the log keeps the last WithRequestLogSize requests,
// oldest first, and counts those it dropped.
func TestRequestLogRing(t *testing.T) {
	tf := newTestFake(t, WithRequestLogSize(5))
	at, _ := tf.token(t)
	for i := range 12 {
		tf.do(t, "GET", fmt.Sprintf("/testonly/v1/ping?i=%d", i), "", "", "Authorization", "Bearer "+at)
	}
	log := tf.Requests()
	if len(log) != 5 || tf.requestsDropped() != 8 {
		t.Fatalf("%d entries, %d dropped; want 5 and 8", len(log), tf.requestsDropped())
	}
	for i, e := range log {
		if want := fmt.Sprintf("i=%d", 7+i); e.Query != want {
			t.Fatalf("entry %d: %q, want %q (oldest first)", i, e.Query, want)
		}
	}
	if n := tf.CountRequests("GET", "/testonly/v1/ping"); n != 5 {
		t.Fatalf("CountRequests = %d, want 5", n)
	}
	tf.ResetRequests()
	if len(tf.Requests()) != 0 || tf.requestsDropped() != 0 {
		t.Fatal("reset left entries")
	}
}

// TestTokensSwept: a fake that issues many tokens holds only the live ones:
// expired access tokens are swept, and a client keeps at most
// maxRefreshTokens refresh tokens, the oldest refused first.
func TestTokensSwept(t *testing.T) {
	t.Parallel()
	clk := NewManualClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	tf := newTestFake(t, WithClock(clk), WithTokenLifetime(time.Minute))
	_, first := tf.token(t)
	const grants = 768
	for range grants {
		handlerToken(t, tf.Fake)
		clk.Advance(time.Second)
	}
	access, refresh := tf.tokensHeld()
	// Tokens live a minute and are swept a minute after, at each grant:
	// at most 2 minutes of tokens (one per second) remain.
	if access > 121 || refresh > maxRefreshTokens {
		t.Fatalf("holding %d access and %d refresh tokens after %d grants", access, refresh, grants+1)
	}
	for range maxRefreshTokens {
		handlerToken(t, tf.Fake)
	}
	if _, refresh := tf.tokensHeld(); refresh != maxRefreshTokens {
		t.Fatalf("%d refresh tokens, want the cap %d", refresh, maxRefreshTokens)
	}
	if a := tf.do(t, "POST", "/oauth/token", "application/json", `{"grant_type":"refresh_token","refresh_token":"`+first+`"}`); a.status != 400 || a.body["error"] != "invalid_grant" {
		t.Fatalf("oldest refresh token: %d %s", a.status, a.raw)
	}
	// A live token still works.
	at, _ := tf.token(t)
	if a := tf.do(t, "GET", "/testonly/v1/ping", "", "", "Authorization", "Bearer "+at); a.status != 200 {
		t.Fatalf("fresh token: %d", a.status)
	}
}

// TestSetURLWhileServing: SetURL may run while requests read the URL (run
// with -race).
func TestSetURLWhileServing(t *testing.T) {
	tf := newTestFake(t)
	at, _ := tf.token(t)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 50 {
			tf.SetURL(fmt.Sprintf("http://127.0.0.1:%d", 1000+i))
		}
	})
	for range 20 {
		tf.do(t, "POST", "/api/scim/v2/Users", "application/scim+json", `{"userName":"u`+fmt.Sprint(time.Now().UnixNano())+`@example.com"}`, "Authorization", "Bearer "+at)
		_ = tf.URL()
	}
	wg.Wait()
	if !strings.HasPrefix(tf.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL = %q", tf.URL())
	}
}

// TestViewsAndUploadsSwept: views deleted for a day are forgotten and
// upload tickets expired for a minute are dropped with their files, so
// that a long-running fake does not keep them.
func TestViewsAndUploadsSwept(t *testing.T) {
	clk := NewManualClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	tf := newTestFake(t, WithClock(clk), WithDemoData(), WithTokenLifetime(100*time.Hour))
	tf.SetURL(tf.srv.URL)
	old, _ := tf.prepareView(demo.ReportPartners)
	clk.Advance(viewLifetime + time.Minute)
	mid, _ := tf.prepareView(demo.ReportPartners)
	clk.Advance(viewLifetime + time.Minute)
	for range 64 {
		tf.prepareView(demo.ReportPartners)
	}
	if _, ok := tf.lookupView(old); ok {
		t.Fatal("a view deleted a day ago is still held")
	}
	if v, ok := tf.lookupView(mid); !ok || v.status(clk.Now()) != viewDeleted {
		t.Fatal("a view deleted a minute ago should still answer DELETED")
	}

	at, _ := tf.token(t)
	ticket := func() {
		a := tf.do(t, "GET", "/bulk/v1/bulkload/"+demo.AccountIntegration+"/upload_url?file_name=a.csv", "", "", "Authorization", "Bearer "+at)
		if a.status != 200 {
			t.Fatalf("upload_url: %d %s", a.status, a.raw)
		}
	}
	ticket()
	ticket()
	clk.Advance(bulkUploadTTL + 2*time.Minute)
	ticket()
	tf.bulk.mu.Lock()
	n, m := len(tf.bulk.uploads), len(tf.bulk.uploadURLs)
	tf.bulk.mu.Unlock()
	if n != 1 || m != 1 {
		t.Fatalf("%d uploads and %d upload URLs held, want the one live ticket", n, m)
	}
}
