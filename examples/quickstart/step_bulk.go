package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/fake/demo"
)

// opportunitiesCSV is a small load for the demo opportunity integration,
// whose key field is sales_details.crm_opportunity_id. The third row has
// no key, on purpose: the execution reports it as an error, which shows
// how refused records come back.
const opportunitiesCSV = `sales_details.crm_opportunity_id,name,stage,amount,close_date
CRM-1001,Acme renewal,negotiation,12000,2026-03-31
CRM-1002,Globex expansion,prospecting,48000,2026-06-30
,Row without a key,prospecting,1000,2026-06-30
CRM-1003,Initech pilot,closed,7500,2026-01-15
`

// bulkStep loads a CSV of opportunities (POST /bulk/v1/bulkload), waits
// for its execution with a progress line per change of state, and shows
// the counts and the first errors.
func bulkStep(ctx context.Context, c *partner.Client, w io.Writer) error {
	integration := demo.OpportunityIntegration
	ack, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: integration, Format: bulk.CSV}, strings.NewReader(opportunitiesCSV))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "bulk: loading opportunities into %s, execution %s (one row has no key on purpose, to show a refused record)\n",
		ack.IntegrationID, ack.ExecutionID)
	var last bulk.State
	ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{
		Status:   bulk.StatusParams{IncludeErrors: new(true), MaxErrors: new(3)},
		Interval: 500 * time.Millisecond,
		Progress: func(ex *bulk.Execution) {
			if ex.Status != last { // a line per change of state, not per poll
				last = ex.Status
				fmt.Fprintf(w, "bulk: execution %s, %d records received\n", ex.Status, ex.InputCount)
			}
		},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "bulk: %d received, %d loaded, %d failed, %d skipped\n",
		ex.InputCount, ex.SuccessCount, ex.ErrorCount, ex.SkipCount)
	for _, e := range ex.Errors {
		row, _ := json.Marshal(e.Row) // the failing record, as the service sent it
		fmt.Fprintf(w, "bulk: error in record %q (intended): %s, row %s\n", e.ID, e.Message, row)
	}
	return nil
}
