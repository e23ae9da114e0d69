package bulk_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
)

// TestLoadRefusesAnXLSXBody: data in the body is JSON or CSV, XLSX only
// as an attached file (gateway export bulk: bulkload description; the
// connector's BulkloadData allows csv and json). Load refuses XLSX with a
// body before sending and names LoadAttachment; an uploaded XLSX file
// (FileToken, no body) is still loaded.
func TestLoadRefusesAnXLSXBody(t *testing.T) {
	c, mt := mockClient(t)
	_, err := c.Bulk.Load(context.Background(), bulk.LoadParams{IntegrationID: "int-1", Format: bulk.XLSX}, strings.NewReader("PK"))
	if err == nil || !strings.Contains(err.Error(), "LoadAttachment") || !strings.Contains(err.Error(), "XLSX") {
		t.Fatalf("err = %v, want one naming LoadAttachment", err)
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
	mt.RegisterResponder("POST", base+"/bulk/v1/bulkload", func(req *http.Request) (*http.Response, error) {
		if q := req.URL.Query(); q.Get("data_format") != "XLSX" || q.Get("file_token") != "tok" {
			t.Errorf("query = %v", q)
		}
		return jsonResponse(`{"integration_id":"int-1","execution_id":"a64690c2450","created_at":"2020-05-18T14:06:57.572Z","data_format":"XLSX"}`), nil
	})
	if _, err := c.Bulk.Load(context.Background(), bulk.LoadParams{IntegrationID: "int-1", Format: bulk.XLSX, FileToken: "tok"}, nil); err != nil {
		t.Fatalf("uploaded XLSX file: %v", err)
	}
}

// TestXLSXAgainstFake: the fake refuses an XLSX body as the service
// would, and loads the same workbook attached.
func TestXLSXAgainstFake(t *testing.T) {
	c, _, clock := fakeClient(t, nil)
	ctx := context.Background()
	book := xlsxFile(t, [][]any{{"sales_details.crm_opportunity_id", "name"}, {"X-9", "attached"}})
	p := bulk.LoadParams{IntegrationID: demo.OpportunityIntegration, Format: bulk.XLSX}
	if _, err := c.Bulk.Load(ctx, p, bytes.NewReader(book)); err == nil || !strings.Contains(err.Error(), "LoadAttachment") {
		t.Fatalf("Load of an XLSX body: %v", err)
	}
	ack, err := c.Bulk.LoadAttachment(ctx, p, "book.xlsx", bytes.NewReader(book))
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(fake.DefaultBulkDelay)
	ex, err := c.Bulk.Status(ctx, ack.IntegrationID, ack.ExecutionID, bulk.StatusParams{})
	if err != nil || ex.SuccessCount != 1 {
		t.Fatalf("status %+v, %v", ex, err)
	}
}

// TestPublishedAckAndStatus decodes the published acknowledgement and
// status examples (gateway export bulk: bulkload, status), whose
// timestamps carry milliseconds and which have no column_delimiter and no
// max_errors: the SDK has no member for either.
func TestPublishedAckAndStatus(t *testing.T) {
	c, mt := mockClient(t)
	mt.RegisterResponder("POST", base+"/bulk/v1/bulkload", func(*http.Request) (*http.Response, error) {
		return jsonResponse("{\r\n  \"integration_id\": \"WS-Integration_agpzfndzLW\",\r\n  \"execution_id\": \"a64690c2450\",\r\n  \"created_at\": \"2020-05-18T14:06:57.572Z\",\r\n  \"data_format\": \"JSON\"\r\n}"), nil
	})
	mt.RegisterResponder("GET", base+"/bulk/v1/status/WS-Integration_agpzfndzLW", func(*http.Request) (*http.Response, error) {
		return jsonResponse(`{"integration_id": "WS-Integration_agpzfndzLW", "execution_id": "a64690c2450", "status": "completed", "input_count": 200, "error_count": 3, "success_count": 197, "skip_count": 0,
			"started_at": "2020-05-07T14:06:57.572Z", "completed_at": "2020-05-07T14:07:10.572Z", "include_errors": true, "errors": [
			{"id": "aw00079", "message": "invalid value in field 'close_date'", "data_row": {"opportunity_id": "aw00079", "close_date": "20-jan-2020", "amount": 250000}}]}`), nil
	})
	ack, err := c.Bulk.Load(context.Background(), bulk.LoadParams{IntegrationID: "WS-Integration_agpzfndzLW", Format: bulk.JSON}, strings.NewReader(`[]`))
	if err != nil {
		t.Fatal(err)
	}
	want := bulk.Ack{IntegrationID: "WS-Integration_agpzfndzLW", ExecutionID: "a64690c2450", CreatedAt: time.Date(2020, 5, 18, 14, 6, 57, 572e6, time.UTC), Format: bulk.JSON}
	if *ack != want {
		t.Errorf("ack = %+v, want %+v", *ack, want)
	}
	ex, err := c.Bulk.Status(context.Background(), ack.IntegrationID, ack.ExecutionID, bulk.StatusParams{})
	if err != nil {
		t.Fatal(err)
	}
	if !ex.Done() || ex.SuccessCount != 197 || !ex.IncludeErrors || len(ex.Errors) != 1 || ex.CompletedAt.Sub(ex.StartedAt) != 13*time.Second {
		t.Errorf("execution = %+v", ex)
	}
}
