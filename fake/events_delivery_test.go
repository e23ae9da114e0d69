package fake

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/fakeserver/fakehttp"
)

// evReceiver is a webhook receiver that records what it is sent, by path.
type evReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got map[string][]map[string]string
	n   map[string]int
	// respond picks the status of the nth request (from 1) on path; nil
	// answers 204.
	respond func(path string, n int) int
}

func newEvReceiver(t *testing.T, respond func(path string, n int) int) *evReceiver {
	rc := &evReceiver{got: map[string][]map[string]string{}, n: map[string]int{}, respond: respond}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]string
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("delivery sent as %s %s", r.Method, r.Header.Get("Content-Type"))
		}
		if ua := r.Header.Get("User-Agent"); ua != fakehttp.DeliveryUserAgent {
			t.Errorf("delivery User-Agent %q, want %q (the admin API refuses it)", ua, fakehttp.DeliveryUserAgent)
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("delivery body: %v", err)
		}
		rc.mu.Lock()
		rc.n[r.URL.Path]++
		n := rc.n[r.URL.Path]
		rc.mu.Unlock()
		status := http.StatusNoContent
		if rc.respond != nil {
			status = rc.respond(r.URL.Path, n)
		}
		if status < 300 {
			rc.mu.Lock()
			rc.got[r.URL.Path] = append(rc.got[r.URL.Path], body)
			rc.mu.Unlock()
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// events returns "event:object_id" of each delivery received on path.
func (rc *evReceiver) events(path string) []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for _, b := range rc.got[path] {
		out = append(out, b["event"]+":"+b["object_id"])
	}
	return out
}

func (rc *evReceiver) bodies(path string) []map[string]string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got[path])
}

func evSubscribeBody(url string, events []string, extra string) string {
	ev, _ := json.Marshal(events)
	return fmt.Sprintf(`{"event":%s,"name":"t","webhook_settings":{"callback_url":%q}%s}`, ev, url, extra)
}

func evWait(t *testing.T, f *Fake) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := f.WaitDeliveries(ctx); err != nil {
		t.Fatalf("deliveries did not settle: %v", err)
	}
}

// evVerifyNoLeaks checks, after every other cleanup of t, that t left no
// goroutine behind.
func evVerifyNoLeaks(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

// evFastDeliveries shortens the backoff and turns on the fake's envelope,
// which these tests of the delivery machinery read; the flat default is
// tested by TestDeliveryFlatByDefault.
var evFastDeliveries = func(f *Fake) {
	WithDeliveryPolicy(DeliveryPolicy{Backoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond})(f)
	WithDeliveryEnvelope()(f)
}

func TestDeliveriesByKind(t *testing.T) {
	srv := NewServer(evFastDeliveries)
	defer srv.Close()
	c := newEvClient(t, srv)
	rc := newEvReceiver(t, nil)
	for _, k := range []string{"all", "create", "update", "delete", "stage_change"} {
		c.subscribe(evSubscribeBody(rc.URL+"/"+k, []string{"object." + k}, ""))
	}
	c.subscribe(evSubscribeBody(rc.URL+"/both", []string{"object.update", "object.all"}, ""))
	c.subscribe(evSubscribeBody(rc.URL+"/report", []string{"report.submit"}, ""))

	id := srv.AddObject(Object{ID: "o1", Type: "opportunity", Fields: map[string]any{"stage": "new", "name": "a"}})
	srv.UpdateObject(id, map[string]any{"name": "b"})
	srv.UpdateObject(id, map[string]any{"name": "b"}) // no change: no event
	srv.UpdateObject(id, map[string]any{"stage": "won"})
	srv.DeleteObject(id)
	evWait(t, srv.Fake)

	want := map[string][]string{
		"/all":          {"object.create:o1", "object.update:o1", "object.stage_change:o1", "object.delete:o1"},
		"/both":         {"object.create:o1", "object.update:o1", "object.stage_change:o1", "object.delete:o1"},
		"/create":       {"object.create:o1"},
		"/update":       {"object.update:o1", "object.update:o1"},
		"/delete":       {"object.delete:o1"},
		"/stage_change": {"object.stage_change:o1"},
		"/report":       nil,
	}
	for path, w := range want {
		if got := rc.events(path); !slices.Equal(got, w) {
			t.Errorf("%s received %v, want %v", path, got, w)
		}
	}
	log := srv.Deliveries()
	if len(log) != 13 {
		t.Errorf("%d attempts logged, want 13", len(log))
	}
	for _, a := range log {
		if !a.Delivered || !a.Final || a.Attempt != 1 || a.Status != http.StatusNoContent {
			t.Errorf("attempt %+v, want delivered at first attempt", a)
		}
	}
	srv.ResetDeliveries()
	if n := len(srv.Deliveries()); n != 0 {
		t.Errorf("%d attempts after ResetDeliveries", n)
	}
}

func TestDeliveryPayload(t *testing.T) {
	clock := NewManualClock(time.Date(2026, 3, 4, 5, 6, 7, 800, time.UTC))
	srv := NewServer(WithClock(clock), WithDemoData(), evFastDeliveries)
	defer srv.Close()
	c := newEvClient(t, srv)
	rc := newEvReceiver(t, nil)
	sub := c.subscribe(evSubscribeBody(rc.URL+"/h", []string{"object.update"}, ""))

	clock.Advance(time.Minute)
	srv.UpdateObject(demo.Opportunity2, map[string]any{"sales_details.partner": "P9", "probability": 0.25, "hot": true, "event": "shadowed"})
	srv.AddObject(Object{ID: "loose", Fields: map[string]any{"n": float64(1)}})
	srv.UpdateObject("loose", map[string]any{"n": float64(2)})
	evWait(t, srv.Fake)

	got := rc.bodies("/h")
	if len(got) != 2 {
		t.Fatalf("received %d deliveries, want 2: %v", len(got), got)
	}
	log := srv.Deliveries()
	want := map[string]string{
		"event": "object.update", "subscriber_id": sub, "delivery_id": log[0].DeliveryID, "object_id": demo.Opportunity2,
		"occurred_at": "2026-03-04T05:07:07.000Z", "integration_id": demo.OpportunityIntegration,
		"name": "Globex expansion", "stage": "negotiation", "amount": "20000", "sales_details.partner": "P9",
		"probability": "0.25", "hot": "true",
	}
	if !evJSONEqual(got[0], want) {
		t.Errorf("payload\n got %v\nwant %v", got[0], want)
	}
	if !strings.HasPrefix(log[0].DeliveryID, "dlv_") || log[0].DeliveryID == log[1].DeliveryID {
		t.Errorf("delivery ids %q %q", log[0].DeliveryID, log[1].DeliveryID)
	}
	if _, ok := got[1]["integration_id"]; ok || got[1]["n"] != "2" {
		t.Errorf("payload of an object without integration: %v", got[1])
	}
	if !evJSONEqual(log[0].Payload, want) || !log[0].Time.Equal(clock.Now()) {
		t.Errorf("log entry %+v", log[0])
	}
}

func TestDeliveryMatching(t *testing.T) {
	srv := NewServer(WithDemoData(), evFastDeliveries)
	defer srv.Close()
	c := newEvClient(t, srv)
	rc := newEvReceiver(t, nil)
	upd := []string{"object.update"}
	c.subscribe(evSubscribeBody(rc.URL+"/integration", upd, `,"integration_id":"`+demo.AccountIntegration+`"`))
	c.subscribe(evSubscribeBody(rc.URL+"/ids", upd, `,"object_ids":["`+demo.Opportunity1+`","`+demo.Account2+`"]`))
	c.subscribe(evSubscribeBody(rc.URL+"/filter", upd, `,"filters":"(stage in [\"closed\", \"won\"]) AND (amount >= 20000)"`))
	c.subscribe(evSubscribeBody(rc.URL+"/everything", upd, `,"integration_id":"`+demo.OpportunityIntegration+`","object_ids":["`+demo.Opportunity3+`"],"filters":"sales_details.partner = \"P1\""`))

	for _, id := range []string{demo.Opportunity1, demo.Opportunity2, demo.Opportunity3, demo.Account1, demo.Account2} {
		srv.UpdateObject(id, map[string]any{"touched": "yes"})
	}
	srv.UpdateObject(demo.Opportunity2, map[string]any{"stage": "won"}) // now matches the filter
	srv.UpdateObject(demo.Opportunity3, map[string]any{"sales_details.partner": "P2"})
	evWait(t, srv.Fake)

	want := map[string][]string{
		"/integration": {"object.update:" + demo.Account1, "object.update:" + demo.Account2},
		"/ids":         {"object.update:" + demo.Opportunity1, "object.update:" + demo.Account2},
		"/filter":      {"object.update:" + demo.Opportunity3, "object.update:" + demo.Opportunity2, "object.update:" + demo.Opportunity3},
		"/everything":  {"object.update:" + demo.Opportunity3},
	}
	for path, w := range want {
		if got := rc.events(path); !slices.Equal(got, w) {
			t.Errorf("%s received %v, want %v", path, got, w)
		}
	}
}

func TestDeliveryRetriesInOrder(t *testing.T) {
	srv := NewServer(evFastDeliveries)
	defer srv.Close()
	c := newEvClient(t, srv)
	// Every other request fails, with 500, 429 or 503 in turn.
	rc := newEvReceiver(t, func(path string, n int) int {
		if n%2 == 1 {
			return []int{500, 429, 503}[n/2%3]
		}
		return 200
	})
	sub := c.subscribe(evSubscribeBody(rc.URL+"/h", []string{"object.update"}, ""))
	srv.AddObject(Object{ID: "o"})
	for i := range 5 {
		srv.UpdateObject("o", map[string]any{"n": float64(i)})
	}
	evWait(t, srv.Fake)

	var ns []string
	for _, b := range rc.bodies("/h") {
		ns = append(ns, b["n"])
	}
	if got := strings.Join(ns, ","); got != "0,1,2,3,4" {
		t.Fatalf("received n = %s, want 0,1,2,3,4 in order", got)
	}
	log := srv.Deliveries()
	if len(log) != 10 {
		t.Fatalf("%d attempts logged, want 10: %+v", len(log), log)
	}
	for i := 0; i < 10; i += 2 {
		first, second := log[i], log[i+1]
		if first.DeliveryID != second.DeliveryID || first.Attempt != 1 || second.Attempt != 2 ||
			first.Delivered || first.Final || first.Status < 400 || !second.Delivered || !second.Final ||
			first.SubscriberID != sub || first.Payload["delivery_id"] != first.DeliveryID {
			t.Errorf("attempts %d and %d: %+v / %+v", i, i+1, first, second)
		}
	}
}

func TestDeliveryGivesUp(t *testing.T) {
	srv := NewServer(WithDeliveryPolicy(DeliveryPolicy{Attempts: 3, Backoff: time.Millisecond}), WithDeliveryEnvelope())
	defer srv.Close()
	c := newEvClient(t, srv)
	rc := newEvReceiver(t, func(path string, n int) int {
		if path == "/down" {
			return http.StatusBadGateway
		}
		return http.StatusBadRequest
	})
	// A port nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/x"
	ln.Close()
	c.subscribe(evSubscribeBody(rc.URL+"/down", []string{"object.create"}, ""))
	c.subscribe(evSubscribeBody(rc.URL+"/refuses", []string{"object.create"}, ""))
	c.subscribe(evSubscribeBody(closed, []string{"object.create"}, ""))
	srv.AddObject(Object{ID: "o"})
	evWait(t, srv.Fake)

	byURL := map[string][]DeliveryAttempt{}
	for _, a := range srv.Deliveries() {
		byURL[a.URL] = append(byURL[a.URL], a)
	}
	check := func(url string, attempts, status int, wantErr bool) {
		t.Helper()
		as := byURL[url]
		if len(as) != attempts {
			t.Fatalf("%s: %d attempts, want %d", url, len(as), attempts)
		}
		for i, a := range as {
			if a.Attempt != i+1 || a.Status != status || a.Delivered || a.Final != (i == attempts-1) || (a.Err != "") != wantErr {
				t.Errorf("%s attempt %d: %+v", url, i+1, a)
			}
		}
	}
	check(rc.URL+"/down", 3, http.StatusBadGateway, false)
	check(rc.URL+"/refuses", 1, http.StatusBadRequest, false) // a 4xx other than 408 and 429 is final
	check(closed, 3, 0, true)
}

func TestDeliveryUnsubscribeDropsQueue(t *testing.T) {
	evVerifyNoLeaks(t)
	srv := NewServer(evFastDeliveries)
	defer srv.Close()
	c := newEvClient(t, srv)
	entered, release := make(chan struct{}), make(chan struct{})
	rc := newEvReceiver(t, func(path string, n int) int {
		if n == 1 {
			close(entered)
			<-release
		}
		return 200
	})
	sub := c.subscribe(evSubscribeBody(rc.URL+"/h", []string{"object.create"}, ""))
	for i := range 4 {
		srv.AddObject(Object{ID: fmt.Sprint("o", i)})
	}
	<-entered
	if st := c.do("DELETE", "/event/v1/subscriber/"+sub, "", nil); st != http.StatusOK {
		close(release)
		t.Fatalf("delete: %d", st)
	}
	close(release)
	evWait(t, srv.Fake)
	log := srv.Deliveries()
	if len(log) != 1 || log[0].ObjectID != "o0" || !log[0].Delivered {
		t.Fatalf("log after unsubscribing = %+v, want only the attempt that was in flight", log)
	}
	srv.AddObject(Object{ID: "later"})
	evWait(t, srv.Fake)
	if n := len(srv.Deliveries()); n != 1 {
		t.Fatalf("%d attempts after unsubscribing, want 1", n)
	}
}

// TestDeliveryCloseStopsWorkers closes the fake while a delivery hangs
// and others wait behind it: Close returns and no goroutine is left.
func TestDeliveryCloseStopsWorkers(t *testing.T) {
	evVerifyNoLeaks(t)
	hang := make(chan struct{})
	entered := make(chan struct{}, 10)
	rc := newEvReceiver(t, func(path string, n int) int {
		entered <- struct{}{}
		<-hang
		return 200
	})
	defer close(hang) // before rc.Close, which waits for its handlers
	srv := NewServer(evFastDeliveries)
	c := newEvClient(t, srv)
	c.subscribe(evSubscribeBody(rc.URL+"/a", []string{"object.all"}, ""))
	c.subscribe(evSubscribeBody(rc.URL+"/b", []string{"object.all"}, ""))
	for i := range 3 {
		srv.AddObject(Object{ID: fmt.Sprint("o", i)})
	}
	<-entered
	<-entered
	srv.Close()
	evWait(t, srv.Fake)
	for _, a := range srv.Deliveries() {
		if a.Delivered || a.Final {
			t.Errorf("abandoned attempt %+v", a)
		}
	}
	srv.AddObject(Object{ID: "after-close"}) // no delivery, no goroutine
}

func TestWaitDeliveriesHonoursContext(t *testing.T) {
	srv := NewServer(evFastDeliveries)
	defer srv.Close()
	c := newEvClient(t, srv)
	release := make(chan struct{})
	rc := newEvReceiver(t, func(string, int) int { <-release; return 200 })
	defer close(release)
	c.subscribe(evSubscribeBody(rc.URL+"/h", []string{"object.create"}, ""))
	srv.AddObject(Object{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := srv.WaitDeliveries(ctx); err != context.Canceled {
		t.Fatalf("WaitDeliveries = %v, want context.Canceled", err)
	}
}

// TestDeliveriesConcurrentChanges changes objects from several goroutines:
// every subscriber gets every change, and the changes of one object in
// the order they were made.
func TestDeliveriesConcurrentChanges(t *testing.T) {
	srv := NewServer(evFastDeliveries)
	defer srv.Close()
	c := newEvClient(t, srv)
	rc := newEvReceiver(t, nil)
	const subs, writers, changes = 3, 4, 25
	for i := range subs {
		c.subscribe(evSubscribeBody(fmt.Sprintf("%s/%d", rc.URL, i), []string{"object.update"}, ""))
	}
	for w := range writers {
		srv.AddObject(Object{ID: fmt.Sprint("o", w)})
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for n := range changes {
				srv.UpdateObject(fmt.Sprint("o", w), map[string]any{"n": float64(n)})
			}
		})
	}
	wg.Wait()
	evWait(t, srv.Fake)
	for i := range subs {
		bodies := rc.bodies(fmt.Sprint("/", i))
		if len(bodies) != writers*changes {
			t.Fatalf("subscriber %d got %d deliveries, want %d", i, len(bodies), writers*changes)
		}
		next := map[string]int{}
		for _, b := range bodies {
			if want := fmt.Sprint(next[b["object_id"]]); b["n"] != want {
				t.Fatalf("subscriber %d: %s n=%s arrived, want n=%s next", i, b["object_id"], b["n"], want)
			}
			next[b["object_id"]]++
		}
	}
}

// TestDeliveryQueueBound holds a subscriber's first delivery in flight:
// the next MaxQueue deliveries wait, later ones are dropped and logged
// as dropped, and the queued ones still arrive in order.
func TestDeliveryQueueBound(t *testing.T) {
	evVerifyNoLeaks(t)
	srv := NewServer(WithDeliveryPolicy(DeliveryPolicy{Backoff: time.Millisecond, MaxQueue: 2}), WithDeliveryEnvelope())
	defer srv.Close()
	c := newEvClient(t, srv)
	entered, release := make(chan struct{}), make(chan struct{})
	rc := newEvReceiver(t, func(path string, n int) int {
		if n == 1 {
			close(entered)
			<-release
		}
		return http.StatusNoContent
	})
	c.subscribe(evSubscribeBody(rc.URL+"/h", []string{"object.create"}, ""))
	srv.AddObject(Object{ID: "o0"})
	<-entered
	for i := 1; i < 5; i++ {
		srv.AddObject(Object{ID: fmt.Sprint("o", i)})
	}
	close(release)
	evWait(t, srv.Fake)

	if got, want := rc.events("/h"), []string{"object.create:o0", "object.create:o1", "object.create:o2"}; !slices.Equal(got, want) {
		t.Errorf("received %q, want %q", got, want)
	}
	var dropped []string
	for _, a := range srv.Deliveries() {
		if a.Dropped {
			if a.Attempt != 0 || !a.Final || a.Delivered || a.Err == "" || a.Payload["object_id"] != a.ObjectID {
				t.Errorf("dropped entry %+v", a)
			}
			dropped = append(dropped, a.ObjectID)
		}
	}
	if want := []string{"o3", "o4"}; !slices.Equal(dropped, want) {
		t.Errorf("dropped %q, want %q", dropped, want)
	}
}

// TestDeliveryHonoursRetryAfter makes the backoff an hour: the retry
// still comes, after the one second the receiver's Retry-After asks for
// (the test records the wait instead of waiting it).
func TestDeliveryHonoursRetryAfter(t *testing.T) {
	evVerifyNoLeaks(t)
	srv := NewServer(WithDeliveryPolicy(DeliveryPolicy{Backoff: time.Hour, MaxBackoff: time.Hour}), WithDeliveryEnvelope())
	defer srv.Close()
	c := newEvClient(t, srv)
	var n int
	var waits []time.Duration // the backoffs the fake chose, not waited
	var mu sync.Mutex
	srv.events.testHookBackoff = func(d time.Duration) {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
	}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hook.Close()
	c.subscribe(evSubscribeBody(hook.URL, []string{"object.create"}, ""))
	srv.AddObject(Object{ID: "o"})
	evWait(t, srv.Fake)
	log := srv.Deliveries()
	if len(log) != 2 || log[0].Status != http.StatusServiceUnavailable || !log[1].Delivered {
		t.Fatalf("attempts %+v, want a 503 then a delivery", log)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(waits, []time.Duration{time.Second}) {
		t.Errorf("waits between attempts %v, want the 1s the Retry-After asked for (the backoff is an hour)", waits)
	}
}
