package bulk_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
)

// TestStatusDefaultsAgainstFake runs the status read against a fake
// whose defaults are the other published ones (errors included, at most
// 5): a nil option leaves the fake's default, an explicit false or 0 is
// obeyed.
func TestStatusDefaultsAgainstFake(t *testing.T) {
	c, _, clock := fakeClient(t, nil, fake.WithBulkStatusDefaults(true, 1))
	ctx := context.Background()
	ack, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, strings.NewReader(oppsCSV))
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(fake.DefaultBulkDelay)
	for name, tc := range map[string]struct {
		opts       bulk.StatusParams
		wantErrors int
	}{
		"service defaults": {bulk.StatusParams{}, 1},
		"explicit false":   {bulk.StatusParams{IncludeErrors: new(false)}, 0},
		"explicit zero":    {bulk.StatusParams{MaxErrors: new(0)}, 0},
		"explicit both":    {bulk.StatusParams{IncludeErrors: new(true), MaxErrors: new(2)}, 2},
	} {
		ex, err := c.Bulk.Status(ctx, ack.IntegrationID, ack.ExecutionID, tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(ex.Errors) != tc.wantErrors || ex.IncludeErrors != (tc.opts.IncludeErrors == nil || *tc.opts.IncludeErrors) {
			t.Errorf("%s: errors %d, include %v; want %d errors", name, len(ex.Errors), ex.IncludeErrors, tc.wantErrors)
		}
	}
}

// TestMisspelledSuccessCountAgainstFake reads the success count from a
// fake that spells it succcess_count, as a deployed description does.
func TestMisspelledSuccessCountAgainstFake(t *testing.T) {
	c, srv, clock := fakeClient(t, nil, fake.WithDeployment(fake.Deployment{MisspelledSuccessCount: true}))
	ctx := context.Background()
	ack, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, strings.NewReader(oppsCSV))
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(fake.DefaultBulkDelay)
	ex, err := c.Bulk.Status(ctx, ack.IntegrationID, ack.ExecutionID, bulk.StatusParams{})
	if err != nil {
		t.Fatal(err)
	}
	if ex.SuccessCount != 2 || ex.ErrorCount != 2 || ex.InputCount != 4 {
		t.Errorf("execution = %+v", ex)
	}
	if got, _ := srv.BulkExecution(ack.ExecutionID); got.SuccessCount != 2 {
		t.Errorf("fake's execution = %+v", got)
	}
}

// TestAttachmentsAgainstFake loads attachments through the published
// routes of the fake, which reads the format from the query only: CSV,
// JSON and XLSX files named by their extension, a file of another name
// with the format set, and XLSX and CSV files of opportunities.
func TestAttachmentsAgainstFake(t *testing.T) {
	c, srv, _ := fakeClient(t, nil, fake.WithBulkDelay(0))
	ctx := context.Background()
	p := bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}
	csv := "sales_details.crm_opportunity_id,name\nR-1,attached\n"
	if _, err := c.Bulk.LoadAttachment(ctx, p, "a.csv", strings.NewReader(csv)); err != nil {
		t.Fatal(err)
	}
	ack, err := c.Bulk.LoadAttachment(ctx, p, "b.json", strings.NewReader(`[{"sales_details":{"crm_opportunity_id":"R-2"},"name":"attached"}]`))
	if err != nil || ack.Format != bulk.JSON {
		t.Fatalf("json: %+v, %v", ack, err)
	}
	xlsx := xlsxFile(t, [][]any{{"sales_details.crm_opportunity_id", "name"}, {"R-3", "attached"}})
	if ack, err := c.Bulk.LoadAttachment(ctx, p, "c.xlsx", bytes.NewReader(xlsx)); err != nil || ack.Format != bulk.XLSX {
		t.Fatalf("xlsx: %+v, %v", ack, err)
	}
	p.Format = bulk.JSON
	if _, err := c.Bulk.LoadAttachment(ctx, p, "export.txt", strings.NewReader(`[{"sales_details":{"crm_opportunity_id":"R-6"},"name":"attached"}]`)); err != nil {
		t.Fatal(err)
	}
	if n := srv.CountRequests("POST", "/bulk/v1/bulkload"); n != 4 {
		t.Errorf("%d loads on /bulk/v1/bulkload, want 4", n)
	}

	xlsx = xlsxFile(t, [][]any{{"sales_details.crm_opportunity_id", "name"}, {"R-4", "Excel opportunity"}})
	ack, err = c.Bulk.LoadOpportunitiesAttachment(ctx, bulk.LoadOpportunitiesParams{IntegrationID: demo.OpportunityIntegration}, "opps.xlsx", bytes.NewReader(xlsx))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{})
	if err != nil || ex.SuccessCount != 1 {
		t.Fatalf("opportunity xlsx: %+v, %v", ex, err)
	}
	// Without a header row, columns are named by position.
	_, err = c.Bulk.LoadOpportunitiesAttachment(ctx, bulk.LoadOpportunitiesParams{IntegrationID: demo.OpportunityIntegration, NoHeaderRow: true},
		"opps.csv", strings.NewReader("R-5,Positional\n"))
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.CountRequests("POST", "/bulk/v1/bulkload_opportunity"); n != 2 {
		t.Errorf("%d loads on /bulk/v1/bulkload_opportunity, want 2", n)
	}
	ks := keys(srv)
	for _, k := range []string{"R-1", "R-2", "R-3", "R-6"} {
		if ks[k].Fields["name"] != "attached" {
			t.Errorf("%s = %+v", k, ks[k])
		}
	}
	if ks["R-4"].Fields["name"] != "Excel opportunity" {
		t.Errorf("R-4 = %+v", ks["R-4"])
	}
	if o := ks["R-5"]; o.Fields["2"] != "Positional" {
		t.Errorf("R-5 = %+v", o)
	}
}

// TestSignedUploadAgainstFake uploads to a fake whose URLs are signed for
// PUT with text/csv: the default POST is refused with a 403 whose error
// names the signature, the signed method and content type are taken, and
// the load of the token processes the file.
func TestSignedUploadAgainstFake(t *testing.T) {
	c, srv, _ := fakeClient(t, nil, fake.WithBulkDelay(0), fake.WithDeployment(fake.Deployment{UploadMethod: "PUT", UploadContentType: "text/csv"}))
	ctx := context.Background()
	tk, err := c.Bulk.UploadURL(ctx, demo.OpportunityIntegration, "opps.csv")
	if err != nil {
		t.Fatal(err)
	}
	file := "sales_details.crm_opportunity_id,name\nU-7,uploaded\n"
	err = c.Bulk.Upload(ctx, tk, bulk.UploadParams{}, strings.NewReader(file))
	var perr *partner.Error
	if !errors.As(err, &perr) || perr.StatusCode != 403 || !strings.Contains(err.Error(), "signature covers the method (POST sent)") {
		t.Fatalf("POST to a URL signed for PUT: %v", err)
	}
	if err := c.Bulk.Upload(ctx, tk, bulk.UploadParams{Method: "PUT", ContentType: "text/csv"}, strings.NewReader(file)); err != nil {
		t.Fatal(err)
	}
	ack, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration, Format: bulk.CSV, FileToken: tk.UploadToken}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{}); err != nil || ex.SuccessCount != 1 {
		t.Fatalf("execution %+v, %v", ex, err)
	}
	if o := keys(srv)["U-7"]; o.Fields["name"] != "uploaded" {
		t.Errorf("U-7 = %+v", o)
	}
}
