// Package bulk is the /bulk/v1 area of the Partner Integration Service:
// bulk loads of records (CSV, JSON, attached CSV, JSON or XLSX files),
// signed uploads, and the status of the executions that process loads.
//
// A load is acknowledged at once with an execution id; the execution runs
// in the background. Every load returns an Ack, and WaitExecution polls
// the status of its execution until it completes; the two calls compose
// for each of the loads:
//
//	ack, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: id}, csvFile)
//	...
//	ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{
//		Status:   bulk.StatusParams{IncludeErrors: new(true)},
//		Progress: func(ex *bulk.Execution) { log.Println(ex.Status) },
//	})
//
// Every wait of the SDK follows one rule: it polls until a known terminal
// state or until ctx ends (an empty or unknown status is not terminal),
// reports a terminal failure as a typed error carrying the final state
// (*ExecutionError here), and returns the last state read beside any
// error.
//
// # Load or LoadOpportunities
//
// Load (POST /bulk/v1/bulkload) is the general endpoint: it loads records
// of whatever object type the integration maps (accounts, opportunities,
// ...), from CSV with a header row, JSON, an attached CSV, JSON or XLSX
// file (LoadAttachment), or a file uploaded to a signed URL (LoadFile).
// Use it unless you need what only LoadOpportunities offers.
// LoadOpportunities (POST /bulk/v1/bulkload_opportunity) loads
// opportunities only, from a CSV or JSON body; its one addition is a CSV
// without a header row (NoHeaderRow), whose columns the service names by
// position. It takes no signed upload, XLSX only as an attached file
// (LoadOpportunitiesAttachment), and its acknowledgement carries no data
// format.
//
// # Attached files
//
// LoadAttachment and LoadOpportunitiesAttachment post the file as
// multipart/form-data, in a part named "file", to the same operations as
// Load and LoadOpportunities. Each request says the file's format
// (data_format, or content_type for opportunities), taken from the params
// or else from the file name's extension (.csv, .json, .xlsx); a file
// whose format neither says is refused before anything is sent, since the
// service would read it as CSV.
//
// # Counts of an execution
//
// Once an execution has completed, InputCount is the number of records
// received, and each record is counted once more: SuccessCount (created
// or updated), ErrorCount (refused; read them with IncludeErrors) or
// SkipCount (skipped: accepted, but nothing to write). The interface says
// only "records skipped"; the fake skips a record whose values the stored
// object already holds, so loading the same file twice gives SkipCount
// equal to its rows the second time.
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
	"go.opentelemetry.io/otel/metric"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/internal/plumbing"
)

// Service calls the /bulk/v1 operations. It is safe for concurrent use.
// A partner.Client has one as its Bulk field; New builds one over any
// core.Client.
type Service struct {
	t       *core.Client
	records metric.Int64Counter // records completed executions created or updated
}

// New returns a Service that sends its requests through p, which
// authorizes them (core.Config.Tokens).
func New(p *core.Client) *Service {
	// The API returns a working no-op instrument beside any error (a bad
	// name or unit), which would be the SDK's own fault: ignored.
	records, _ := plumbing.Of(p).Meter().Int64Counter("partner.bulk.records_loaded", metric.WithUnit("{record}"),
		metric.WithDescription("Records a bulk execution created or updated, counted when a wait sees it complete."))
	return &Service{t: p, records: records}
}
