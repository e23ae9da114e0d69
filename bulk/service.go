// Package bulk is the /bulk/v1 area of the Partner Integration Service:
// bulk loads of records (CSV, JSON, attached CSV, JSON or XLSX files),
// signed uploads, and the status of the executions that process loads.
//
// A load is acknowledged at once with an execution id; the execution runs
// in the background. WaitExecution polls its status until it completes
// (LoadAndWait and its siblings do both):
//
//	ack, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: id}, csvFile)
//	...
//	ex, err := c.Bulk.WaitExecution(ctx, id, ack.ExecutionID, bulk.WaitOptions{
//		Status:   bulk.StatusParams{IncludeErrors: bulk.Bool(true)},
//		Progress: func(ex *bulk.Execution) { log.Println(ex.Status) },
//	})
//
// Every wait of the SDK follows one rule: it polls until a known terminal
// state or until ctx ends (an empty or unknown status is not terminal),
// reports a terminal failure as a typed error carrying the final state
// (*ExecutionError here), and returns the last state read beside any
// error.
//
// Bodies are streamed from the caller's reader, so a file of any size is
// loaded in bounded memory. Loads are not idempotent: a load is repeated
// only when the service certainly did not receive it (a 429, or a
// connection that failed before anything was written). When the service
// may have received it (the connection dropped after the body was sent,
// a 5xx, a timeout), the error says so: partner.IsOutcomeUnknown(err) is
// true. A load that upserts by id can be sent again safely; otherwise
// read the integration's data (the objects the load would have written,
// or a report over them) before loading again.
package bulk

import (
	"github.com/partnerapi/partner-go/internal/area"
	"github.com/partnerapi/partner-go/internal/transport"
)

// Service calls the /bulk/v1 operations. It is safe for concurrent use.
// Reach it as the Bulk field of a partner.Client; it has no constructor
// of its own.
type Service struct {
	t *transport.Client
}

func init() {
	area.Register(func(t *transport.Client) *Service { return &Service{t: t} })
}
