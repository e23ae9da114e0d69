package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
)

// bulkLoadFlags are the flags of bulk load.
type bulkLoadFlags struct {
	integration, format string
	opportunities       bool
	followFlags
}

func (a *app) bulkLoadCmd() *cobra.Command {
	var fl bulkLoadFlags
	cmd := &cobra.Command{
		Use:   "load FILE --integration ID",
		Short: "Load a CSV, JSON or XLSX file into an integration",
		Long: `load sends FILE as one bulk load of the integration and prints the execution
that processes it. The upload shows a progress bar (bytes) when stderr is a
terminal. With --wait it follows the execution, printing one line per state,
and ends with the counts.

With --errors-out (which implies --wait) the failed rows are written to FILE
as CSV that loads again as it is: the rows' own columns (in the loaded CSV
file's order), then the service's message in a column _error (more
underscores when the data has such a column). When no row failed, no file is
written. The file is written as -o of reports export is: never through a
symbolic link, and an existing FILE is replaced only with --force. The
service's messages in _error (and _row) get a single quote before a
leading =, +, -, @, tab or carriage return, so that a spreadsheet does not
run them as formulas; the rows' own columns are written as they are, so
that they load again unchanged. Without --errors-out the first few failed
rows are printed (key, message, row). A CSV file whose last column is such
an _error column (and a _row column after it) is loaded without them: they
hold the reasons, not data, and the load says that it dropped them.
'partnerctl events integrations' lists the integrations to load.

A wait that ends early (Ctrl-C, a failed status read) leaves the execution
running and prints the 'partnerctl bulk status' command that goes on
following it.

FILE and --errors-out are checked before anything is sent.

A load is sent again only when the service certainly did not take it (a
429, a connection refused): when its answer is lost (a dropped connection,
a 5xx, an answer cut short), it is not repeated and the exit status is 3.

With --json, messages go to stderr and stdout gets JSON: without --wait
{"integration_id": "int-crm", "execution_id": "exe_01"}; with --wait the
execution, as 'bulk status --json' prints it:` + executionJSONHelp + `

Exit status: 0 once the load was accepted (with --wait: once the execution
completed and refused no record); 1 when it could not be started or
followed; 5 when it was followed and ended in a state other than
completed, or when records were refused (with --allow-partial, for scripts
that accept a partial refusal: when every record was refused); 2 for a usage error
(FILE a directory, for one); 3 when the service may have started the load
without saying so: read the integration's data before loading again; 4
when the credentials were refused.`,
		Example: `  partnerctl bulk load deals.csv --integration int-crm --wait
  partnerctl bulk load deals.xlsx --integration int-crm --opportunities --wait --errors-out failed.csv
  partnerctl bulk load deals.csv --integration int-crm --wait --allow-partial`,
		Args: exactArgs("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if fl.integration == "" {
				return usagef("--integration is required")
			}
			format := bulk.Format(strings.ToUpper(fl.format))
			if format == "" {
				format = bulk.FormatOf(args[0])
			}
			switch format {
			case "":
				format = bulk.CSV
			case bulk.CSV, bulk.JSON, bulk.XLSX:
			default:
				return usagef("--format must be csv, json or xlsx, not %q", fl.format)
			}
			if err := fl.check(); err != nil {
				return err
			}
			if err := checkInputFile(args[0]); err != nil {
				return err
			}
			if err := checkOutputPath("--errors-out", fl.errorsOut, fl.force); err != nil {
				return err
			}
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				return a.bulkLoad(ctx, cmd, c, args[0], format, fl)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.integration, "integration", "", "integration `ID` to load (required)")
	f.StringVar(&fl.format, "format", "", "csv, json or xlsx (default: from the file's extension)")
	f.BoolVar(&fl.opportunities, "opportunities", false, "load opportunities (POST /bulk/v1/bulkload_opportunity)")
	fl.addFlags(cmd)
	cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"csv", "json", "xlsx"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (a *app) bulkLoad(ctx context.Context, cmd *cobra.Command, c *partner.Client, path string, format bulk.Format, fl bulkLoadFlags) error {
	out := cmd.OutOrStdout()
	if fl.asJSON {
		out = cmd.ErrOrStderr()
	}
	spec := loadSpec{path: path, integration: fl.integration, format: format, opportunities: fl.opportunities}
	if format == bulk.CSV {
		sent, dropped, err := withoutReasonColumns(path)
		if err != nil {
			return fmt.Errorf("load of %s: %w", path, err)
		}
		if len(dropped) > 0 {
			defer os.Remove(sent)
			spec.path = sent
			printf(out, "column %s not sent: --errors-out wrote the service's reasons there\n", strings.Join(dropped, " and "))
		}
	}
	size := int64(0)
	if fi, err := os.Stat(spec.path); err == nil {
		size = fi.Size()
	}
	bar := a.newProgress(cmd.ErrOrStderr(), "upload "+filepath.Base(path), size, true)
	ack, err := startLoad(ctx, c, spec, bar.Set)
	bar.Done(err)
	if partner.IsOutcomeUnknown(err) {
		return fmt.Errorf("load of %s into integration %s: the service may have started it, so it was not sent again; "+
			"read the integration's data before loading again (rows that carry their ids load again safely): %w", path, fl.integration, err)
	}
	if err != nil {
		return fmt.Errorf("load of %s into integration %s: %w", path, fl.integration, err)
	}
	printf(out, "execution %s started (integration %s)\n", ack.ExecutionID, ack.IntegrationID)
	if !fl.wait {
		if fl.asJSON {
			return writeJSON(cmd.OutOrStdout(), ackJSON{IntegrationID: ack.IntegrationID, ExecutionID: ack.ExecutionID})
		}
		return nil
	}
	ff := fl.followFlags
	if format == bulk.CSV {
		ff.order = csvHeader(path)
	}
	return followExecution(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), c, ack, ff)
}

// ackJSON is a started load as --json prints it without --wait.
type ackJSON struct {
	IntegrationID string `json:"integration_id"`
	ExecutionID   string `json:"execution_id"`
}

// loadSpec says what a bulk load sends.
type loadSpec struct {
	path, integration string
	format            bulk.Format // CSV, JSON or XLSX
	opportunities     bool        // the opportunity operation
}

// startLoad sends the file as one load and returns the acknowledgement.
// sent is called with the bytes sent so far. CSV and JSON go as the
// request body, XLSX as an attached file; the file is streamed, and
// rewound if the SDK must send it again.
func startLoad(ctx context.Context, c *partner.Client, spec loadSpec, sent func(int64)) (*bulk.Ack, error) {
	file, err := os.Open(spec.path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	body := &countingReader{r: file, sent: sent}
	name := filepath.Base(spec.path)
	switch {
	case spec.opportunities && spec.format == bulk.XLSX:
		return c.Bulk.LoadOpportunitiesAttachment(ctx, bulk.LoadOpportunitiesParams{IntegrationID: spec.integration, Format: spec.format}, name, body)
	case spec.opportunities:
		return c.Bulk.LoadOpportunities(ctx, bulk.LoadOpportunitiesParams{IntegrationID: spec.integration, Format: spec.format}, body)
	case spec.format == bulk.XLSX:
		return c.Bulk.LoadAttachment(ctx, bulk.LoadParams{IntegrationID: spec.integration, Format: spec.format}, name, body)
	default:
		return c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: spec.integration, Format: spec.format}, body)
	}
}

// followLoad waits for the execution to finish, calling onState once for
// each state it reads in turn. Every status read sends p.
func followLoad(ctx context.Context, c *partner.Client, ack *bulk.Ack, p bulk.StatusParams, onState func(*bulk.Execution)) (*bulk.Execution, error) {
	opts := bulk.WaitOptions{Status: p}
	var last bulk.State
	opts.Progress = func(ex *bulk.Execution) {
		if ex.Status != last {
			last = ex.Status
			onState(ex)
		}
	}
	return c.Bulk.WaitExecution(ctx, ack, opts)
}

// columnOrder sorts cols in the order of order (a loaded file's header),
// those it does not name after them in name order, and returns cols.
func columnOrder(cols, order []string) []string {
	rank := func(c string) int {
		if i := slices.Index(order, c); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortFunc(cols, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	return cols
}

// csvHeader returns the header row of a CSV file, or nil.
func csvHeader(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	h, err := csv.NewReader(f).Read()
	if err != nil {
		return nil
	}
	if len(h) > 0 {
		h[0] = strings.TrimPrefix(h[0], "\ufeff")
	}
	return h
}

// writeRowErrors writes failed rows as CSV that loads again as it is: the
// rows' columns, in the order of order (the loaded file's header, when it
// has one) and then sorted, then the service's message in a column _error
// (prefixed with more underscores until no column of the data has that
// name). A row the service gave only as text goes in a column _row, named
// the same way.
func writeRowErrors(path string, force bool, errs []bulk.RowError, order []string) error {
	var cols []string
	seen := map[string]bool{}
	textRows := false
	for _, e := range errs {
		for k := range e.Row {
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
		textRows = textRows || (e.Row == nil && e.RowText != "")
	}
	cols = columnOrder(cols, order)
	unused := func(name string) string {
		for seen[name] || slices.Contains(order, name) {
			name = "_" + name
		}
		seen[name] = true
		return name
	}
	header := append(slices.Clip(cols), unused("_error"))
	if textRows {
		header = append(header, unused("_row"))
	}
	f, err := createOutput("--errors-out", path, force)
	if err != nil {
		return err
	}
	defer f.abort()
	w := csv.NewWriter(f)
	w.Write(header)
	for _, e := range errs {
		rec := make([]string, 0, len(header))
		for _, k := range cols {
			v, ok := e.Row[k]
			if !ok {
				rec = append(rec, "")
				continue
			}
			rec = append(rec, cellText(v))
		}
		rec = append(rec, csvCell(e.Message, false))
		if textRows {
			rec = append(rec, csvCell(e.RowText, false))
		}
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("--errors-out: %w", err)
	}
	if err := f.commit(); err != nil {
		return fmt.Errorf("--errors-out: %w", err)
	}
	return nil
}

// countingReader reports the bytes read from r. It is
// an io.ReadSeeker, so the SDK can still rewind the body for a retry.
type countingReader struct {
	r    io.ReadSeeker
	sent func(int64)
	n    int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.sent(c.n)
	return n, err
}

func (c *countingReader) Seek(off int64, whence int) (int64, error) {
	pos, err := c.r.Seek(off, whence)
	if err == nil {
		c.n = pos
		c.sent(pos)
	}
	return pos, err
}
