package fake_test

import (
	"context"
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
)

// hooks is a webhook receiver that records each body it is sent, by path,
// and answers 204.
type hooks struct {
	*httptest.Server
	mu  sync.Mutex
	got map[string][]string
}

func newHooks(t *testing.T) *hooks {
	h := &hooks{got: map[string][]string{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.got[r.URL.Path] = append(h.got[r.URL.Path], string(b))
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.Close)
	return h
}

// bodies returns the bodies received on path, in order.
func (h *hooks) bodies(path string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got[path])
}

// subscribe registers a subscriber of kinds at the receiver's path, through
// the contract's check.
func (w *wire) subscribe(url string, kinds ...string) string {
	w.t.Helper()
	ev, _ := json.Marshal(kinds)
	status, body, _ := w.do("POST", "/event/v1/subscriber", fmt.Sprintf(`{"subscriber_type": "webhook", "event": %s, "name": "t", "webhook_settings": {"callback_url": %q}}`, ev, url))
	var out struct {
		ID string `json:"subscriber_id"`
	}
	if err := json.Unmarshal(body, &out); status != http.StatusOK || err != nil {
		w.t.Fatalf("subscribe %v: %d %s", kinds, status, body)
	}
	return out.ID
}

// settle waits for the fake's deliveries to end.
func settle(t *testing.T, srv *fake.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.WaitDeliveries(ctx); err != nil {
		t.Fatalf("deliveries did not settle: %v", err)
	}
}

// quick makes deliveries retry after a millisecond.
var quick = fake.WithDeliveryPolicy(fake.DeliveryPolicy{Backoff: time.Millisecond, MaxBackoff: time.Millisecond})

// TestOneDeliveryPerChange: a subscriber gets one delivery per change,
// whatever kinds of the change it names, object.all included (the
// deployed service's connector fires one trigger per change), of the most
// specific kind it wants: the referral kind, then object.stage_change,
// then object.update.
func TestOneDeliveryPerChange(t *testing.T) {
	w := newWire(t, quick)
	h := newHooks(t)
	words := w.srv.Connection().Words
	ref := words.ReferralEvent()
	subs := map[string][]string{
		"/all":          {"object.all"},
		"/update":       {"object.update"},
		"/stage":        {"object.stage_change"},
		"/update+stage": {"object.update", "object.stage_change"},
		"/all+stage":    {"object.all", "object.stage_change", "object.update"},
		"/all+referral": {"object.all", ref},
	}
	for path, kinds := range subs {
		w.subscribe(h.URL+path, kinds...)
	}
	w.srv.UpdateObject(demo.Opportunity2, map[string]any{"stage": "won"})                                // a stage change
	w.srv.UpdateObject(demo.Opportunity2, map[string]any{"amount": 1})                                   // an update
	w.srv.UpdateObject(demo.Opportunity2, map[string]any{"stage": "lost", words.ReferralField(): "R-1"}) // a referral and a stage change
	settle(t, w.srv)

	kinds := map[string][]string{}
	for _, a := range w.srv.Deliveries() {
		if !a.Delivered || a.Attempt != 1 {
			t.Errorf("attempt %+v", a)
		}
		path := strings.TrimPrefix(a.URL, h.URL)
		kinds[path] = append(kinds[path], a.Event)
	}
	want := map[string][]string{
		"/all":          {"object.stage_change", "object.update", "object.stage_change"},
		"/update":       {"object.update", "object.update", "object.update"},
		"/stage":        {"object.stage_change", "object.stage_change"},
		"/update+stage": {"object.stage_change", "object.update", "object.stage_change"},
		"/all+stage":    {"object.stage_change", "object.update", "object.stage_change"},
		"/all+referral": {"object.stage_change", "object.update", ref},
	}
	for path, kinds := range kinds {
		if !slices.Equal(kinds, want[path]) {
			t.Errorf("%s (subscribed to %v) got %v, want %v", path, subs[path], kinds, want[path])
		}
	}
	for path := range subs {
		if n := len(h.bodies(path)); n != len(want[path]) {
			t.Errorf("%s received %d deliveries, want %d", path, n, len(want[path]))
		}
	}
}

// TestRedeliverFault: a Redeliver fault sends a delivery its receiver
// answered 2xx once more, at once, with the same body (and delivery_id):
// a receiver's duplicate guard meets a true duplicate. It acts once per
// delivery, on Times deliveries, and only on the callback paths it
// matches.
func TestRedeliverFault(t *testing.T) {
	w := newWire(t, quick, fake.WithDeliveryEnvelope())
	h := newHooks(t)
	w.subscribe(h.URL+"/hook/a", "object.update")
	w.subscribe(h.URL+"/other", "object.update")
	id := w.srv.InjectFault(fake.Fault{Path: "/hook/*", Redeliver: true, Times: 2})
	for _, stage := range []string{"won", "lost", "open"} {
		w.srv.UpdateObject(demo.Opportunity2, map[string]any{"stage": stage})
	}
	settle(t, w.srv)

	got := h.bodies("/hook/a")
	if len(got) != 5 || got[0] != got[1] || got[2] != got[3] || got[1] == got[2] || got[3] == got[4] {
		t.Fatalf("the matched receiver got %d bodies, want the first two changes twice each, the third once:\n%s", len(got), strings.Join(got, "\n"))
	}
	if n := len(h.bodies("/other")); n != 3 {
		t.Errorf("the receiver the fault does not match got %d bodies, want 3", n)
	}
	var log []fake.DeliveryAttempt
	for _, a := range w.srv.Deliveries() {
		if strings.HasSuffix(a.URL, "/hook/a") {
			log = append(log, a)
		}
	}
	type step struct {
		attempt    int
		redelivery bool
		final      bool
		sameID     bool
	}
	want := []step{{1, false, false, false}, {2, true, true, true}, {1, false, false, false}, {2, true, true, true}, {1, false, true, false}}
	if len(log) != len(want) {
		t.Fatalf("delivery log %+v", log)
	}
	for i, a := range log {
		s := want[i]
		if a.Attempt != s.attempt || a.Redelivery != s.redelivery || a.AnswerDropped || a.Final != s.final || !a.Delivered || a.Status != http.StatusNoContent ||
			(i > 0 && (a.DeliveryID == log[i-1].DeliveryID) != s.sameID) {
			t.Errorf("attempt %d: %+v, want %+v", i, a, s)
		}
	}
	if len(w.srv.Faults()) != 0 || w.srv.RemoveFault(id) {
		t.Errorf("the fault is still in force after its 2 times: %+v", w.srv.Faults())
	}
}

// TestDropAnswerFault: a DropAnswer fault drops the receiver's answer to
// an attempt: the receiver handled it, the fake logs the attempt without
// a status and retries it with the same body under its DeliveryPolicy.
// Forever (no Times), it uses up the policy's attempts and no more.
func TestDropAnswerFault(t *testing.T) {
	w := newWire(t, fake.WithDeliveryPolicy(fake.DeliveryPolicy{Attempts: 3, Backoff: time.Millisecond, MaxBackoff: time.Millisecond}))
	h := newHooks(t)
	w.subscribe(h.URL+"/hook", "object.all")
	w.srv.InjectFault(fake.Fault{DropAnswer: true, Times: 1})
	w.srv.UpdateObject(demo.Opportunity2, map[string]any{"stage": "won"})
	settle(t, w.srv)
	got := h.bodies("/hook")
	log := w.srv.Deliveries()
	if len(got) != 2 || got[0] != got[1] || len(log) != 2 {
		t.Fatalf("received %q, log %+v: want one delivery twice", got, log)
	}
	if a := log[0]; !a.AnswerDropped || a.Redelivery || a.Status != 0 || a.Delivered || a.Final || !strings.Contains(a.Err, "(204) was dropped") {
		t.Errorf("the dropped attempt: %+v", a)
	}
	if a := log[1]; a.AnswerDropped || a.Redelivery || a.Attempt != 2 || a.Status != http.StatusNoContent || !a.Delivered || !a.Final || a.DeliveryID != log[0].DeliveryID {
		t.Errorf("the retry: %+v", a)
	}

	w.srv.ResetDeliveries()
	w.srv.InjectFault(fake.Fault{Method: "POST", DropAnswer: true})
	w.srv.UpdateObject(demo.Opportunity2, map[string]any{"stage": "lost"})
	settle(t, w.srv)
	log = w.srv.Deliveries()
	if len(log) != 3 || !log[2].Final || log[2].Delivered || !log[2].AnswerDropped || len(h.bodies("/hook")) != 5 {
		t.Fatalf("every answer dropped: %d bodies, log %+v; want the policy's 3 attempts, the last final", len(h.bodies("/hook")), log)
	}
}

// TestDropAnswerOncePerDelivery: Times of a DropAnswer fault counts
// attempts, the retries of one delivery included; with OncePerDelivery it
// counts distinct deliveries, dropping the first answer of each.
func TestDropAnswerOncePerDelivery(t *testing.T) {
	w := newWire(t, quick)
	h := newHooks(t)
	w.subscribe(h.URL+"/hook", "object.update")
	w.srv.InjectFault(fake.Fault{DropAnswer: true, Times: 3})
	w.srv.UpdateObject(demo.Opportunity2, map[string]any{"amount": 1})
	settle(t, w.srv)
	var dropped []int
	for _, a := range w.srv.Deliveries() {
		if a.AnswerDropped {
			dropped = append(dropped, a.Attempt)
		}
	}
	if !slices.Equal(dropped, []int{1, 2, 3}) {
		t.Fatalf("without OncePerDelivery the answers to attempts %v were dropped, want 1, 2 and 3 of the one delivery", dropped)
	}

	w.srv.ResetDeliveries()
	w.srv.InjectFault(fake.Fault{DropAnswer: true, Times: 3, OncePerDelivery: true})
	for i := range 4 {
		w.srv.UpdateObject(demo.Opportunity2, map[string]any{"amount": 10 + i})
	}
	settle(t, w.srv)
	perDelivery := map[string][]bool{} // delivery id: AnswerDropped of each attempt
	var order []string
	for _, a := range w.srv.Deliveries() {
		if _, ok := perDelivery[a.DeliveryID]; !ok {
			order = append(order, a.DeliveryID)
		}
		perDelivery[a.DeliveryID] = append(perDelivery[a.DeliveryID], a.AnswerDropped)
		if a.Final && !a.Delivered {
			t.Errorf("delivery %s given up: %+v", a.DeliveryID, a)
		}
	}
	if len(order) != 4 {
		t.Fatalf("%d deliveries logged, want 4: %+v", len(order), w.srv.Deliveries())
	}
	for i, id := range order {
		want := []bool{true, false}
		if i == 3 {
			want = []bool{false} // the fault's three uses are spent
		}
		if got := perDelivery[id]; !slices.Equal(got, want) {
			t.Errorf("delivery %d: answers dropped %v, want %v", i+1, got, want)
		}
	}
	if n := len(w.srv.Faults()); n != 0 {
		t.Errorf("%d faults left in force, want none", n)
	}
}

// TestDeliveryFaultsAndRequestFaultsApart: a fault on deliveries never
// acts on a request to the fake, and a fault on requests never on a
// delivery, whatever their paths.
func TestDeliveryFaultsAndRequestFaultsApart(t *testing.T) {
	w := newWire(t, quick)
	h := newHooks(t)
	w.subscribe(h.URL+"/event/v1/subscriber", "object.update")
	w.srv.InjectFault(fake.Fault{Redeliver: true})
	w.srv.InjectFault(fake.Fault{DropAnswer: true, Path: "/event/v1/*"})
	w.srv.InjectFault(fake.Fault{Path: "/nowhere", Status: 503})
	if status, body, _ := w.do("GET", "/event/v1/subscriber", ""); status != http.StatusOK {
		t.Fatalf("a request under delivery faults: %d %s", status, body)
	}
	w.srv.ClearFaults()
	w.srv.InjectFault(fake.Fault{Status: 503})
	w.srv.InjectFault(fake.Fault{Drop: true})
	w.srv.UpdateObject(demo.Opportunity2, map[string]any{"stage": "won"})
	settle(t, w.srv)
	if log := w.srv.Deliveries(); len(log) != 1 || !log[0].Delivered || log[0].AnswerDropped || log[0].Redelivery {
		t.Fatalf("a delivery under request faults: %+v", log)
	}
}
