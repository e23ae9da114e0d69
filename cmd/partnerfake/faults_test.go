package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/partnerapi/partner-go/fake/demo"
)

// ownConnection makes each request on a new connection.
var ownConnection = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// send makes one request with a JSON body ("" for none) and an optional
// bearer token, and returns the status and the body.
func send(t *testing.T, method, url, bearer, body string) (int, string) {
	t.Helper()
	st, b, err := request(method, url, bearer, body)
	if err != nil {
		t.Fatal(err)
	}
	return st, b
}

// request is send for a goroutine other than the test's: it returns the
// error of the request or of reading the answer's body instead of ending
// the test. Each request has a connection of its own: a client asks again
// for an idempotent request whose answer was cut off on a kept-alive
// connection, and the answer to the second asking would hide the cut.
func request(method, url, bearer, body string) (int, string, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := ownConnection.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestUnknownMembersFlag: by default a write body's member that its
// published description does not name is refused with 400;
// -unknown-members makes the fake ignore it (fake.WithUnknownMembers).
func TestUnknownMembersFlag(t *testing.T) {
	t.Parallel()
	const audit = `{"field_name": "partner_portal.integration_status", "status_code": "LINKED", "message": "m", "objectids": ["x"]}`
	path := "/app/v1/object/" + demo.Opportunity1 + "/audit"
	strict, stopStrict := start(t)
	defer stopStrict()
	if st, body := send(t, "PATCH", strict+path, defaultToken(t, strict), audit); st != http.StatusBadRequest || !strings.Contains(body, `unknown member \"objectids\"`) {
		t.Fatalf("an unknown member by default: %d %s, want 400 naming it", st, body)
	}
	lax, stopLax := start(t, "-unknown-members")
	defer stopLax()
	if st, body := send(t, "PATCH", lax+path, defaultToken(t, lax), audit); st != http.StatusOK {
		t.Fatalf("an unknown member with -unknown-members: %d %s, want 200", st, body)
	}
}

// TestDeliveryFaultsThroughAdmin: the admin API partnerfake serves injects
// the faults on webhook deliveries; a redeliver fault sends the delivery
// again after the receiver's 2xx, and the delivery log says so.
func TestDeliveryFaultsThroughAdmin(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hook.Close()
	url, stop := start(t)
	defer stop()
	sub := `{"subscriber_type": "webhook", "event": ["object.all"], "name": "t", "webhook_settings": {"callback_url": "` + hook.URL + `/hooks/crm"}}`
	if st, body := send(t, "POST", url+"/event/v1/subscriber", defaultToken(t, url), sub); st != http.StatusOK {
		t.Fatalf("subscribe: %d %s", st, body)
	}
	if st, body := send(t, "POST", url+"/_fake/faults", "", `{"path": "/hooks/*", "redeliver": true, "times": 1}`); st != http.StatusCreated {
		t.Fatalf("inject: %d %s", st, body)
	}
	if st, body := send(t, "PATCH", url+"/_fake/objects/"+demo.Opportunity2, "", `{"fields": {"stage": "won"}}`); st != http.StatusNoContent {
		t.Fatalf("change: %d %s", st, body)
	}
	_, body := send(t, "GET", url+"/_fake/deliveries?wait=10s", "", "")
	var log []struct {
		Event      string `json:"event"`
		Attempt    int    `json:"attempt"`
		Delivered  bool   `json:"delivered"`
		Redelivery bool   `json:"redelivery"`
	}
	if err := json.Unmarshal([]byte(body), &log); err != nil || len(log) != 2 || !log[0].Delivered || log[0].Redelivery ||
		!log[1].Delivered || !log[1].Redelivery || log[1].Attempt != 2 || log[1].Event != "object.stage_change" {
		t.Fatalf("delivery log %s (%v)", body, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != got[1] {
		t.Fatalf("the receiver got %q, want one delivery twice", got)
	}
}
