package events_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/paging"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/objects"
)

// newFake starts a fake with the demo data, quick delivery retries and
// the fake's delivery envelope (which most tests here read; the flat
// default is tested on its own), and a client for it.
func newFake(t *testing.T, opts ...fake.Option) (*fake.Server, *partner.Client) {
	t.Helper()
	c, srv := mocktest.FakeClient(t, append([]fake.Option{fake.WithDemoData(), fake.WithDeliveryEnvelope(),
		fake.WithDeliveryPolicy(fake.DeliveryPolicy{Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})}, opts...))
	return srv, c
}

// receiver hosts an events.Handler and records the deliveries it accepts,
// by request path.
type receiver struct {
	*httptest.Server
	mu  sync.Mutex
	got map[string][]*events.Delivery
}

func newReceiver(t *testing.T, fail func(d *events.Delivery) error) *receiver {
	rc := &receiver{got: map[string][]*events.Delivery{}}
	h := &events.Handler{Insecure: true, Deliver: func(ctx context.Context, d *events.Delivery) error {
		if fail != nil {
			if err := fail(d); err != nil {
				return err
			}
		}
		path := ctx.Value(pathKey{}).(string)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.got[path] = append(rc.got[path], d)
		return nil
	}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), pathKey{}, r.URL.Path)))
	}))
	t.Cleanup(rc.Close)
	return rc
}

type pathKey struct{}

func (rc *receiver) deliveries(path string) []*events.Delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got[path])
}

func settle(t *testing.T, srv *fake.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.WaitDeliveries(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestWorkflowAgainstFake(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	rc := newReceiver(t, nil)

	ins, err := paging.Collect(c.Events.Integrations(ctx))
	if err != nil || !slices.ContainsFunc(ins, func(in events.Integration) bool {
		return in.ID == demo.OpportunityIntegration && in.Type == "CRM" && in.Name != ""
	}) {
		t.Fatalf("integrations = %+v, %v", ins, err)
	}
	kinds, err := paging.Collect(c.Events.Kinds(ctx))
	if err != nil || len(kinds) != 7 || kinds[0].Name != events.KindObjectAll || kinds[0].Description == "" {
		t.Fatalf("event kinds = %+v, %v", kinds, err)
	}
	for _, k := range kinds {
		if s, err := c.Events.Schema(ctx, k.Name); err != nil || !strings.Contains(string(s.Raw), `"delivery_id"`) {
			t.Errorf("schema of %s = %+v, %v", k.Name, s, err)
		}
	}
	if _, err := c.Events.Schema(ctx, "object.explode"); !partner.IsNotFound(err) {
		t.Errorf("schema of an unknown kind: %v", err)
	}

	id, err := c.Events.Subscribe(ctx, events.SubscribeParams{
		Name:          "won or lost deals of P1",
		Events:        []events.Kind{events.KindObjectUpdate, events.KindObjectStageChange},
		Filter:        events.And(events.In("stage", "closed", "won", "lost"), events.Eq("sales_details.partner", "P1")),
		IntegrationID: demo.OpportunityIntegration,
		CallbackURL:   rc.URL + "/hook",
	})
	if err != nil {
		t.Fatal(err)
	}
	subs, err := paging.Collect(c.Events.Subscribers(ctx))
	if err != nil || len(subs) != 1 || subs[0].ID != id || subs[0].Filters != `(stage in ["closed", "won", "lost"]) AND (sales_details.partner = "P1")` ||
		subs[0].IntegrationID != demo.OpportunityIntegration || subs[0].Type != events.SubscriberWebhook {
		t.Fatalf("subscribers = %+v, %v", subs, err)
	}
	sub, err := c.Events.Subscriber(ctx, id)
	if err != nil || !slices.Equal(sub.Events, []events.Kind{events.KindObjectStageChange, events.KindObjectUpdate}) ||
		sub.IntegrationID != demo.OpportunityIntegration || sub.Webhook != nil {
		t.Fatalf("subscriber = %+v, %v", sub, err)
	}

	srv.UpdateObject(demo.Opportunity1, map[string]any{"stage": "won"})   // matches: a stage change, sent once as the most specific kind
	srv.UpdateObject(demo.Opportunity2, map[string]any{"amount": 1.5})    // negotiation: filtered out
	srv.UpdateObject(demo.Opportunity3, map[string]any{"note": "signed"}) // closed: update only
	srv.UpdateObject(demo.Account1, map[string]any{"stage": "won"})       // other integration
	settle(t, srv)

	var got []string
	for _, d := range rc.deliveries("/hook") {
		got = append(got, string(d.Event)+":"+d.ObjectID)
		if d.SubscriberID != id || d.IntegrationID != demo.OpportunityIntegration || d.DeliveryID == "" ||
			d.OccurredAt.IsZero() || d.Fields["sales_details.partner"] != "P1" {
			t.Errorf("delivery %+v", d)
		}
	}
	want := []string{"object.stage_change:" + demo.Opportunity1, "object.update:" + demo.Opportunity3}
	if !slices.Equal(got, want) {
		t.Fatalf("deliveries %v, want %v", got, want)
	}
	if d := rc.deliveries("/hook")[1]; d.Fields["note"] != "signed" || d.Fields["amount"] != "30000" || d.Fields["stage"] != "closed" {
		t.Errorf("fields of the delivery: %v", d.Fields)
	}

	if err := c.Events.Unsubscribe(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Events.Subscriber(ctx, id); !partner.IsNotFound(err) {
		t.Fatalf("subscriber after unsubscribing: %v", err)
	}
	if err := c.Events.Unsubscribe(ctx, id); !partner.IsNotFound(err) {
		t.Fatalf("second unsubscribe: %v", err)
	}
	srv.UpdateObject(demo.Opportunity1, map[string]any{"stage": "lost"})
	settle(t, srv)
	if n := len(rc.deliveries("/hook")); n != 2 {
		t.Fatalf("%d deliveries after unsubscribing, want still 2", n)
	}
}

// TestHostileFilterValuesAgainstFake registers a subscriber per hostile
// value and checks that each receives the changes of the object holding
// exactly that value, and no other.
func TestHostileFilterValuesAgainstFake(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	rc := newReceiver(t, nil)
	for i, v := range hostileStrings {
		_, err := c.Events.Subscribe(ctx, events.SubscribeParams{
			Name:        fmt.Sprint("hostile ", i),
			Events:      []events.Kind{events.KindObjectCreate},
			Filter:      events.And(events.Eq("label", v), events.In("kind", "hostile")),
			CallbackURL: fmt.Sprintf("%s/%d", rc.URL, i),
		})
		if err != nil {
			t.Fatalf("value %q: %v", v, err)
		}
	}
	for i, v := range hostileStrings {
		srv.AddObject(fake.Object{ID: fmt.Sprint("obj-", i), Fields: map[string]any{"label": v, "kind": "hostile"}})
	}
	settle(t, srv)
	for i, v := range hostileStrings {
		var ids []string
		for _, d := range rc.deliveries(fmt.Sprint("/", i)) {
			ids = append(ids, d.ObjectID)
			if d.Fields["label"] != v {
				t.Errorf("value %q: delivered label %q", v, d.Fields["label"])
			}
		}
		// Values that are equal receive each other's objects.
		var want []string
		for j, w := range hostileStrings {
			if w == v {
				want = append(want, fmt.Sprint("obj-", j))
			}
		}
		if !slices.Equal(ids, want) {
			t.Errorf("value %q: deliveries for %v, want %v", v, ids, want)
		}
	}
}

// TestHandlerErrorMakesFakeRetry shows duplicate detection: a delivery
// whose handler failed comes again with the same delivery id.
func TestHandlerErrorMakesFakeRetry(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	var mu sync.Mutex
	seen := map[string]int{}
	rc := newReceiver(t, func(d *events.Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		seen[d.DeliveryID]++
		if seen[d.DeliveryID] == 1 {
			return errors.New("not now")
		}
		return nil
	})
	if _, err := c.Events.Subscribe(ctx, events.SubscribeParams{
		Name: "retry", Events: []events.Kind{events.KindObjectDelete}, ObjectIDs: []string{demo.Account2}, CallbackURL: rc.URL + "/h",
	}); err != nil {
		t.Fatal(err)
	}
	srv.DeleteObject(demo.Account1)
	srv.DeleteObject(demo.Account2)
	settle(t, srv)
	got := rc.deliveries("/h")
	if len(got) != 1 || got[0].ObjectID != demo.Account2 || got[0].Event != events.KindObjectDelete || seen[got[0].DeliveryID] != 2 {
		t.Fatalf("deliveries %+v, attempts %v", got, seen)
	}
	log := srv.Deliveries()
	if len(log) != 2 || log[0].Status != http.StatusInternalServerError || log[1].Status != http.StatusNoContent || !log[1].Delivered {
		t.Fatalf("delivery log %+v", log)
	}
}

func TestSubscribeCancelled(t *testing.T) {
	_, c := newFake(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Events.Subscribe(ctx, events.SubscribeParams{
		Name: "n", Events: []events.Kind{events.KindObjectAll}, CallbackURL: "http://127.0.0.1:1/h",
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	for _, err := range c.Events.Subscribers(ctx) {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("iteration err = %v", err)
		}
	}
}

// TestAuditAndExternalIDChangesAreDelivered changes objects through the
// objects API and checks that object.update deliveries follow.
func TestAuditAndExternalIDChangesAreDelivered(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	rc := newReceiver(t, nil)
	if _, err := c.Events.Subscribe(ctx, events.SubscribeParams{
		Name: "all", Events: []events.Kind{events.KindObjectAll}, CallbackURL: rc.URL + "/h",
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Objects.Audit(ctx, demo.Opportunity1, objects.AuditParams{
		FieldName: objects.FieldIntegrationStatus, StatusCode: objects.StatusLinked, Message: "linked",
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Objects.ConnectExternalID(ctx, demo.Opportunity1, objects.ConnectExternalIDParams{ExternalID: "CRM-1"}); err != nil {
		t.Fatal(err)
	}
	settle(t, srv)
	got := rc.deliveries("/h")
	if len(got) != 2 {
		t.Fatalf("%d deliveries, want 2: %+v", len(got), got)
	}
	if got[0].Event != events.KindObjectUpdate || got[0].Fields["partner_portal.integration_status"] != "LINKED" {
		t.Errorf("audit delivery %+v", got[0])
	}
	if got[1].Event != events.KindObjectUpdate || got[1].Fields["sales_details.crm_opportunity_id"] != "CRM-1" ||
		got[1].Fields["partner_portal.integration_status"] != "LINKED" {
		t.Errorf("external id delivery %+v", got[1])
	}
}

// TestSubscribeRetriedOnlyWhenSafe checks against the fake that a
// registration answered 429 is repeated (the service did not process it)
// and creates exactly one subscriber, while a 500 is not repeated.
func TestSubscribeRetriedOnlyWhenSafe(t *testing.T) {
	srv, _ := newFake(t)
	// Count registrations on the client side: the fake logs a request
	// only after it has answered it.
	var posts atomic.Int32
	count := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPost && r.URL.Path == "/event/v1/subscriber" {
			posts.Add(1)
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	c, err := partner.New(partner.WithBaseURL(srv.URL), partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret),
		partner.WithHTTPClient(&http.Client{Transport: count}), partner.WithRetryWait(time.Millisecond, 2*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := events.SubscribeParams{Name: "n", Events: []events.Kind{events.KindObjectAll}, CallbackURL: "http://127.0.0.1:1/h"}
	srv.InjectFault(fake.Fault{Method: "POST", Path: "/event/v1/subscriber", Status: http.StatusTooManyRequests, Times: 1})
	if _, err := c.Events.Subscribe(ctx, req); err != nil {
		t.Fatal(err)
	}
	srv.InjectFault(fake.Fault{Method: "POST", Path: "/event/v1/subscriber", Status: http.StatusInternalServerError, Times: 1})
	if _, err := c.Events.Subscribe(ctx, req); !partner.IsServerError(err) {
		t.Fatalf("err = %v, want the 500", err)
	}
	if n := posts.Load(); n != 3 {
		t.Fatalf("%d registrations sent, want 3 (429, retry, 500)", n)
	}
	if n := len(srv.Subscribers()); n != 1 {
		t.Fatalf("%d subscribers, want 1", n)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
