package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"
	"strings"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
)

// exampleClient starts a fake service with opts and returns it with a
// client of it: an application calls partner.New with its own base URL
// and credentials the same way.
func exampleClient(opts ...fake.Option) (*fake.Server, *partner.Client) {
	srv := fake.NewServer(opts...)
	c, err := partner.New(partner.WithBaseURL(srv.URL), partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret))
	if err != nil {
		log.Fatal(err)
	}
	return srv, c
}

func ExampleAnd() {
	f := events.And(
		events.In("stage", "closed", "won", "lost"),
		events.Eq("sales_details.partner", "P1"),
		events.Ge("amount", 10000),
	)
	fmt.Println(f)
	// Output: (stage in ["closed", "won", "lost"]) AND (sales_details.partner = "P1") AND (amount >= 10000)
}

func ExampleEq_hostile() {
	// Quotes and keywords inside a value stay inside its string.
	fmt.Println(events.Eq("name", `x" AND (stage = "won`))
	// Output: name = "x\" AND (stage = \"won"
}

func ExampleService_Kinds() {
	srv, c := exampleClient()
	defer srv.Close()
	for k, err := range c.Events.Kinds(context.Background()) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(k.Name)
	}
	// Output:
	// object.all
	// object.create
	// object.update
	// object.delete
	// object.stage_change
	// report.submit
	// object.partner_portal_referral_submit
}

func ExampleService_Subscribe() {
	srv, c := exampleClient(fake.WithDemoData())
	defer srv.Close()
	ctx := context.Background()

	id, err := c.Events.Subscribe(ctx, events.SubscribeParams{
		Name:          "closed deals",
		Events:        []events.Kind{events.KindObjectStageChange},
		IntegrationID: demo.OpportunityIntegration,
		Filter:        events.In("stage", "won", "lost"),
		CallbackURL:   "https://hooks.example.com/partner",
	})
	if err != nil {
		log.Fatal(err)
	}
	for s, err := range c.Events.Subscribers(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s\n", s.Name, s.Filters)
	}
	if err := c.Events.Unsubscribe(ctx, id); err != nil {
		log.Fatal(err)
	}
	// Output: closed deals: stage in ["won", "lost"]
}

func ExampleHandler() {
	srv, c := exampleClient(fake.WithDemoData())
	defer srv.Close()
	ctx := context.Background()

	// The receiver: an http.Handler at the callback URL.
	got := make(chan *events.Delivery, 1)
	hook := httptest.NewServer(&events.Handler{Insecure: true, Deliver: func(ctx context.Context, d *events.Delivery) error {
		got <- d
		return nil
	}})
	defer hook.Close()

	if _, err := c.Events.Subscribe(ctx, events.SubscribeParams{
		Name:        "stage watch",
		Events:      []events.Kind{events.KindObjectStageChange},
		ObjectIDs:   []string{demo.Opportunity1},
		CallbackURL: hook.URL,
	}); err != nil {
		log.Fatal(err)
	}
	srv.UpdateObject(demo.Opportunity1, map[string]any{"stage": "won"})

	// A delivery is the changed object's fields, flat, as strings.
	select {
	case d := <-got:
		fmt.Println(d.Fields["name"], d.Fields["stage"])
	case <-time.After(10 * time.Second):
		fmt.Println("no delivery")
	}
	// Output: Acme renewal won
}

func ExampleParseDelivery() {
	// A receiver that does not use Handler decodes the body itself. The
	// deployed service sends the changed object's fields, flat, as strings.
	body := []byte(`{"opportunity_id":"opp-1","stage":"won","amount":"10000"}`)
	d, err := events.ParseDelivery(body)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Fields["opportunity_id"], d.Fields["stage"], d.Fields["amount"])

	// A receiver that knows its event's schema decodes it into a struct.
	var opp struct {
		ID    string `json:"opportunity_id"`
		Stage string `json:"stage"`
	}
	if err := d.Decode(&opp); err != nil {
		log.Fatal(err)
	}
	fmt.Println(opp.ID, opp.Stage)
	// Output:
	// opp-1 won 10000
	// opp-1 won
}

func ExampleService_Integrations() {
	srv, c := exampleClient(fake.WithDemoData())
	defer srv.Close()
	for in, err := range c.Events.Integrations(context.Background()) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(in.ID, in.Type)
	}
	// Output:
	// int-demo-accounts CRM
	// int-demo-opportunities CRM
}

func ExampleService_Schema() {
	srv, c := exampleClient()
	defer srv.Close()
	s, err := c.Events.Schema(context.Background(), events.KindObjectStageChange)
	if err != nil {
		log.Fatal(err)
	}
	var schema struct {
		Type                 string `json:"type"`
		AdditionalProperties struct {
			Type string `json:"type"`
		} `json:"additionalProperties"`
	}
	if err := json.Unmarshal(s.Raw, &schema); err != nil {
		log.Fatal(err)
	}
	// A flat object of the object's fields, each a string.
	fmt.Println(schema.Type, schema.AdditionalProperties.Type)
	// Output: object string
}

func ExampleService_IntegrationSchema() {
	srv, c := exampleClient(fake.WithDemoData())
	defer srv.Close()
	s, err := c.Events.IntegrationSchema(context.Background(), demo.OpportunityIntegration)
	if err != nil {
		log.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(s.Raw, &schema); err != nil {
		log.Fatal(err)
	}
	// The fields the integration's object deliveries carry, as text.
	fmt.Println(schema.Properties["stage"].Type, schema.Properties["amount"].Type)
	// Output: string string
}

func ExampleService_Subscriber() {
	srv, c := exampleClient()
	defer srv.Close()
	ctx := context.Background()
	id, err := c.Events.Subscribe(ctx, events.SubscribeParams{
		Name:        "everything",
		Events:      []events.Kind{events.KindObjectAll},
		CallbackURL: "https://hooks.example.com/partner",
	})
	if err != nil {
		log.Fatal(err)
	}
	s, err := c.Events.Subscriber(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Name, s.Events)
	// Output: everything [object.all]
}

// A receiver that cannot take a delivery yet asks the sender to come back
// later: 503 with Retry-After, instead of the 500 any other error gives.
func ExampleStatusError() {
	h := &events.Handler{Insecure: true, Deliver: func(ctx context.Context, d *events.Delivery) error {
		return &events.StatusError{Status: 503, RetryAfter: "30", Err: errors.New("queue full")}
	}}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/hook", strings.NewReader(`{"name":"Acme renewal"}`)))
	fmt.Println(rec.Code, rec.Header().Get("Retry-After"))
	// Output: 503 30
}
