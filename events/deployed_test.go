package events_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/objects"
)

// TestSubscriberDeployedSpelling: one description of the deployed service
// spells the integration member "integraion_id"; its read returns the
// subscribed kinds in "event" and no webhook_settings.
func TestSubscriberDeployedSpelling(t *testing.T) {
	c, mt := mocktest.New(t)
	mt.RegisterResponder(http.MethodGet, base+"/event/v1/subscriber/sub-1", mocktest.JSONResponder(t, "", 200,
		`{"subscriber_id":"sub-1","name":"crm sync","objectids":["006A"],"integraion_id":"int-9",
		  "filters":"stage in [\"won\"]","subscriber_type":"webhook","event":["object.update","object.acme_referral_submit"]}`))
	mt.RegisterResponder(http.MethodGet, base+"/event/v1/subscriber/sub-2", mocktest.JSONResponder(t, "", 200,
		`{"subscriber_id":"sub-2","integraion_id":"typo","integration_id":"right","event":[]}`))
	mt.RegisterResponder(http.MethodGet, base+"/event/v1/subscriber/sub-3", mocktest.JSONResponder(t, "", 200,
		`{"subscriber_id":"sub-3","integration_id":"","integraion_id":"typo"}`))
	ctx := context.Background()
	s, err := c.Events.Subscriber(ctx, "sub-1")
	if err != nil {
		t.Fatal(err)
	}
	want := &events.Subscriber{
		ID: "sub-1", Name: "crm sync", ObjectIDs: []string{"006A"}, IntegrationID: "int-9",
		Filters: `stage in ["won"]`, Type: events.SubscriberWebhook,
		Events: []events.Kind{events.KindObjectUpdate, "object.acme_referral_submit"},
	}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("subscriber\n got %+v\nwant %+v", s, want)
	}
	// When both spellings are present the correct one wins, even empty.
	for id, want := range map[string]string{"sub-2": "right", "sub-3": ""} {
		if s, err := c.Events.Subscriber(ctx, id); err != nil || s.IntegrationID != want {
			t.Fatalf("%s: integration %q, %v; want %q", id, s.IntegrationID, err, want)
		}
	}
}

// TestUnsubscribeEmpty200: the deployed service answers the delete 200
// with an empty body; 204 is accepted too.
func TestUnsubscribeEmpty200(t *testing.T) {
	c, mt := mocktest.New(t)
	mt.RegisterResponder(http.MethodDelete, base+"/event/v1/subscriber/a", httpmock.NewStringResponder(200, ""))
	mt.RegisterResponder(http.MethodDelete, base+"/event/v1/subscriber/b", httpmock.NewStringResponder(204, ""))
	for _, id := range []string{"a", "b"} {
		if err := c.Events.Unsubscribe(context.Background(), id); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
}

// TestIntegrationSchema: GET /event/v1/metadata/integration/{integration_id}
// (GetObjectEventSchema) answers the integration's object event schema in
// its "schema" member; the published example, {}, has none and is
// returned whole.
func TestIntegrationSchema(t *testing.T) {
	c, mt := mocktest.New(t)
	mt.RegisterResponder(http.MethodGet, base+"/event/v1/metadata/integration/int%2F1", mocktest.JSONResponder(t, "", 200,
		`{"schema":{"type":"object","properties":{"stage":{"type":"string"}}}}`))
	mt.RegisterResponder(http.MethodGet, base+"/event/v1/metadata/integration/published", mocktest.JSONResponder(t, "", 200, `{}`))
	mt.RegisterResponder(http.MethodGet, base+"/event/v1/metadata/integration/nope", mocktest.JSONResponder(t, "", 404,
		`{"error":"not_found","message":"integration \"nope\" is not defined"}`))
	ctx := context.Background()
	s, err := c.Events.IntegrationSchema(ctx, "int/1")
	if err != nil || string(s.Raw) != `{"type":"object","properties":{"stage":{"type":"string"}}}` {
		t.Fatalf("schema = %+v, %v", s, err)
	}
	if s, err := c.Events.IntegrationSchema(ctx, "published"); err != nil || string(s.Raw) != `{}` {
		t.Fatalf("published example: %+v, %v", s, err)
	}
	if _, err := c.Events.IntegrationSchema(ctx, "nope"); !partner.IsNotFound(err) {
		t.Fatalf("unknown: %v", err)
	}
	if _, err := c.Events.IntegrationSchema(ctx, ""); err == nil || !strings.HasPrefix(err.Error(), "partner: ") {
		t.Fatalf("empty id: %v", err)
	}
}

// TestDeployedShapesAgainstFake: against the fake's defaults, a
// subscriber reads back without webhook_settings, an integration's
// object event schema names the fields its deliveries carry, unsubscribing works on its 200, and a delivery arrives flat and
// is handed over whole.
func TestDeployedShapesAgainstFake(t *testing.T) {
	srv := fake.NewServer(fake.WithDemoData(), fake.WithDeliveryPolicy(fake.DeliveryPolicy{Backoff: 1}), mocktest.ContractCheck(t))
	defer srv.Close()
	c, err := partner.New(partner.WithConnection(srv.Connection()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	schema, err := c.Events.IntegrationSchema(ctx, demo.OpportunityIntegration)
	if err != nil {
		t.Fatal(err)
	}
	raw := schema.Raw
	var sch struct {
		Type       string                       `json:"type"`
		Properties map[string]map[string]string `json:"properties"`
	}
	if err := json.Unmarshal(raw, &sch); err != nil || sch.Type != "object" || sch.Properties["stage"]["type"] != "string" {
		t.Fatalf("integration schema %s: %v", raw, err)
	}
	if _, err := c.Events.IntegrationSchema(ctx, "nope"); !partner.IsNotFound(err) {
		t.Fatalf("unknown integration: %v", err)
	}

	rc := newReceiver(t, nil)
	id, err := c.Events.Subscribe(ctx, events.SubscribeParams{
		Name: "audit watch", Events: []events.Kind{events.KindObjectUpdate}, ObjectIDs: []string{demo.Opportunity1},
		IntegrationID: demo.OpportunityIntegration, CallbackURL: rc.URL + "/hook",
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Events.Subscriber(ctx, id)
	if err != nil || s.IntegrationID != demo.OpportunityIntegration || s.Webhook != nil ||
		!reflect.DeepEqual(s.Events, []events.Kind{events.KindObjectUpdate}) {
		t.Fatalf("subscriber = %+v, %v", s, err)
	}
	if _, err := c.Objects.Audit(ctx, demo.Opportunity1, objects.AuditParams{StatusCode: objects.StatusLinked, Message: "m"}); err != nil {
		t.Fatal(err)
	}
	settle(t, srv)
	got := rc.deliveries("/hook")
	if len(got) != 1 {
		t.Fatalf("%d deliveries", len(got))
	}
	d := got[0]
	if d.Event != "" || d.DeliveryID != "" || d.ObjectID != "" || d.Fields["partner_portal.integration_status"] != "LINKED" || d.Fields["name"] == "" {
		t.Fatalf("delivery = %+v", d)
	}
	if !strings.HasPrefix(string(d.Raw), "{") || len(d.Fields) < 3 {
		t.Fatalf("delivery body %s", d.Raw)
	}
	if err := c.Events.Unsubscribe(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Events.Subscriber(ctx, id); !partner.IsNotFound(err) {
		t.Fatalf("after unsubscribing: %v", err)
	}
}

// TestReferralKind: the referral kind is sent as given, with the
// interface's word or a deployment's own, and a kind listing keeps names
// this package has no constant for.
func TestReferralKind(t *testing.T) {
	c, mt := mocktest.New(t)
	mt.RegisterResponder(http.MethodPost, base+"/event/v1/subscriber", mocktest.JSONResponder(t,
		`{"subscriber_type":"webhook","event":["object.acme_portal_referral_submit","object.partner_portal_referral_submit"],
		  "name":"referrals","webhook_settings":{"callback_url":"https://hooks.example.com/r"}}`, 200, `{"subscriber_id":"sub-9"}`))
	mt.RegisterResponder(http.MethodGet, base+"/event/v1/metadata/event", mocktest.JSONResponder(t, "", 200,
		`{"events":[{"name":"object.acme_portal_referral_submit","description":"Opportunity submitted as a referral"}]}`))
	ctx := context.Background()
	id, err := c.Events.Subscribe(ctx, events.SubscribeParams{
		Name:        "referrals",
		Events:      []events.Kind{"object.acme_portal_referral_submit", events.KindPartnerPortalReferralSubmit},
		CallbackURL: "https://hooks.example.com/r",
	})
	if err != nil || id != "sub-9" {
		t.Fatalf("subscribe: %q, %v", id, err)
	}
	for k, err := range c.Events.Kinds(ctx) {
		if err != nil || k.Name != "object.acme_portal_referral_submit" {
			t.Fatalf("kind %+v, %v", k, err)
		}
	}
}

// TestReferralDeliveredByFake: an opportunity's referral id written
// through the SDK reaches a subscriber of the referral kind.
func TestReferralDeliveredByFake(t *testing.T) {
	srv, c := newFake(t)
	rc := newReceiver(t, nil)
	ctx := context.Background()
	if _, err := c.Events.Subscribe(ctx, events.SubscribeParams{
		Name: "referrals", Events: []events.Kind{events.KindPartnerPortalReferralSubmit}, CallbackURL: rc.URL + "/ref",
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Objects.ConnectExternalID(ctx, demo.Opportunity2, objects.ConnectExternalIDParams{
		FieldName: objects.FieldReferralID, ExternalID: "REF-3",
	}); err != nil {
		t.Fatal(err)
	}
	settle(t, srv)
	got := rc.deliveries("/ref")
	if len(got) != 1 || got[0].Event != events.KindPartnerPortalReferralSubmit || got[0].ObjectID != demo.Opportunity2 ||
		got[0].Fields[objects.FieldReferralID] != "REF-3" {
		t.Fatalf("referral deliveries %+v", got)
	}
}

// TestMisspelledIntegrationAgainstFake reads a subscriber from a fake
// that spells its integration integraion_id, as a deployed description
// does.
func TestMisspelledIntegrationAgainstFake(t *testing.T) {
	srv, c := newFake(t, fake.WithDeployment(fake.Deployment{MisspelledIntegrationID: true}))
	ctx := context.Background()
	id, err := c.Events.Subscribe(ctx, events.SubscribeParams{
		Name: "crm sync", Events: []events.Kind{events.KindObjectUpdate},
		IntegrationID: demo.OpportunityIntegration, CallbackURL: "https://hooks.example.com/x",
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Events.Subscriber(ctx, id)
	if err != nil || s.IntegrationID != demo.OpportunityIntegration {
		t.Fatalf("subscriber = %+v, %v", s, err)
	}
	if n := srv.CountRequests(http.MethodGet, "/event/v1/subscriber/"+id); n != 1 {
		t.Fatalf("%d reads", n)
	}
}

// TestSchemaPublishedAnswer: the gateway export's event schema answer is
// {} (events: GetEventSchema), returned whole, and the operation carries
// the environment header, which the export lists on it.
func TestSchemaPublishedAnswer(t *testing.T) {
	c, mt := mocktest.New(t, partner.WithEnvironmentHeader("x-acme-env"), partner.WithEnvironment("sandbox.example.com"))
	mt.RegisterResponder(http.MethodGet, base+"/event/v1/metadata/event/object.update", func(req *http.Request) (*http.Response, error) {
		if got := req.Header.Get("x-acme-env"); got != "sandbox.example.com" {
			t.Errorf("environment header %q", got)
		}
		return mocktest.JSONResponder(t, "", 200, `{}`)(req)
	})
	s, err := c.Events.Schema(context.Background(), events.KindObjectUpdate)
	if err != nil || string(s.Raw) != `{}` {
		t.Fatalf("published answer: %+v, %v", s, err)
	}
}
