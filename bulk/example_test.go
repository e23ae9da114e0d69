package bulk_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
)

// exampleClient returns a client of a fake with the demo data whose
// executions complete at once, and opts.
func exampleClient(opts ...fake.Option) (*partner.Client, func()) {
	srv := fake.NewServer(append([]fake.Option{fake.WithDemoData(), fake.WithBulkDelay(0)}, opts...)...)
	c, err := partner.New(partner.WithBaseURL(srv.URL),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret))
	if err != nil {
		log.Fatal(err)
	}
	return c, srv.Close
}

// Load a CSV and wait for its execution, with the failed records.
func ExampleService_Load() {
	c, done := exampleClient()
	defer done()
	ctx := context.Background()

	csv := strings.NewReader("sales_details.crm_opportunity_id;name;amount\n" +
		"CRM-1;Renewal;1200\n" +
		"CRM-2;Upsell;a lot\n")
	ack, err := c.Bulk.Load(ctx, bulk.LoadParams{
		IntegrationID:   demo.OpportunityIntegration,
		ColumnDelimiter: ";",
	}, csv)
	if err != nil {
		log.Fatal(err)
	}
	ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{
		Status:   bulk.StatusParams{IncludeErrors: new(true)},
		Progress: func(ex *bulk.Execution) { fmt.Println("status:", ex.Status) },
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d received, %d loaded, %d failed\n", ex.InputCount, ex.SuccessCount, ex.ErrorCount)
	for _, e := range ex.Errors {
		fmt.Printf("%s: %s\n", e.ID, e.Message)
	}
	// Output:
	// status: completed
	// 2 received, 1 loaded, 1 failed
	// CRM-2: invalid value for field "amount": "a lot" is not a number
}

// Load Go values as a JSON array, encoded as the request is sent.
func ExampleLoadRows() {
	c, done := exampleClient()
	defer done()
	ctx := context.Background()

	type account struct {
		ExternalID string `json:"account_info.external_account_id"`
		Name       string `json:"name"`
		Employees  int    `json:"employees"`
	}
	rows := []account{{"ACC-1", "Initrode", 120}, {"ACC-2", "Umbrella", 4000}}
	ack, err := bulk.LoadRows(ctx, c.Bulk, bulk.LoadParams{IntegrationID: demo.AccountIntegration}, rows)
	if err != nil {
		log.Fatal(err)
	}
	ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ack.Format, ex.Status, ex.SuccessCount)
	// Output: JSON completed 2
}

// Load a file through a signed upload URL.
func ExampleService_LoadFile() {
	c, done := exampleClient()
	defer done()
	ctx := context.Background()

	dir, err := os.MkdirTemp("", "bulk-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "opportunities.csv")
	os.WriteFile(path, []byte("sales_details.crm_opportunity_id,name\nCRM-7,Pilot\n"), 0o600)

	ack, err := c.Bulk.LoadFile(ctx, bulk.LoadFileParams{IntegrationID: demo.OpportunityIntegration}, path)
	if err != nil {
		log.Fatal(err)
	}
	ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ex.Status, ex.SuccessCount)
	// Output: completed 1
}

// Upload a file to a URL signed for PUT and a content type (here a fake
// whose URLs are signed that way), then load it by its token.
func ExampleService_Upload() {
	c, done := exampleClient(fake.WithDeployment(fake.Deployment{UploadMethod: "PUT", UploadContentType: "text/csv"}))
	defer done()
	ctx := context.Background()

	tk, err := c.Bulk.UploadURL(ctx, demo.OpportunityIntegration, "opportunities.csv")
	if err != nil {
		log.Fatal(err)
	}
	file := strings.NewReader("sales_details.crm_opportunity_id,name\nCRM-8,Signed\n")
	if err := c.Bulk.Upload(ctx, tk, bulk.UploadParams{Method: "PUT", ContentType: "text/csv"}, file); err != nil {
		log.Fatal(err) // a 403 names the signature: method, content type, expiry
	}
	ack, err := c.Bulk.Load(ctx, bulk.LoadParams{
		IntegrationID: demo.OpportunityIntegration, Format: bulk.CSV, FileToken: tk.UploadToken,
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ex.Status, ex.SuccessCount)
	// Output: completed 1
}

// Load opportunities from a CSV without a header row: the columns are
// named by position.
func ExampleService_LoadOpportunities() {
	c, done := exampleClient()
	defer done()
	ctx := context.Background()

	ack, err := c.Bulk.LoadOpportunities(ctx, bulk.LoadOpportunitiesParams{
		IntegrationID: demo.OpportunityIntegration,
		NoHeaderRow:   true,
	}, strings.NewReader("CRM-8,Expansion\nCRM-9,Renewal\n"))
	if err != nil {
		log.Fatal(err)
	}
	ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ex.InputCount, ex.SuccessCount)
	// Output: 2 2
}

// Wait for the execution of a load, whichever load it was: WaitExecution
// takes its Ack. A wait ends on a known terminal state or with the
// context; a failed execution comes back as a *bulk.ExecutionError
// carrying its final status. An error of the load itself is not a wait's:
// when it is marked partner.IsOutcomeUnknown, read the integration's data
// before loading again.
func ExampleService_WaitExecution() {
	c, done := exampleClient()
	defer done()
	ctx := context.Background()

	csv := strings.NewReader("sales_details.crm_opportunity_id,name,stage\n" +
		"CRM-7,Expansion,won\n")
	ack, err := c.Bulk.LoadOpportunities(ctx, bulk.LoadOpportunitiesParams{
		IntegrationID: demo.OpportunityIntegration,
	}, csv)
	if err != nil {
		log.Fatal(err)
	}
	ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{})
	var failed *bulk.ExecutionError
	switch {
	case errors.As(err, &failed):
		log.Fatalf("execution failed: %s", failed.Execution.StatusMsg)
	case err != nil:
		log.Fatal(err)
	}
	fmt.Printf("%s: %d loaded\n", ex.Status, ex.SuccessCount)
	// Output: completed: 1 loaded
}

// Attach a file as multipart/form-data (POST /bulk/v1/bulkload). The
// file name's extension says the format, sent as data_format; a file
// named otherwise needs LoadParams.Format.
func ExampleService_LoadAttachment() {
	c, done := exampleClient()
	defer done()
	ctx := context.Background()

	f := strings.NewReader(`[{"sales_details": {"crm_opportunity_id": "CRM-21"}, "name": "Attached"}]`)
	ack, err := c.Bulk.LoadAttachment(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, "opps.json", f)
	if err != nil {
		log.Fatal(err)
	}
	ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ack.Format, ex.SuccessCount)
	// Output: JSON 1
}

// Attach a file of opportunities (CSV, JSON or XLSX) to POST
// /bulk/v1/bulkload_opportunity; its content_type comes from the file
// name's extension.
func ExampleService_LoadOpportunitiesAttachment() {
	c, done := exampleClient()
	defer done()
	ctx := context.Background()

	f := strings.NewReader(`[{"sales_details": {"crm_opportunity_id": "CRM-22"}, "name": "From JSON"}]`)
	ack, err := c.Bulk.LoadOpportunitiesAttachment(ctx, bulk.LoadOpportunitiesParams{IntegrationID: demo.OpportunityIntegration}, "opps.json", f)
	if err != nil {
		log.Fatal(err)
	}
	ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ex.Status, ex.SuccessCount)
	// Output: completed 1
}
