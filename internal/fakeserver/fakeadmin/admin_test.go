package fakeadmin_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/fakeserver/fakeadmin"
)

// adminServer serves a fakeadmin.Admin over HTTP; build makes the fake.
func adminServer(t *testing.T, build func() *fake.Fake) (*fakeadmin.Admin, string) {
	t.Helper()
	a := fakeadmin.New(build)
	ts := httptest.NewServer(a)
	a.SetURL(ts.URL)
	t.Cleanup(func() { ts.Close(); a.Close() })
	return a, ts.URL
}

// adminServerNoLinger is adminServer on a server whose Close does not
// wait for its connections to end: a connection on which the server
// refused a body it did not read stays open half a second (net/http
// waits for the client to stop sending), which a test need not wait out.
func adminServerNoLinger(t *testing.T, build func() *fake.Fake) (*fakeadmin.Admin, string) {
	t.Helper()
	a := fakeadmin.New(build)
	ts := httptest.NewServer(a)
	a.SetURL(ts.URL)
	t.Cleanup(func() { ts.Config.Close(); a.Close() })
	return a, ts.URL
}

// call sends one request and returns the status and the body.
func call(t *testing.T, method, url, body string, header ...string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1] // the client sends req.Host, not a Host header
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func accessToken(t *testing.T, base string) string {
	t.Helper()
	st, body := call(t, "POST", base+"/oauth/token",
		`{"grant_type":"client_credentials","client_id":"partner-test-client","client_secret":"partner-test-secret"}`)
	if st != 200 {
		t.Fatalf("token: %d %s", st, body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	json.Unmarshal([]byte(body), &tok)
	return tok.AccessToken
}

func TestAdminHealth(t *testing.T) {
	t.Parallel()
	_, base := adminServer(t, func() *fake.Fake { return fake.New() })
	st, body := call(t, "GET", base+"/_fake/health", "")
	if st != 200 || !strings.Contains(body, `"status":"ok"`) {
		t.Fatalf("health: %d %s", st, body)
	}
	if st, body := call(t, "GET", base+"/_fake/openapi.json", ""); st != 200 || !strings.Contains(body, `"openapi": "3.0.3"`) {
		t.Fatalf("openapi.json: %d %.80s", st, body)
	}
	if st, _ := call(t, "GET", base+"/_fake/nothing", ""); st != 404 {
		t.Fatalf("unknown admin route: %d, want 404", st)
	}
}

func TestAdminFaults(t *testing.T) {
	t.Parallel()
	_, base := adminServer(t, func() *fake.Fake { return fake.New(fake.WithDemoData()) })
	tok := accessToken(t, base)
	st, body := call(t, "POST", base+"/_fake/faults",
		`{"method":"post","path":"/report/v1/list","times":2,"status":503,"retry_after":"7","message":"busy"}`)
	if st != 201 || strings.TrimSpace(body) != `{"id":"fault-1"}` {
		t.Fatalf("inject: %d %s, want 201 {\"id\":\"fault-1\"}", st, body)
	}
	_, body = call(t, "GET", base+"/_fake/faults", "")
	if want := `[{"id":"fault-1","method":"POST","path":"/report/v1/list","times":2,"status":503,"retry_after":"7","message":"busy"}]`; strings.TrimSpace(body) != want {
		t.Fatalf("faults = %s, want %s", body, want)
	}
	st, body = call(t, "POST", base+"/report/v1/list", `{}`, "Authorization", "Bearer "+tok)
	if st != 503 || !strings.Contains(body, "busy") {
		t.Fatalf("faulted request: %d %s", st, body)
	}
	_, body = call(t, "GET", base+"/_fake/faults", "")
	if !strings.Contains(body, `"times":1`) {
		t.Fatalf("faults after one use = %s, want times 1", body)
	}
	if st, _ := call(t, "DELETE", base+"/_fake/faults", ""); st != 204 {
		t.Fatalf("clear: %d", st)
	}
	if st, body := call(t, "POST", base+"/report/v1/list", `{}`, "Authorization", "Bearer "+tok); st != 200 {
		t.Fatalf("after clear: %d %s", st, body)
	}
	for _, bad := range []string{`{}`, `{"status":503,"unknown":1}`, `{"latency":"soon"}`, `{"status":42}`, `{"path":"[","status":500}`,
		`{"id":"mine","status":500}`, `{"status":503,"page":{"number":0}}`, `{"status":503,"page":{"number":-1,"size":1}}`,
		`{"redeliver":true,"status":503}`, `{"drop_answer":true,"latency":"1s"}`, `{"redeliver":true,"page":{"number":0,"size":1}}`,
		`{"redeliver":true,"drop_answer":true}`, `{"method":"GET","drop_answer":true}`, `{"path":"[","redeliver":true}`,
		`{"status":503,"once_per_delivery":true}`} {
		if st, body := call(t, "POST", base+"/_fake/faults", bad); st != 400 {
			t.Errorf("fault %s: %d %s, want 400", bad, st, body)
		}
	}
}

// TestAdminFaultOnPage: a fault's page limits it to the requests for that
// page (Fault.PageNumber, Fault.PageSize), and the list shows it.
func TestAdminFaultOnPage(t *testing.T) {
	t.Parallel()
	_, base := adminServer(t, func() *fake.Fake { return fake.New(fake.WithDemoData()) })
	tok := accessToken(t, base)
	if st, body := call(t, "POST", base+"/_fake/faults", `{"path":"/report/v1/list","status":503,"page":{"number":1,"size":1}}`); st != 201 {
		t.Fatalf("inject: %d %s", st, body)
	}
	if _, body := call(t, "GET", base+"/_fake/faults", ""); !strings.Contains(body, `"page":{"number":1,"size":1}`) {
		t.Fatalf("faults = %s, want the page", body)
	}
	for page, want := range map[string]int{`{"page":{"number":0,"size":1}}`: 200, `{"page":{"number":1,"size":2}}`: 200, `{"page":{"number":1,"size":1}}`: 503} {
		if st, body := call(t, "POST", base+"/report/v1/list", page, "Authorization", "Bearer "+tok); st != want {
			t.Errorf("%s: %d %s, want %d", page, st, body, want)
		}
	}
}

// TestAdminRemoveOneFault: a fault's id removes that fault alone; ids are
// not reused after a clear.
func TestAdminRemoveOneFault(t *testing.T) {
	t.Parallel()
	_, base := adminServer(t, func() *fake.Fake { return fake.New(fake.WithDemoData()) })
	tok := accessToken(t, base)
	call(t, "POST", base+"/_fake/faults", `{"status":500}`)
	call(t, "DELETE", base+"/_fake/faults", "")
	_, first := call(t, "POST", base+"/_fake/faults", `{"path":"/report/v1/list","status":503}`)
	_, second := call(t, "POST", base+"/_fake/faults", `{"path":"/api/scim/v2/Users","status":502}`)
	var a, b struct{ ID string }
	json.Unmarshal([]byte(first), &a)
	json.Unmarshal([]byte(second), &b)
	if a.ID != "fault-2" || b.ID != "fault-3" {
		t.Fatalf("ids %q %q, want fault-2 fault-3 (not reused after a clear)", a.ID, b.ID)
	}
	if st, body := call(t, "DELETE", base+"/_fake/faults/"+a.ID, ""); st != 204 {
		t.Fatalf("remove %s: %d %s", a.ID, st, body)
	}
	if st, body := call(t, "POST", base+"/report/v1/list", `{}`, "Authorization", "Bearer "+tok); st != 200 {
		t.Fatalf("after removing its fault: %d %s", st, body)
	}
	if st, _ := call(t, "GET", base+"/api/scim/v2/Users", "", "Authorization", "Bearer "+tok); st != 502 {
		t.Fatalf("the other fault: %d, want 502", st)
	}
	if _, body := call(t, "GET", base+"/_fake/faults", ""); !strings.Contains(body, `"id":"fault-3"`) || strings.Contains(body, "fault-2") {
		t.Fatalf("faults = %s, want fault-3 alone", body)
	}
	if st, body := call(t, "DELETE", base+"/_fake/faults/"+a.ID, ""); st != 404 || !strings.Contains(body, "not_found") {
		t.Fatalf("removing it again: %d %s, want 404", st, body)
	}
}

func TestAdminClock(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	_, base := adminServer(t, func() *fake.Fake { return fake.New(fake.WithClock(fake.NewManualClock(start))) })
	st, body := call(t, "POST", base+"/_fake/clock/advance", `{"by":"90s"}`)
	if st != 200 || !strings.Contains(body, `"now":"2026-01-02T03:05:35Z"`) {
		t.Fatalf("advance: %d %s", st, body)
	}
	if _, body := call(t, "GET", base+"/_fake/clock", ""); !strings.Contains(body, `"manual":true`) || !strings.Contains(body, "03:05:35Z") {
		t.Fatalf("clock: %s", body)
	}
	if st, _ := call(t, "POST", base+"/_fake/clock/advance", `{"by":"-1s"}`); st != 400 {
		t.Fatalf("negative advance: %d, want 400", st)
	}

	_, real := adminServer(t, func() *fake.Fake { return fake.New() })
	if st, body := call(t, "POST", real+"/_fake/clock/advance", `{"by":"1s"}`); st != 409 {
		t.Fatalf("advance on the real clock: %d %s, want 409", st, body)
	}
}

func TestAdminRequestLogAndTokens(t *testing.T) {
	t.Parallel()
	_, base := adminServer(t, func() *fake.Fake { return fake.New(fake.WithDemoData()) })
	tok := accessToken(t, base)
	call(t, "POST", base+"/report/v1/list", `{}`, "Authorization", "Bearer "+tok, "x-svc-env", "sandbox")
	call(t, "GET", base+"/event/v1/subscriber", "", "Authorization", "Bearer "+tok)

	_, body := call(t, "GET", base+"/_fake/requests?method=post&path=/report/*/list", "")
	var reqs []map[string]any
	if err := json.Unmarshal([]byte(body), &reqs); err != nil {
		t.Fatal(err, body)
	}
	if len(reqs) != 1 || reqs[0]["path"] != "/report/v1/list" || reqs[0]["status"] != 200.0 ||
		reqs[0]["client_id"] != fake.DefaultClientID || reqs[0]["env"] != "sandbox" {
		t.Fatalf("requests = %s", body)
	}
	if strings.Contains(body, tok) || strings.Contains(body, fake.DefaultClientSecret) {
		t.Fatal("the request log shows a secret")
	}
	call(t, "POST", base+"/_fake/tokens/expire", "")
	if st, _ := call(t, "GET", base+"/event/v1/subscriber", "", "Authorization", "Bearer "+tok); st != 401 {
		t.Fatalf("expired token: %d, want 401", st)
	}
	call(t, "DELETE", base+"/_fake/requests", "")
	if _, body := call(t, "GET", base+"/_fake/requests", ""); strings.TrimSpace(body) != "[]" {
		t.Fatalf("requests after delete = %s", body)
	}
}

func TestAdminDeliveries(t *testing.T) {
	t.Parallel()
	got := make(chan struct{}, 10)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- struct{}{}
		w.WriteHeader(204)
	}))
	defer hook.Close()
	a, base := adminServer(t, func() *fake.Fake { return fake.New(fake.WithDemoData()) })
	tok := accessToken(t, base)
	st, body := call(t, "POST", base+"/event/v1/subscriber",
		`{"name":"t","event":["object.update"],"subscriber_type":"webhook","webhook_settings":{"callback_url":"`+hook.URL+`"}}`,
		"Authorization", "Bearer "+tok)
	if st/100 != 2 {
		t.Fatalf("subscribe: %d %s", st, body)
	}
	a.Fake().UpdateObject(demo.Opportunity1, map[string]any{"stage": "won-by-admin-test"})
	_, body = call(t, "GET", base+"/_fake/deliveries?wait=5s", "")
	var ds []map[string]any
	if err := json.Unmarshal([]byte(body), &ds); err != nil {
		t.Fatal(err, body)
	}
	if len(ds) != 1 || ds[0]["object_id"] != demo.Opportunity1 || ds[0]["delivered"] != true || ds[0]["status"] != 204.0 {
		t.Fatalf("deliveries = %s", body)
	}
	call(t, "DELETE", base+"/_fake/deliveries", "")
	if _, body := call(t, "GET", base+"/_fake/deliveries", ""); strings.TrimSpace(body) != "[]" {
		t.Fatalf("deliveries after delete = %s", body)
	}
}

// TestAdminDeliveryFaults: the admin API injects the faults on webhook
// deliveries (Fault.Redeliver, Fault.DropAnswer), lists them, and the
// delivery log marks the attempts they acted on.
func TestAdminDeliveryFaults(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		w.WriteHeader(204)
	}))
	defer hook.Close()
	a, base := adminServer(t, func() *fake.Fake {
		return fake.New(fake.WithDemoData(), fake.WithDeliveryPolicy(fake.DeliveryPolicy{Backoff: time.Millisecond}))
	})
	tok := accessToken(t, base)
	if st, body := call(t, "POST", base+"/event/v1/subscriber",
		`{"name":"t","event":["object.all"],"subscriber_type":"webhook","webhook_settings":{"callback_url":"`+hook.URL+`/hooks/crm"}}`,
		"Authorization", "Bearer "+tok); st != 200 {
		t.Fatalf("subscribe: %d %s", st, body)
	}
	for _, f := range []string{`{"method":"post","path":"/hooks/*","times":1,"drop_answer":true}`, `{"path":"/hooks/*","times":1,"redeliver":true,"once_per_delivery":true}`} {
		if st, body := call(t, "POST", base+"/_fake/faults", f); st != 201 {
			t.Fatalf("inject %s: %d %s", f, st, body)
		}
	}
	_, body := call(t, "GET", base+"/_fake/faults", "")
	if want := `[{"id":"fault-1","method":"POST","path":"/hooks/*","times":1,"drop_answer":true},{"id":"fault-2","path":"/hooks/*","times":1,"redeliver":true,"once_per_delivery":true}]`; strings.TrimSpace(body) != want {
		t.Fatalf("faults = %s, want %s", body, want)
	}
	a.Fake().UpdateObject(demo.Opportunity1, map[string]any{"stage": "won-by-admin-test"})
	_, body = call(t, "GET", base+"/_fake/deliveries?wait=5s", "")
	var ds []struct {
		Status        int    `json:"status"`
		Err           string `json:"error"`
		Delivered     bool   `json:"delivered"`
		Final         bool   `json:"final"`
		Redelivery    bool   `json:"redelivery"`
		AnswerDropped bool   `json:"answer_dropped"`
	}
	if err := json.Unmarshal([]byte(body), &ds); err != nil {
		t.Fatal(err, body)
	}
	var steps []string
	for _, d := range ds {
		steps = append(steps, fmt.Sprintf("%d delivered=%t final=%t redelivery=%t dropped=%t", d.Status, d.Delivered, d.Final, d.Redelivery, d.AnswerDropped))
	}
	want := []string{"0 delivered=false final=false redelivery=false dropped=true",
		"204 delivered=true final=false redelivery=false dropped=false", "204 delivered=true final=true redelivery=true dropped=false"}
	if !slices.Equal(steps, want) || !strings.Contains(ds[0].Err, "(204) was dropped") {
		t.Fatalf("deliveries = %s, want %q", body, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 || len(slices.Compact(slices.Clone(got))) != 1 {
		t.Fatalf("the receiver got %q, want one delivery three times", got)
	}
}

const testSeed = `{
  "integrations": [{"id": "int-crm", "type": "CRM", "name": "CRM", "object_type": "opportunity", "key_field": "external_id"}],
  "objects": [{"id": "opp-1", "type": "opportunity", "integration_id": "int-crm", "fields": {"name": "Deal", "amount": 1200}}],
  "users": [{"user_name": "ada@example.com", "display_name": "Ada", "emails": [{"value": "ada@example.com", "primary": true}]}],
  "reports": [{"id": 7, "name": "Pipeline", "columns": [{"id": "0", "name": "Partner"}, {"id": "1", "name": "Amount", "type": "NUMBER"}],
               "rows": [["P1", 1200], ["P2", 300]], "charts": [{"id": 1, "name": "By partner", "group_by": "0"}]}]
}`

func TestAdminSeedAndReset(t *testing.T) {
	t.Parallel()
	a, base := adminServer(t, func() *fake.Fake { return fake.New() })
	if st, body := call(t, "POST", base+"/_fake/seed", testSeed); st != 204 {
		t.Fatalf("seed: %d %s", st, body)
	}
	f := a.Fake()
	if o, ok := f.Object("opp-1"); !ok || o.Fields["amount"] != 1200.0 || o.IntegrationID != "int-crm" {
		t.Fatalf("seeded object = %+v, %v", o, ok)
	}
	if us := f.Users(); len(us) != 1 || us[0].UserName != "ada@example.com" || us[0].Emails[0].Value != "ada@example.com" {
		t.Fatalf("seeded users = %+v", us)
	}
	tok := accessToken(t, base)
	st, body := call(t, "POST", base+"/report/v1/7/data", `{"page":{"number":0,"size":10}}`, "Authorization", "Bearer "+tok)
	if st != 200 || !strings.Contains(body, `{"Partner":"P1","Amount":1200}`) {
		t.Fatalf("seeded report data: %d %s", st, body)
	}
	for _, bad := range []string{`{"reports":[{"name":"x","columns":[{"id":"0"}],"rows":[[1,2]]}]}`, `{"userz":[]}`,
		`{"users":[{"user_name":"ada@example.com"}]}`} {
		if st, body := call(t, "POST", base+"/_fake/seed", bad); st != 400 {
			t.Errorf("seed %s: %d %s, want 400", bad, st, body)
		}
	}
	checkReset(t, a, base)
}

// checkReset resets a after injecting a fault: the fake is a fresh one,
// without the seeded data and the fault, served at the same URL.
func checkReset(t *testing.T, a *fakeadmin.Admin, base string) {
	t.Helper()
	f := a.Fake()
	call(t, "POST", base+"/_fake/faults", `{"status":500}`)
	if st, _ := call(t, "POST", base+"/_fake/reset", ""); st != 204 {
		t.Fatalf("reset: %d", st)
	}
	if a.Fake() == f {
		t.Fatal("reset kept the same fake")
	}
	if _, ok := a.Fake().Object("opp-1"); ok || len(a.Fake().Users()) != 0 {
		t.Fatal("reset kept the seeded data")
	}
	if _, body := call(t, "GET", base+"/_fake/faults", ""); strings.TrimSpace(body) != "[]" {
		t.Fatalf("faults after reset = %s", body)
	}
	if a.Fake().URL() != base {
		t.Fatalf("URL after reset = %q, want %q", a.Fake().URL(), base)
	}
}

func TestAdminLoopbackOnly(t *testing.T) {
	t.Parallel()
	build := func() *fake.Fake { return fake.New() }
	for _, tc := range []struct {
		allowRemote bool
		want        int
	}{{false, 403}, {true, 200}} {
		a := fakeadmin.New(build)
		a.AllowRemote = tc.allowRemote
		req := httptest.NewRequest("GET", "/_fake/health", nil)
		req.RemoteAddr = "192.0.2.10:4711"
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("remote admin request: %d, want %d", rec.Code, tc.want)
		}
		// The service's routes answer remote clients either way.
		req = httptest.NewRequest("POST", "/oauth/token", strings.NewReader(`{}`))
		req.RemoteAddr = "192.0.2.10:4711"
		rec = httptest.NewRecorder()
		a.ServeHTTP(rec, req)
		if rec.Code == 403 {
			t.Errorf("remote service request refused")
		}
		a.Close()
	}
}

// TestAdminBodyFaults injects a truncated and a dribbled answer: the first
// breaks off in the middle of a 200 body, the second arrives whole.
func TestAdminBodyFaults(t *testing.T) {
	t.Parallel()
	_, base := adminServer(t, func() *fake.Fake { return fake.New(fake.WithDemoData()) })
	tok := accessToken(t, base)
	list := func() (*http.Response, []byte, error) {
		req, _ := http.NewRequest("POST", base+"/report/v1/list", strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, b, err
	}
	_, whole, err := list()
	if err != nil {
		t.Fatal(err)
	}

	if st, body := call(t, "POST", base+"/_fake/faults", `{"path":"/report/v1/list","times":1,"truncate":true}`); st != 201 {
		t.Fatalf("inject truncate: %d %s", st, body)
	}
	resp, part, err := list()
	if err == nil || resp.StatusCode != 200 || len(part) != len(whole)/2 {
		t.Fatalf("truncated answer: err %v, %d of %d bytes", err, len(part), len(whole))
	}

	if st, body := call(t, "POST", base+"/_fake/faults", `{"path":"/report/v1/list","times":1,"dribble":"1ms"}`); st != 201 {
		t.Fatalf("inject dribble: %d %s", st, body)
	}
	if _, body, err := list(); err != nil || string(body) != string(whole) {
		t.Fatalf("dribbled answer: %v %q", err, body)
	}
	_, log := call(t, "GET", base+"/_fake/requests?path=/report/v1/list", "")
	if !strings.Contains(log, `"fault":"truncate"`) || !strings.Contains(log, `"fault":"dribble"`) {
		t.Fatalf("request log: %s", log)
	}
}

// TestAdminSizeLimits: the admin routes have the size limits of the
// service's routes: 413 for a body past its cap (even chunked), 414 for a
// long query, 431 for large headers; a seed may be larger than a JSON body.
func TestAdminSizeLimits(t *testing.T) {
	t.Parallel()
	_, base := adminServerNoLinger(t, func() *fake.Fake { return fake.New() })
	// Chunked (no Content-Length): the cap is found while reading.
	req, _ := http.NewRequest("POST", base+"/_fake/faults", io.MultiReader(strings.NewReader(`{"message":"`), io.LimitReader(neverEnding('x'), 4<<20), strings.NewReader(`"}`)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 413 || !strings.Contains(string(b), `"body_too_large"`) {
		t.Fatalf("fault body over the cap: %d %.200s", resp.StatusCode, b)
	}
	// A seed past MaxJSONBody is read (and refused as a seed, 400), one
	// declared past MaxSeedBody is not.
	if st, body := call(t, "POST", base+"/_fake/seed", `{"pad":"`+strings.Repeat("x", 4<<20)+`"}`); st != 400 {
		t.Fatalf("seed past MaxJSONBody: %d %.200s", st, body)
	}
	req, _ = http.NewRequest("POST", base+"/_fake/seed", io.LimitReader(neverEnding('x'), (64<<20)+1))
	req.ContentLength = (64 << 20) + 1
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != 413 {
			t.Fatalf("seed past MaxSeedBody: %d", resp.StatusCode)
		}
	}
	if st, _ := call(t, "GET", base+"/_fake/requests?path="+strings.Repeat("x", 16<<10), ""); st != 414 {
		t.Fatalf("long admin query: %d, want 414", st)
	}
	var hdr []string
	for i := range 4 {
		hdr = append(hdr, "X-Pad-"+string(rune('a'+i)), strings.Repeat("x", (64<<10)/4))
	}
	if st, _ := call(t, "GET", base+"/_fake/health", "", hdr...); st != 431 {
		t.Fatalf("large admin headers: %d, want 431", st)
	}
	// Within the limits the routes answer as before.
	if st, body := call(t, "POST", base+"/_fake/faults", `{"path":"/x","status":503}`); st != 201 {
		t.Fatalf("small fault: %d %s", st, body)
	}
}

// neverEnding is an endless reader of one byte.
type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = byte(b)
	for i := 1; i < len(p); i *= 2 {
		copy(p[i:], p[:i])
	}
	return len(p), nil
}

// TestAdminObjectsFireEvents: the admin API changes an existing object's
// fields (object.update, and object.stage_change for the stage) and
// removes one (object.delete), and lists the integrations with their
// object type and key field.
// checkGetObject reads an object through GET /_fake/objects/{id} and
// compares it with what the fake holds; an unknown id is a 404.
func checkGetObject(t *testing.T, a *fakeadmin.Admin, base, id, stage string) {
	t.Helper()
	st, body := call(t, "GET", base+"/_fake/objects/"+id, "")
	var got fake.Object
	if err := json.Unmarshal([]byte(body), &got); st != 200 || err != nil {
		t.Fatalf("GET object: %d %s %v", st, body, err)
	}
	if want, _ := a.Fake().Object(id); got.ID != want.ID || got.Type != want.Type ||
		got.IntegrationID != want.IntegrationID || got.Fields["stage"] != stage || fmt.Sprint(got.Fields) != fmt.Sprint(want.Fields) {
		t.Fatalf("GET object: %+v, want %+v", got, want)
	}
	if st, body := call(t, "GET", base+"/_fake/objects/no-such-object", ""); st != 404 || !strings.Contains(body, `"message"`) {
		t.Fatalf("GET unknown object: %d %s, want 404", st, body)
	}
}

func TestAdminObjectsFireEvents(t *testing.T) {
	t.Parallel()
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	defer hook.Close()
	a, base := adminServer(t, func() *fake.Fake { return fake.New(fake.WithDemoData()) })
	tok := accessToken(t, base)
	st, body := call(t, "POST", base+"/event/v1/subscriber",
		`{"name":"t","event":["object.all"],"subscriber_type":"webhook","webhook_settings":{"callback_url":"`+hook.URL+`"}}`,
		"Authorization", "Bearer "+tok)
	if st/100 != 2 {
		t.Fatalf("subscribe: %d %s", st, body)
	}
	if st, body := call(t, "PATCH", base+"/_fake/objects/"+demo.Opportunity1, `{"fields":{"stage":"won","sales_details.partner":"P9"}}`); st != 204 {
		t.Fatalf("PATCH: %d %s", st, body)
	}
	if o, _ := a.Fake().Object(demo.Opportunity1); o.Fields["stage"] != "won" {
		t.Fatalf("object after PATCH: %+v", o)
	} else if v, _ := o.Field("sales_details.partner"); v != "P9" {
		t.Fatalf("dotted field after PATCH: %+v", o)
	}
	checkGetObject(t, a, base, demo.Opportunity1, "won")
	if st, body := call(t, "DELETE", base+"/_fake/objects/"+demo.Opportunity3, ""); st != 204 {
		t.Fatalf("DELETE: %d %s", st, body)
	}
	_, body = call(t, "GET", base+"/_fake/deliveries?wait=5s", "")
	var ds []struct {
		Event    string `json:"event"`
		ObjectID string `json:"object_id"`
	}
	if err := json.Unmarshal([]byte(body), &ds); err != nil {
		t.Fatal(err, body)
	}
	var got []string
	for _, d := range ds {
		got = append(got, d.Event+" "+d.ObjectID)
	}
	slices.Sort(got)
	want := []string{"object.delete " + demo.Opportunity3, "object.stage_change " + demo.Opportunity1} // one delivery per change
	if !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}

	for _, tc := range []struct {
		method, path, body string
		status             int
	}{
		{"PATCH", "/_fake/objects/nope", `{"fields":{"stage":"x"}}`, 404},
		{"PATCH", "/_fake/objects/" + demo.Opportunity1, `{}`, 400},
		{"PATCH", "/_fake/objects/" + demo.Opportunity1, `{"field":{"stage":"x"}}`, 400},
		{"DELETE", "/_fake/objects/" + demo.Opportunity3, "", 404},
	} {
		if st, body := call(t, tc.method, base+tc.path, tc.body); st != tc.status || !strings.Contains(body, `"message"`) {
			t.Errorf("%s %s %s: %d %s, want %d", tc.method, tc.path, tc.body, st, body, tc.status)
		}
	}

	_, body = call(t, "GET", base+"/_fake/integrations", "")
	var ins []fake.Integration
	if err := json.Unmarshal([]byte(body), &ins); err != nil || len(ins) != 2 ||
		ins[0] != (fake.Integration{ID: demo.AccountIntegration, Type: "CRM", Name: "Demo CRM accounts",
			Description: "Accounts synced from the demo CRM", ObjectType: "account", KeyField: "account_info.external_account_id"}) {
		t.Fatalf("integrations: %v %s", err, body)
	}
}
