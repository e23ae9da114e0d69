package bulk_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	partner "github.com/partnerapi/partner-go"
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
	ex, err := c.Bulk.WaitExecution(context.Background(), &bulk.Ack{IntegrationID: "int-1", ExecutionID: "exe-1"}, opts)
	if err != nil || ex == nil || ex.Status != bulk.StateCompleted || ex.ErrorCount != 1 {
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
	ex, err := c.Bulk.WaitExecution(context.Background(), &bulk.Ack{IntegrationID: "int-1", ExecutionID: "exe-1"}, fastWait)
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
	ex, err := c.Bulk.WaitExecution(ctx, &bulk.Ack{IntegrationID: "int-1", ExecutionID: "exe-1"}, opts)
	if !errors.Is(err, context.Canceled) || ex == nil || ex.Status != bulk.StateRunning || ex.InputCount != 3 {
		t.Fatalf("WaitExecution = %+v, %v; want the running status and context.Canceled", ex, err)
	}
	// The error says what was still awaited, not only that ctx ended.
	if want := "partner: bulk: execution exe-1 still running: context canceled"; err.Error() != want {
		t.Errorf("error reads %q, want %q", err, want)
	}
}

// TestLoadOpportunitiesThenWaitExecution: the Ack of a load is what
// WaitExecution takes; it reads the status of that execution of that
// integration.
func TestLoadOpportunitiesThenWaitExecution(t *testing.T) {
	c, mt := mockClient(t)
	mt.RegisterResponder("POST", base+"/bulk/v1/bulkload_opportunity", httpmock.NewStringResponder(200,
		`{"integration_id":"int-1","execution_id":"exe-1","created_at":"2024-05-01T10:00:00Z"}`))
	var asked []string
	mt.RegisterResponder("GET", base+"/bulk/v1/status/int-1", func(r *http.Request) (*http.Response, error) {
		asked = append(asked, r.URL.RawQuery)
		return jsonResponse(`{"integration_id":"int-1","execution_id":"exe-1","status":"` + []string{"running", "completed"}[min(len(asked)-1, 1)] + `","input_count":1,"success_count":1}`), nil
	})
	ctx := context.Background()
	ack, err := c.Bulk.LoadOpportunities(ctx, bulk.LoadOpportunitiesParams{IntegrationID: "int-1"},
		strings.NewReader("sales_details.crm_opportunity_id\nCRM-1\n"))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := c.Bulk.WaitExecution(ctx, ack, fastWait)
	if err != nil || ex.Status != bulk.StateCompleted || ex.ExecutionID != "exe-1" || ex.SuccessCount != 1 {
		t.Fatalf("WaitExecution = %+v, %v", ex, err)
	}
	if strings.Join(asked, " ") != "execution_id=exe-1 execution_id=exe-1" {
		t.Errorf("status reads asked %q, want execution_id=exe-1 twice", asked)
	}
}

// TestWaitExecutionNeedsAnAck: a nil ack (the result of a load that
// failed) is refused before anything is sent.
func TestWaitExecutionNeedsAnAck(t *testing.T) {
	c, mt := mockClient(t)
	ex, err := c.Bulk.WaitExecution(context.Background(), nil, fastWait)
	if ex != nil || err == nil || !strings.HasPrefix(err.Error(), "partner: bulk: ") || !strings.Contains(err.Error(), "ack") {
		t.Fatalf("WaitExecution(nil) = %+v, %v; want an error naming the ack", ex, err)
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

// TestWaitExecutionCountsRecordsLoaded: a wait that sees an execution
// complete counts its successes in partner.bulk.records_loaded, those of
// an execution that completed with a status message (an ExecutionError)
// too: they were loaded.
func TestWaitExecutionCountsRecordsLoaded(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	c, mt := mockClient(t, partner.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	statusSequence(mt,
		`{"integration_id":"int-1","execution_id":"exe-1","status":"running"}`,
		`{"integration_id":"int-1","execution_id":"exe-1","status":"completed","status_msg":"3 rows refused","input_count":10,"success_count":7,"error_count":3}`)
	var xerr *bulk.ExecutionError
	if _, err := c.Bulk.WaitExecution(context.Background(), &bulk.Ack{IntegrationID: "int-1", ExecutionID: "exe-1"}, fastWait); !errors.As(err, &xerr) {
		t.Fatalf("err %v, want an ExecutionError", err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var got int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "partner.bulk.records_loaded" {
				for _, p := range s.DataPoints {
					got += p.Value
				}
			}
		}
	}
	if got != 7 {
		t.Errorf("records loaded %d, want 7", got)
	}
}
