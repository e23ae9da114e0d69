package fakeadmin_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/fakeserver/fakeadmin"
	"github.com/partnerapi/partner-go/internal/fakeserver/fakehttp"
)

// subscribe registers a webhook subscriber for object.update with
// callback and returns the answer's status and body.
func subscribe(t *testing.T, base, token, callback string) (int, string) {
	t.Helper()
	return call(t, "POST", base+"/event/v1/subscriber",
		`{"name":"hostile","event":["object.update"],"subscriber_type":"webhook","webhook_settings":{"callback_url":"`+callback+`"}}`,
		"Authorization", "Bearer "+token)
}

// TestCallbackCannotReachAdminAPI: a client with a token but no admin
// rights subscribes with a callback at the fake's own admin API
// (a delivery turned against the fake): the subscription is refused with 400 naming the
// reason, an update fires no delivery to it, and the client's token
// still works afterwards.
func TestCallbackCannotReachAdminAPI(t *testing.T) {
	t.Parallel()
	a, base := adminServer(t, func() *fake.Fake { return fake.New(fake.WithDemoData()) })
	tok := accessToken(t, base)
	port := base[strings.LastIndex(base, ":"):]
	for _, cb := range []string{
		base + "/_fake/tokens/expire",
		base + "/_fake/reset",
		"http://localhost" + port + "/_fake/tokens/expire",
		"http://[::1]" + port + "/x/../_fake/reset",
		"http://localhost" + port + "/%5Ffake/reset",
		"http://subscriber.example/_fake/reset", // an admin path on any host
		"http://localhost" + port + "/hook",     // the fake's own listener
	} {
		st, body := subscribe(t, base, tok, cb)
		if st != http.StatusBadRequest || !strings.Contains(body, "webhook_settings.callback_url") ||
			!(strings.Contains(body, "points at the fake itself") || strings.Contains(body, "must not name a path under /_fake/")) {
			t.Errorf("subscribe %s: %d %s, want 400 saying the callback reaches the fake", cb, st, body)
		}
	}
	if n := len(a.Fake().Subscribers()); n != 0 {
		t.Fatalf("%d subscribers registered, want none", n)
	}
	if st, body := call(t, "PATCH", base+"/_fake/objects/"+demo.Opportunity1, `{"fields":{"stage":"won"}}`); st != http.StatusNoContent {
		t.Fatalf("PATCH: %d %s", st, body)
	}
	if err := a.Fake().WaitDeliveries(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st, body := call(t, "POST", base+"/report/v1/list", `{}`, "Authorization", "Bearer "+tok); st != http.StatusOK {
		t.Errorf("the client's token after the attempt: %d %s, want 200", st, body)
	}
}

// TestDeliveryToOwnListenerRefused: a callback that passed the check at
// subscription (the fake did not yet know its address) is checked again
// when delivered, on the address it connects to: the delivery is not
// sent, not retried, and the log says why.
func TestDeliveryToOwnListenerRefused(t *testing.T) {
	t.Parallel()
	a := fakeadmin.New(func() *fake.Fake {
		return fake.New(fake.WithDemoData(), fake.WithDeliveryPolicy(fake.DeliveryPolicy{Attempts: 3}))
	})
	ts := httptest.NewServer(a)
	t.Cleanup(func() { ts.Close(); a.Close() })
	tok := accessToken(t, ts.URL)
	if st, body := subscribe(t, ts.URL, tok, ts.URL+"/report/v1/list"); st != http.StatusOK {
		t.Fatalf("subscribe before the fake knows its address: %d %s", st, body)
	}
	a.SetURL(ts.URL)
	a.Fake().ResetRequests()
	if st, body := call(t, "PATCH", ts.URL+"/_fake/objects/"+demo.Opportunity1, `{"fields":{"stage":"won"}}`); st != http.StatusNoContent {
		t.Fatalf("PATCH: %d %s", st, body)
	}
	if err := a.Fake().WaitDeliveries(context.Background()); err != nil {
		t.Fatal(err)
	}
	ds := a.Fake().Deliveries()
	if len(ds) != 1 || ds[0].Delivered || !ds[0].Final || ds[0].Status != 0 || !strings.Contains(ds[0].Err, "reaches the fake itself") {
		t.Fatalf("deliveries: %+v, want one final refused attempt", ds)
	}
	if n := a.Fake().CountRequests("POST", "/report/v1/list"); n != 0 {
		t.Errorf("the delivery reached the fake %d times, want 0", n)
	}
}

// TestAdminRefusesBrowsersAndDeliveries: requests a web page could send
// (another Host through DNS rebinding, another Origin, a form or text
// body) and requests with the fake's delivery User-Agent are refused
// before they change anything (CSRF, DNS rebinding); the fake's own routes are
// not affected.
func TestAdminRefusesBrowsersAndDeliveries(t *testing.T) {
	t.Parallel()
	a, base := adminServer(t, func() *fake.Fake { return fake.New() })
	fault := `{"path":"/report/v1/list","status":503}`
	for _, tc := range []struct {
		name         string
		method, path string
		body         string
		header       []string
		want         int
	}{
		{"rebound host", "POST", "/_fake/faults", fault, []string{"Host", "rebind.example:8080"}, 403},
		{"foreign origin", "POST", "/_fake/faults", fault, []string{"Origin", "http://page.example"}, 403},
		{"null origin", "POST", "/_fake/faults", fault, []string{"Origin", "null"}, 403},
		{"origin other port", "POST", "/_fake/faults", fault, []string{"Origin", "http://127.0.0.1:1"}, 403},
		{"text body", "POST", "/_fake/faults", fault, []string{"Content-Type", "text/plain"}, 415},
		{"form body", "POST", "/_fake/faults", fault, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415},
		{"empty form", "POST", "/_fake/tokens/expire", "", []string{"Content-Type", "application/x-www-form-urlencoded"}, 415},
		{"delivery", "POST", "/_fake/tokens/expire", "", []string{"User-Agent", "partner-fake-webhooks"}, 403},
		{"rebound read", "GET", "/_fake/requests", "", []string{"Host", "rebind.example"}, 403},
	} {
		st, body := call(t, tc.method, base+tc.path, tc.body, tc.header...)
		if st != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, st, body, tc.want)
		}
	}
	if n := len(a.Fake().Faults()); n != 0 {
		t.Errorf("%d faults injected by refused requests, want 0", n)
	}
	if n := a.Fake().TokensIssued(); n != 0 {
		t.Fatalf("tokens issued: %d", n)
	}
	tok := accessToken(t, base)
	if st, _ := call(t, "POST", base+"/_fake/tokens/expire", "", "Content-Type", "application/x-www-form-urlencoded"); st != 415 {
		t.Fatalf("form expire: %d", st)
	}
	if st, body := call(t, "POST", base+"/report/v1/list", `{}`, "Authorization", "Bearer "+tok, "Origin", "http://page.example"); st != 200 {
		t.Errorf("service route with an Origin: %d %s, want 200 (only the admin API is guarded)", st, body)
	}

	// What the admin API's own clients send is accepted.
	port := base[strings.LastIndex(base, ":"):]
	for _, tc := range []struct {
		name   string
		header []string
	}{
		{"json", nil},
		{"json with charset", []string{"Content-Type", "application/json; charset=utf-8"}},
		{"localhost host", []string{"Host", "localhost" + port}},
		{"own origin", []string{"Origin", base}},
	} {
		st, body := call(t, "POST", base+"/_fake/faults", fault, tc.header...)
		if st != http.StatusCreated {
			t.Errorf("%s: %d %s, want 201", tc.name, st, body)
		}
	}
	if st, body := call(t, "POST", base+"/_fake/reset", ""); st != http.StatusNoContent {
		t.Errorf("reset without a body: %d %s, want 204", st, body)
	}
}

// TestAdminAllowRemoteKeepsOriginCheck: -admin-remote lifts the address
// and Host checks, not the Origin and content type ones.
func TestAdminAllowRemoteKeepsOriginCheck(t *testing.T) {
	t.Parallel()
	a := fakeadmin.New(func() *fake.Fake { return fake.New() })
	a.AllowRemote = true
	ts := httptest.NewServer(a)
	t.Cleanup(func() { ts.Close(); a.Close() })
	if st, body := call(t, "GET", ts.URL+"/_fake/health", "", "Host", "fake.internal:8080"); st != 200 {
		t.Errorf("remote host name: %d %s, want 200", st, body)
	}
	if st, body := call(t, "POST", ts.URL+"/_fake/tokens/expire", "", "Host", "fake.internal:8080", "Origin", "http://page.example"); st != 403 {
		t.Errorf("foreign origin: %d %s, want 403", st, body)
	}
}

// TestAdminRefusesDeliveryUserAgent: a request carrying the User-Agent of
// the fake's webhook deliveries gets 403 from an admin route, whatever
// address it came through; the same request without it is served.
func TestAdminRefusesDeliveryUserAgent(t *testing.T) {
	t.Parallel()
	_, base := adminServer(t, func() *fake.Fake { return fake.New(fake.WithDemoData()) })
	st, body := call(t, "POST", base+"/_fake/reset", "", "User-Agent", fakehttp.DeliveryUserAgent)
	if st != http.StatusForbidden || !strings.Contains(body, "webhook deliveries") {
		t.Fatalf("reset with the delivery User-Agent: %d %s, want 403 naming webhook deliveries", st, body)
	}
	if st, body := call(t, "POST", base+"/_fake/reset", ""); st != http.StatusNoContent {
		t.Fatalf("reset: %d %s, want 204", st, body)
	}
}
