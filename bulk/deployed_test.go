package bulk_test

import (
	"context"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/fake"
)

// TestStatusDefaultsAgainstFake runs the status read against a fake
// whose defaults are the other published ones (errors included, at most
// 5): a nil option leaves the fake's default, an explicit false or 0 is
// obeyed.
func TestStatusDefaultsAgainstFake(t *testing.T) {
	c, _, clock := fakeClient(t, nil, fake.WithBulkStatusDefaults(true, 1))
	ctx := context.Background()
	ack, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: fake.DemoOpportunityIntegration}, strings.NewReader(oppsCSV))
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(fake.DefaultBulkDelay)
	for name, tc := range map[string]struct {
		opts       bulk.StatusParams
		wantErrors int
		wantMax    int
	}{
		"service defaults": {bulk.StatusParams{}, 1, 1},
		"explicit false":   {bulk.StatusParams{IncludeErrors: bulk.Bool(false)}, 0, 1},
		"explicit zero":    {bulk.StatusParams{MaxErrors: bulk.Int(0)}, 0, 0},
		"explicit both":    {bulk.StatusParams{IncludeErrors: bulk.Bool(true), MaxErrors: bulk.Int(2)}, 2, 2},
	} {
		ex, err := c.Bulk.Status(ctx, ack.IntegrationID, ack.ExecutionID, tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(ex.Errors) != tc.wantErrors || ex.MaxErrors != tc.wantMax || ex.IncludeErrors != (tc.opts.IncludeErrors == nil || *tc.opts.IncludeErrors) {
			t.Errorf("%s: errors %d, max %d, include %v; want %d errors, max %d", name, len(ex.Errors), ex.MaxErrors, ex.IncludeErrors, tc.wantErrors, tc.wantMax)
		}
	}
}

// TestMisspelledSuccessCountAgainstFake reads the success count from a
// fake that spells it succcess_count, as a deployed description does.
func TestMisspelledSuccessCountAgainstFake(t *testing.T) {
	c, srv, clock := fakeClient(t, nil, fake.WithMisspelledSuccessCount())
	ctx := context.Background()
	ack, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: fake.DemoOpportunityIntegration}, strings.NewReader(oppsCSV))
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
