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
	integration, format, errorsOut string
	opportunities, wait, failOnErr bool
	force                          bool
	maxErrors                      int
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
that they load again unchanged. 'partnerctl events integrations' lists the integrations to load.

FILE and --errors-out are checked before anything is sent.

A load is sent again only when the service certainly did not take it (a
429, a connection refused): when its answer is lost (a dropped connection,
a 5xx, an answer cut short), it is not repeated and the exit status is 3.

Exit status: 0 once the load was accepted (with --wait: once the execution
completed); 1 when it could not be started or followed, when it ended in a
state other than completed, when every record failed, or, with
--fail-on-errors, when any failed; 2 for a usage error (FILE a directory,
for one); 3 when the service may have started the load without saying so:
read the integration's data before loading again.`,
		Example: `  partnerctl bulk load deals.csv --integration int-crm --wait
  partnerctl bulk load deals.xlsx --integration int-crm --opportunities --wait --errors-out failed.csv --fail-on-errors`,
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
			if fl.maxErrors < 0 {
				return usagef("--max-errors must not be negative")
			}
			if fl.errorsOut != "" || fl.failOnErr {
				fl.wait = true
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
	f.BoolVar(&fl.wait, "wait", false, "follow the execution until it completes")
	f.StringVar(&fl.errorsOut, "errors-out", "", "write the failed rows as CSV to `FILE` (implies --wait)")
	f.BoolVar(&fl.force, "force", false, "replace the --errors-out file when it exists")
	f.BoolVar(&fl.failOnErr, "fail-on-errors", false, "exit 1 when rows failed (implies --wait)")
	f.IntVar(&fl.maxErrors, "max-errors", 1000, "failed rows to fetch for --errors-out")
	cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"csv", "json", "xlsx"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (a *app) bulkLoad(ctx context.Context, cmd *cobra.Command, c *partner.Client, path string, format bulk.Format, fl bulkLoadFlags) error {
	spec := loadSpec{path: path, integration: fl.integration, format: format, opportunities: fl.opportunities}
	size := int64(0)
	if fi, err := os.Stat(path); err == nil {
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
	out := cmd.OutOrStdout()
	printf(out, "execution %s started (integration %s)\n", ack.ExecutionID, ack.IntegrationID)
	if !fl.wait {
		return nil
	}
	maxErrors := -1
	if fl.errorsOut != "" {
		maxErrors = fl.maxErrors
	}
	ex, err := followLoad(ctx, c, ack, maxErrors, func(ex *bulk.Execution) {
		printf(out, "execution %s: %s\n", ex.ExecutionID, ex.Status)
	})
	if err != nil {
		return fmt.Errorf("following execution %s: %w", ack.ExecutionID, err)
	}
	printf(out, "%s: %s records, %s succeeded, %s failed, %s skipped\n", ex.Status,
		groupDigits(ex.InputCount), groupDigits(ex.SuccessCount), groupDigits(ex.ErrorCount), groupDigits(ex.SkipCount))
	if fl.errorsOut != "" {
		var order []string
		if format == bulk.CSV {
			order = csvHeader(path)
		}
		switch {
		case len(ex.Errors) == 0 && ex.ErrorCount == 0:
			printf(out, "no row failed: %s not written\n", fl.errorsOut)
		case len(ex.Errors) == 0:
			printf(out, "the service returned none of the %d failed rows: %s not written\n", ex.ErrorCount, fl.errorsOut)
		default:
			if err := writeRowErrors(fl.errorsOut, fl.force, ex.Errors, order); err != nil {
				return err
			}
			note := ""
			if int64(len(ex.Errors)) < ex.ErrorCount {
				note = fmt.Sprintf(" (the service returned %d of %d)", len(ex.Errors), ex.ErrorCount)
			}
			printf(out, "failed rows written to %s%s\n", fl.errorsOut, note)
		}
	}
	switch {
	case ex.Status != bulk.Completed:
		msg := ""
		if ex.StatusMsg != "" {
			msg = ": " + ex.StatusMsg
		}
		return fmt.Errorf("execution %s ended %s%s", ex.ExecutionID, ex.Status, msg)
	case ex.ErrorCount > 0 && ex.SuccessCount == 0 && ex.SkipCount == 0:
		return fmt.Errorf("execution %s: no record succeeded: all %d failed", ex.ExecutionID, ex.ErrorCount)
	case fl.failOnErr && ex.ErrorCount > 0:
		return fmt.Errorf("execution %s: %d rows failed", ex.ExecutionID, ex.ErrorCount)
	}
	return nil
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
// each state it reads in turn. With maxErrors >= 0 the final status
// carries up to that many failed rows.
func followLoad(ctx context.Context, c *partner.Client, ack *bulk.Ack, maxErrors int, onState func(*bulk.Execution)) (*bulk.Execution, error) {
	var opts bulk.WaitOptions
	if maxErrors >= 0 {
		opts.Status = bulk.StatusParams{IncludeErrors: partner.Ptr(true), MaxErrors: partner.Ptr(maxErrors)}
	}
	var last bulk.State
	opts.Progress = func(ex *bulk.Execution) {
		if ex.Status != last {
			last = ex.Status
			onState(ex)
		}
	}
	return c.Bulk.WaitExecution(ctx, ack, opts)
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
			rec = append(rec, text(v))
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
