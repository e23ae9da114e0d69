package bulk_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"

	"github.com/partnerapi/partner-go/bulk"
)

// statusSequence answers the status reads of exe-1 with bodies in turn,
// repeating the last one.
func statusSequence(mt *httpmock.MockTransport, bodies ...string) {
	n := 0
	mt.RegisterResponder("GET", base+"/bulk/v1/status/int-1", func(*http.Request) (*http.Response, error) {
		b := bodies[min(n, len(bodies)-1)]
		n++
		return jsonResponse(b), nil
	})
}

var fastWait = bulk.WaitOptions{Interval: time.Microsecond, MaxInterval: time.Microsecond}

// TestWaitExecutionUnknownStatusIsNotTerminal: an empty or unknown status
// keeps the wait polling; it ends on the first known terminal state.
func TestWaitExecutionUnknownStatusIsNotTerminal(t *testing.T) {
	c, mt := mockClient(t)
	statusSequence(mt,
		`{"integration_id":"int-1","execution_id":"exe-1","status":""}`,
		`{"integration_id":"int-1","execution_id":"exe-1","status":"queued"}`,
		`{"integration_id":"int-1","execution_id":"exe-1","status":"running"}`,
		`{"integration_id":"int-1","execution_id":"exe-1","status":"completed","input_count":2,"success_count":1,"error_count":1}`)
	var seen []string
	opts := fastWait
	opts.Progress = func(ex *bulk.Execution) { seen = append(seen, string(ex.Status)) }
	ex, err := c.Bulk.WaitExecution(context.Background(), "int-1", "exe-1", opts)
	if err != nil || ex == nil || ex.Status != bulk.Completed || ex.ErrorCount != 1 {
		t.Fatalf("WaitExecution = %+v, %v", ex, err)
	}
	if strings.Join(seen, ",") != ",queued,running,completed" {
		t.Errorf("progress saw %q", seen)
	}
}

// TestWaitExecutionFailure: a completed execution with a status_msg is a
// terminal failure: a *bulk.ExecutionError carrying the final status,
// which is also returned.
func TestWaitExecutionFailure(t *testing.T) {
	c, mt := mockClient(t)
	statusSequence(mt,
		`{"integration_id":"int-1","execution_id":"exe-1","status":"running"}`,
		`{"integration_id":"int-1","execution_id":"exe-1","status":"completed","status_msg":"integration disabled"}`)
	ex, err := c.Bulk.WaitExecution(context.Background(), "int-1", "exe-1", fastWait)
	var xerr *bulk.ExecutionError
	if !errors.As(err, &xerr) || xerr.Execution.StatusMsg != "integration disabled" || ex != xerr.Execution {
		t.Fatalf("WaitExecution = %+v, %v; want the final status and a *bulk.ExecutionError", ex, err)
	}
	if !strings.Contains(err.Error(), "exe-1") || !strings.Contains(err.Error(), "integration disabled") {
		t.Errorf("error %q names neither the execution nor the message", err)
	}
}

// TestWaitExecutionContextEnds: the last status read comes back beside
// the context's error.
func TestWaitExecutionContextEnds(t *testing.T) {
	c, mt := mockClient(t)
	statusSequence(mt, `{"integration_id":"int-1","execution_id":"exe-1","status":"running","input_count":3}`)
	ctx, cancel := context.WithCancel(context.Background())
	opts := fastWait
	opts.Progress = func(*bulk.Execution) { cancel() }
	ex, err := c.Bulk.WaitExecution(ctx, "int-1", "exe-1", opts)
	if !errors.Is(err, context.Canceled) || ex == nil || ex.Status != bulk.Running || ex.InputCount != 3 {
		t.Fatalf("WaitExecution = %+v, %v; want the running status and context.Canceled", ex, err)
	}
}

// TestLoadOpportunitiesAndWait loads opportunities and waits for their
// execution.
func TestLoadOpportunitiesAndWait(t *testing.T) {
	c, mt := mockClient(t)
	mt.RegisterResponder("POST", base+"/bulk/v1/bulkload_opportunity", httpmock.NewStringResponder(200,
		`{"integration_id":"int-1","execution_id":"exe-1","created_at":"2024-05-01T10:00:00Z"}`))
	statusSequence(mt,
		`{"integration_id":"int-1","execution_id":"exe-1","status":"running"}`,
		`{"integration_id":"int-1","execution_id":"exe-1","status":"completed","input_count":1,"success_count":1}`)
	ex, err := c.Bulk.LoadOpportunitiesAndWait(context.Background(), bulk.LoadOpportunitiesParams{IntegrationID: "int-1"},
		strings.NewReader("sales_details.crm_opportunity_id\nCRM-1\n"), fastWait)
	if err != nil || ex.Status != bulk.Completed || ex.ExecutionID != "exe-1" || ex.SuccessCount != 1 {
		t.Fatalf("LoadOpportunitiesAndWait = %+v, %v", ex, err)
	}
	if n := mt.GetCallCountInfo()["GET "+base+"/bulk/v1/status/int-1"]; n != 2 {
		t.Errorf("%d status reads, want 2", n)
	}
}
