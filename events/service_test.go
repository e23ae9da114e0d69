package events_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/internal/paging"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)

const base = mocktest.BaseURL

func TestSubscribers(t *testing.T) {
	c, mt := mocktest.New(t)
	mt.RegisterResponder(http.MethodGet, base+"/event/v1/subscriber", mocktest.JSONResponder(t, "", 200, `{"items":[
		{"subscriber_id":"sub-1","name":"crm sync","objectids":["obj-1","obj-2"],"integration_id":"int-1",
		 "filters":"stage in [\"won\"]","subscriber_type":"webhook"},
		{"subscriber_id":"sub-2","name":"other","objectids":[],"integration_id":"","filters":"","subscriber_type":"queue"}]}`))
	subs, err := paging.Collect(c.Events.Subscribers(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	want := []events.Subscriber{
		{ID: "sub-1", Name: "crm sync", ObjectIDs: []string{"obj-1", "obj-2"}, IntegrationID: "int-1", Filters: `stage in ["won"]`, Type: events.SubscriberWebhook},
		{ID: "sub-2", Name: "other", ObjectIDs: []string{}, Type: "queue"}, // an unknown type is kept
	}
	if !reflect.DeepEqual(subs, want) {
		t.Fatalf("subscribers\n got %+v\nwant %+v", subs, want)
	}
}

func TestSubscriber(t *testing.T) {
	c, mt := mocktest.New(t)
	mt.RegisterResponder(http.MethodGet, base+"/event/v1/subscriber/sub%2F1", mocktest.JSONResponder(t, "", 200,
		`{"subscriber_id":"sub/1","name":"n","object_ids":["o"],"integration_id":"i","filters":"",
		  "subscriber_type":"webhook","event":["object.update","object.brand_new"],
		  "webhook_settings":{"callback_url":"https://hooks.example.com/x"}}`))
	s, err := c.Events.Subscriber(context.Background(), "sub/1")
	if err != nil {
		t.Fatal(err)
	}
	want := &events.Subscriber{
		ID: "sub/1", Name: "n", ObjectIDs: []string{"o"}, IntegrationID: "i", Type: events.SubscriberWebhook,
		Events:  []events.Kind{events.KindObjectUpdate, "object.brand_new"},
		Webhook: &events.WebhookSettings{CallbackURL: "https://hooks.example.com/x"},
	}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("subscriber\n got %+v\nwant %+v", s, want)
	}

	mt.RegisterResponder(http.MethodGet, base+"/event/v1/subscriber/nope", mocktest.JSONResponder(t, "", 404, `{"error":"not_found","message":"subscriber \"nope\" not found"}`))
	_, err = c.Events.Subscriber(context.Background(), "nope")
	if !partner.IsNotFound(err) || !strings.Contains(err.Error(), `subscriber "nope" not found`) {
		t.Fatalf("unknown subscriber: %v", err)
	}
	if _, err := c.Events.Subscriber(context.Background(), ""); err == nil || !strings.Contains(err.Error(), "subscriber id is required") {
		t.Fatalf("empty id: %v", err)
	}
}

func TestSubscribe(t *testing.T) {
	c, mt := mocktest.New(t)
	mt.RegisterResponder(http.MethodPost, base+"/event/v1/subscriber", mocktest.JSONResponder(t, `{
		"subscriber_type": "webhook",
		"event": ["object.update", "object.stage_change"],
		"name": "crm sync",
		"filters": "(stage in [\"closed\", \"won\", \"lost\"]) AND (sales_details.partner = \"P1\")",
		"integration_id": "int-1",
		"object_ids": ["obj-1"],
		"webhook_settings": {"callback_url": "https://hooks.example.com/partner"}
	}`, 200,

		`{"subscriber_id":"sub-9"}`))
	id, err := c.Events.Subscribe(context.Background(), events.SubscribeParams{
		Name:          "crm sync",
		Events:        []events.Kind{events.KindObjectUpdate, events.KindObjectStageChange},
		Filter:        events.And(events.In("stage", "closed", "won", "lost"), events.Eq("sales_details.partner", "P1")),
		IntegrationID: "int-1",
		ObjectIDs:     []string{"obj-1"},
		CallbackURL:   "https://hooks.example.com/partner",
	})
	if err != nil || id != "sub-9" {
		t.Fatalf("Subscribe = %q, %v", id, err)
	}
}

func TestSubscribeMinimal(t *testing.T) {
	c, mt := mocktest.New(t)
	mt.RegisterResponder(http.MethodPost, base+"/event/v1/subscriber", mocktest.JSONResponder(t,
		`{"subscriber_type":"webhook","event":["object.all"],"name":"n","webhook_settings":{"callback_url":"http://127.0.0.1:8080/h"}}`, 200,

		`{"subscriber_id":"sub-1"}`))
	id, err := c.Events.Subscribe(context.Background(), events.SubscribeParams{
		Name: "n", Events: []events.Kind{events.KindObjectAll}, CallbackURL: "http://127.0.0.1:8080/h", Type: events.SubscriberWebhook,
	})
	if err != nil || id != "sub-1" {
		t.Fatalf("Subscribe = %q, %v", id, err)
	}
}

func TestSubscribeValidation(t *testing.T) {
	c, mt := mocktest.New(t)
	ok := events.SubscribeParams{Name: "n", Events: []events.Kind{events.KindObjectUpdate}, CallbackURL: "https://h.example.com/x"}
	tests := []struct {
		name string
		edit func(r *events.SubscribeParams)
		want string
	}{
		{"everything missing", func(r *events.SubscribeParams) { *r = events.SubscribeParams{} },
			"partner: events: at least one event kind is required; name is required; callback URL is required"},
		{"type", func(r *events.SubscribeParams) { r.Type = "email" }, `subscriber type "email" is not supported (only "webhook")`},
		{"empty kind", func(r *events.SubscribeParams) { r.Events = []events.Kind{""} }, `event kind "" is not a kind name`},
		{"blank name", func(r *events.SubscribeParams) { r.Name = " " }, "name is required"},
		{"relative url", func(r *events.SubscribeParams) { r.CallbackURL = "/hook" }, `callback URL "/hook" is not an absolute http or https URL`},
		{"other scheme", func(r *events.SubscribeParams) { r.CallbackURL = "ftp://h/x" }, "is not an absolute http or https URL"},
		{"opaque url with a password", func(r *events.SubscribeParams) { r.CallbackURL = "http:admin:pw@h/x" },
			`callback URL "xxxxx@h/x" is not an absolute http or https URL`},
		{"bad url", func(r *events.SubscribeParams) { r.CallbackURL = "http://h/%zz" }, "invalid URL escape"},
		{"bad filter", func(r *events.SubscribeParams) { r.Filter = events.Eq("a b", 1) }, `filter: field name "a b" is not a dotted name`},
		{"empty object id", func(r *events.SubscribeParams) { r.ObjectIDs = []string{"x", ""} }, "object ids must not be empty"},
	}
	for _, tt := range tests {
		req := ok
		tt.edit(&req)
		_, err := c.Events.Subscribe(context.Background(), req)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Fatalf("%d requests sent for invalid registrations", n)
	}
}

// TestSubscribeNotRepeated checks that a registration the server may have
// processed is not sent twice.
func TestSubscribeNotRepeated(t *testing.T) {
	c, mt := mocktest.New(t)
	mt.RegisterResponder(http.MethodPost, base+"/event/v1/subscriber",
		httpmock.NewStringResponder(503, `{"error":"unavailable","message":"try later"}`))
	_, err := c.Events.Subscribe(context.Background(), events.SubscribeParams{
		Name: "n", Events: []events.Kind{events.KindObjectAll}, CallbackURL: "https://h.example.com/x",
	})
	var perr *partner.Error
	if !errors.As(err, &perr) || perr.StatusCode != 503 || perr.Message != "try later" {
		t.Fatalf("err = %v", err)
	}
	if n := mt.GetCallCountInfo()["POST "+base+"/event/v1/subscriber"]; n != 1 {
		t.Fatalf("registration sent %d times, want 1", n)
	}
	mt.RegisterResponder(http.MethodPost, base+"/event/v1/subscriber",
		httpmock.NewStringResponder(400, `{"error":"invalid_request","message":"filters: at offset 3: expected a value"}`))
	_, err = c.Events.Subscribe(context.Background(), events.SubscribeParams{
		Name: "n", Events: []events.Kind{events.KindObjectAll}, CallbackURL: "https://h.example.com/x", Filter: events.Raw("a ="),
	})
	if !partner.IsBadRequest(err) || !strings.Contains(err.Error(), "expected a value") {
		t.Fatalf("err = %v", err)
	}
}

func TestUnsubscribe(t *testing.T) {
	c, mt := mocktest.New(t, partner.WithMaxRetries(1))
	mt.RegisterResponder(http.MethodDelete, base+"/event/v1/subscriber/sub-1", mocktest.JSONResponder(t, "", 204, ""))
	if err := c.Events.Unsubscribe(context.Background(), "sub-1"); err != nil {
		t.Fatal(err)
	}
	// DELETE is repeated after a failure.
	mt.RegisterResponder(http.MethodDelete, base+"/event/v1/subscriber/sub-2",
		httpmock.ResponderFromMultipleResponses([]*http.Response{
			httpmock.NewStringResponse(502, ""), httpmock.NewStringResponse(200, "{}"),
		}))
	if err := c.Events.Unsubscribe(context.Background(), "sub-2"); err != nil {
		t.Fatal(err)
	}
	if err := c.Events.Unsubscribe(context.Background(), ""); err == nil {
		t.Fatal("empty id accepted")
	}
}

func TestIntegrations(t *testing.T) {
	c, mt := mocktest.New(t)
	mt.RegisterResponder(http.MethodGet, base+"/event/v1/metadata/integration", mocktest.JSONResponder(t, "", 200, `{"integrations":[
		{"integration_id":"int-1","integration_type":"CRM","description":"Opportunities from the CRM","name":"CRM sync","extra":1}]}`))
	got, err := paging.Collect(c.Events.Integrations(context.Background()))
	want := []events.Integration{{ID: "int-1", Type: "CRM", Name: "CRM sync", Description: "Opportunities from the CRM"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("integrations = %+v, %v", got, err)
	}
}

func TestKinds(t *testing.T) {
	c, mt := mocktest.New(t)
	mt.RegisterResponder(http.MethodGet, base+"/event/v1/metadata/event", mocktest.JSONResponder(t, "", 200, `{"events":[
		{"name":"object.update","description":"An object was updated."},
		{"name":"contract.signed","description":"Not known to this SDK."}]}`))
	var names []events.Kind
	for k, err := range c.Events.Kinds(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, k.Name)
	}
	if !slices.Equal(names, []events.Kind{events.KindObjectUpdate, "contract.signed"}) {
		t.Fatalf("kinds = %v", names)
	}

	mt.RegisterResponder(http.MethodGet, base+"/event/v1/metadata/event", httpmock.NewStringResponder(400, `{"error":"bad","message":"no"}`))
	n := 0
	for _, err := range c.Events.Kinds(context.Background()) {
		n++
		if !partner.IsBadRequest(err) {
			t.Fatalf("err = %v", err)
		}
	}
	if n != 1 {
		t.Fatalf("iteration yielded %d times, want the error once", n)
	}
}

func TestSchema(t *testing.T) {
	c, mt := mocktest.New(t)
	mt.RegisterResponder(http.MethodGet, base+"/event/v1/metadata/event/object.update", mocktest.JSONResponder(t, "", 200,
		`{"schema":{"type":"object","properties":{"event":{"type":"string"}}}}`))
	s, err := c.Events.Schema(context.Background(), events.KindObjectUpdate)
	if err != nil || string(s.Raw) != `{"type":"object","properties":{"event":{"type":"string"}}}` {
		t.Fatalf("schema = %+v, %v", s, err)
	}
	// The deployed service documents no shape: an answer without a
	// "schema" member is the schema itself, returned untouched.
	const bare = `{"type":"object","properties":{"stage":{"type":"string"},"acme_portal.referral_id":{"type":"string"}}}`
	mt.RegisterResponder(http.MethodGet, base+"/event/v1/metadata/event/object.acme_portal_referral_submit", mocktest.JSONResponder(t, "", 200, bare))
	s, err = c.Events.Schema(context.Background(), "object.acme_portal_referral_submit")
	if err != nil || string(s.Raw) != bare {
		t.Fatalf("bare schema = %+v, %v", s, err)
	}
	mt.RegisterResponder(http.MethodGet, base+"/event/v1/metadata/event/a%2Fb", httpmock.NewStringResponder(404, `{"error":"not_found","message":"event not defined"}`))
	if _, err := c.Events.Schema(context.Background(), "a/b"); !partner.IsNotFound(err) {
		t.Fatalf("err = %v", err)
	}
}
