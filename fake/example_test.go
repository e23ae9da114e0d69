package fake_test

// Examples of the fake as a test uses it: through the SDK's client. (The
// package fake itself imports no SDK package but the leaf deployment; its
// examples may.)

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"strings"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/objects"
	"github.com/partnerapi/partner-go/reports"
)

// client returns an SDK client of srv made from its Connection: its URL,
// its default client and its words.
func client(srv *fake.Server, opts ...partner.Option) *partner.Client {
	c, err := partner.New(append([]partner.Option{partner.WithConnection(srv.Connection())}, opts...)...)
	if err != nil {
		log.Fatal(err)
	}
	return c
}

// The demo data names its ids with the constants of package fake/demo.
func Example() {
	srv := fake.NewServer(fake.WithDemoData())
	defer srv.Close()
	c := client(srv)
	defer c.Close(context.Background())

	for r, err := range c.Reports.List(context.Background(), reports.ListParams{}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.ID, r.Name)
	}
	o, _ := srv.Object(demo.Opportunity1)
	fmt.Println(o.Type, o.Fields["name"])
	// Output:
	// 101 Pipeline by stage
	// 102 Partners
	// 103 Quarterly targets (draft)
	// 104 Deal registrations
	// opportunity Acme renewal
}

// Connection hands a test what its client needs: the fake's URL, the
// credentials it accepts and the words it speaks, named explicitly, so that
// the client takes the path it takes toward a deployment. Given a
// deployment's words, the fake speaks those, and so does the client.
func ExampleFake_Connection() {
	srv := fake.NewServer(fake.WithDemoData(), fake.WithWords(deployment.Words{EnvHeader: "x-acme-env", PortalWord: "acme_portal"}))
	defer srv.Close()
	conn := srv.Connection()
	fmt.Println(conn.ClientID, conn.Words.EnvHeader, conn.Words.AuditField())

	c, err := partner.New(partner.WithConnection(conn), partner.WithEnvironment("sandbox-eu"))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	res, err := c.Objects.Audit(ctx, demo.Opportunity1, objects.AuditParams{StatusCode: objects.StatusLinked, Message: "linked"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.FieldName, res.StatusCode, srv.Requests()[1].Env)
	// Output:
	// partner-test-client x-acme-env acme_portal.integration_status
	// acme_portal.integration_status LINKED sandbox-eu
}

// A test seeds exactly the state it needs: here a report with two rows,
// exported through a view as the code under test would.
func ExampleFake_AddReport() {
	srv := fake.NewServer(fake.WithViewDelay(0)) // empty: no demo data; views are ready at once
	defer srv.Close()
	id := srv.AddReport(fake.Report{
		Name: "Regions",
		Columns: []fake.Column{
			{ID: "region", Name: "Region"},
			{ID: "deals", Name: "Deals", Type: "NUMBER"},
		},
		Rows: [][]any{{"north", 3}, {"south", 5}},
	})
	c := client(srv)

	var out strings.Builder
	n, err := c.Reports.ExportCSV(context.Background(), id, &out, reports.ExportOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(n, " rows\n", out.String())
	// Output:
	// 2 rows
	// Region,Deals
	// north,3
	// south,5
}

// Seeding an integration and an object, then loading rows through the
// integration: a row with a known key updates that object, a new key
// creates one. Any object type works; see the package doc for what the
// fake knows of "opportunity" and "account".
func ExampleFake_AddIntegration() {
	srv := fake.NewServer(fake.WithBulkDelay(0)) // executions complete at once
	defer srv.Close()
	integ := srv.AddIntegration(fake.Integration{
		ID: "int-crm", Type: "CRM", Name: "CRM accounts",
		ObjectType: "account", KeyField: "account_info.external_account_id",
	})
	srv.AddObject(fake.Object{ID: "acc-1", Type: "account", IntegrationID: integ, Fields: map[string]any{
		"name": "Acme", "account_info": map[string]any{"external_account_id": "A-1"},
	}})
	c := client(srv)

	csv := "account_info.external_account_id,name,employees\nA-1,Acme Ltd,40\nA-2,Globex,12\n"
	ack, err := c.Bulk.Load(context.Background(), bulk.LoadParams{IntegrationID: integ}, strings.NewReader(csv))
	if err != nil {
		log.Fatal(err)
	}
	ex, err := c.Bulk.WaitExecution(context.Background(), ack, bulk.WaitOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ex.Status, ex.SuccessCount)
	for _, o := range srv.Objects("account") {
		id, _ := o.Field("account_info.external_account_id")
		fmt.Println(id, o.Fields["name"], o.Fields["employees"])
	}
	// Unordered output:
	// completed 2
	// A-1 Acme Ltd 40
	// A-2 Globex 12
}

// A fault makes chosen requests fail: here the first report list answers
// 503, the client retries, and the request log shows both attempts.
func ExampleFake_InjectFault() {
	srv := fake.NewServer(fake.WithDemoData())
	defer srv.Close()
	c := client(srv, partner.WithRetryWait(time.Millisecond, 10*time.Millisecond))

	srv.InjectFault(fake.Fault{Method: "POST", Path: "/report/v1/list", Status: 503, Times: 1})
	n := 0
	for _, err := range c.Reports.List(context.Background(), reports.ListParams{}) {
		if err != nil {
			log.Fatal(err)
		}
		n++
	}
	fmt.Println(n, "reports after", srv.CountRequests("POST", "/report/v1/list"), "requests")

	// A fault on every request (Times 0) outlasts the retries and reaches
	// the caller as a *partner.Error.
	srv.InjectFault(fake.Fault{Path: "/report/v1/view/*/prepare_export", Status: 500, Message: "boom"})
	_, err := c.Reports.PrepareExport(context.Background(), demo.ReportPipeline)
	fmt.Println(partner.IsServerError(err), err)
	// Output:
	// 4 reports after 2 requests
	// true partner: POST /report/v1/view/101/prepare_export: 500 Internal Server Error: injected_fault: boom
}

// The manual clock makes the fake's asynchronous work deterministic: a
// bulk execution runs until the clock passes the processing delay.
func ExampleManualClock() {
	clock := fake.NewManualClock(time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC))
	srv := fake.NewServer(fake.WithDemoData(), fake.WithClock(clock))
	defer srv.Close()
	c := client(srv)
	ctx := context.Background()

	ack, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration},
		strings.NewReader("sales_details.crm_opportunity_id,name\nCRM-9,Zeta\n"))
	if err != nil {
		log.Fatal(err)
	}
	ex, err := c.Bulk.Status(ctx, ack.IntegrationID, ack.ExecutionID, bulk.StatusParams{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ex.Status)
	clock.Advance(fake.DefaultBulkDelay)
	if ex, err = c.Bulk.Status(ctx, ack.IntegrationID, ack.ExecutionID, bulk.StatusParams{}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(ex.Status, ex.SuccessCount, "loaded at", ex.CompletedAt.Format(time.TimeOnly))
	// Output:
	// running
	// completed 1 loaded at 09:00:01
}

// The request log records what the code under test sent, without
// credentials or tokens.
func ExampleFake_Requests() {
	srv := fake.NewServer(fake.WithDemoData())
	defer srv.Close()
	c := client(srv, partner.WithEnvironment("sandbox"))
	ctx := context.Background()
	if _, err := c.Objects.ExternalIDs(ctx, demo.Opportunity1); err != nil {
		log.Fatal(err)
	}
	if _, err := c.Objects.ExternalIDs(ctx, "opp-missing"); !partner.IsNotFound(err) {
		log.Fatal("want a 404: ", err)
	}

	for _, r := range srv.Requests() {
		fmt.Println(r.Method, r.Path, r.Status, r.ClientID, r.Env)
	}
	// Output:
	// POST /oauth/token 200  sandbox
	// GET /app/v1/object/opp-demo-0001/external_id 200 partner-test-client sandbox
	// GET /app/v1/object/opp-missing/external_id 404 partner-test-client sandbox
}

// Webhook deliveries go to the subscriber's callback URL when objects
// change; WaitDeliveries lets them settle and Deliveries lists each
// attempt.
func ExampleFake_Deliveries() {
	srv := fake.NewServer(fake.WithDemoData())
	defer srv.Close()
	c := client(srv)
	ctx := context.Background()

	hook := httptest.NewServer(&events.Handler{Insecure: true, Deliver: func(ctx context.Context, d *events.Delivery) error {
		return nil // the code under test would act on d here
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
	if err := srv.WaitDeliveries(ctx); err != nil {
		log.Fatal(err)
	}
	for _, d := range srv.Deliveries() {
		fmt.Println(d.Event, d.ObjectID, d.Attempt, d.Status, d.Delivered)
	}
	// Output: object.stage_change opp-demo-0001 1 204 true
}
