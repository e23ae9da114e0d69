package main

import (
	"context"
	"encoding/csv"
	"errors"
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
as CSV: id, message, then the row's columns.

Exit status: 0 once the load was accepted (with --wait: once the execution
completed); 1 when it could not be started or followed, when it ended in a
state other than completed, or, with --fail-on-errors, when rows failed.`,
		Example: `  partner bulk load deals.csv --integration int-crm --wait
  partner bulk load deals.xlsx --integration int-crm --opportunities --wait --errors-out failed.csv --fail-on-errors`,
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
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				return a.bulkLoad(ctx, c, args[0], format, fl)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.integration, "integration", "", "integration `ID` to load (required)")
	f.StringVar(&fl.format, "format", "", "csv, json or xlsx (default: from the file's extension)")
	f.BoolVar(&fl.opportunities, "opportunities", false, "load opportunities (POST /bulk/v1/bulkload_opportunity)")
	f.BoolVar(&fl.wait, "wait", false, "follow the execution until it completes")
	f.StringVar(&fl.errorsOut, "errors-out", "", "write the failed rows as CSV to `FILE` (implies --wait)")
	f.BoolVar(&fl.failOnErr, "fail-on-errors", false, "exit 1 when rows failed (implies --wait)")
	f.IntVar(&fl.maxErrors, "max-errors", 1000, "failed rows to fetch for --errors-out")
	cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"csv", "json", "xlsx"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (a *app) bulkLoad(ctx context.Context, c *partner.Client, path string, format bulk.Format, fl bulkLoadFlags) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return err
	}
	bar := a.newProgress("upload "+filepath.Base(path), info.Size(), true)
	body := &countingReader{r: file, bar: bar}
	var ack *bulk.Ack
	switch {
	case fl.opportunities && format == bulk.XLSX:
		ack, err = c.Bulk.LoadOpportunitiesAttachment(ctx, bulk.LoadOpportunitiesParams{IntegrationID: fl.integration, ContentType: format}, filepath.Base(path), body)
	case fl.opportunities:
		ack, err = c.Bulk.LoadOpportunities(ctx, bulk.LoadOpportunitiesParams{IntegrationID: fl.integration, ContentType: format}, body)
	case format == bulk.XLSX:
		ack, err = c.Bulk.LoadAttachment(ctx, bulk.LoadParams{IntegrationID: fl.integration, Format: format}, filepath.Base(path), body)
	default:
		ack, err = c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: fl.integration, Format: format}, body)
	}
	bar.Done()
	if err != nil {
		return fmt.Errorf("load of %s into integration %s: %w", path, fl.integration, err)
	}
	out := a.stdout
	fmt.Fprintf(out, "execution %s started (integration %s)\n", ack.ExecutionID, ack.IntegrationID)
	if !fl.wait {
		return nil
	}

	opts := bulk.WaitOptions{}
	if fl.errorsOut != "" {
		opts.Status = bulk.StatusParams{IncludeErrors: bulk.Bool(true), MaxErrors: bulk.Int(fl.maxErrors)}
	}
	var last bulk.State
	opts.Progress = func(ex *bulk.Execution) {
		if ex.Status != last {
			last = ex.Status
			fmt.Fprintf(out, "execution %s: %s\n", ex.ExecutionID, ex.Status)
		}
	}
	ex, err := c.Bulk.WaitExecution(ctx, ack.IntegrationID, ack.ExecutionID, opts)
	if err != nil {
		return fmt.Errorf("following execution %s: %w", ack.ExecutionID, err)
	}
	fmt.Fprintf(out, "%s: %d records, %d succeeded, %d failed, %d skipped\n",
		ex.Status, ex.InputCount, ex.SuccessCount, ex.ErrorCount, ex.SkipCount)
	if fl.errorsOut != "" {
		if err := writeRowErrors(fl.errorsOut, ex.Errors); err != nil {
			return fmt.Errorf("--errors-out: %w", err)
		}
		note := ""
		if int64(len(ex.Errors)) < ex.ErrorCount {
			note = fmt.Sprintf(" (the service returned %d of %d)", len(ex.Errors), ex.ErrorCount)
		}
		fmt.Fprintf(out, "failed rows written to %s%s\n", fl.errorsOut, note)
	}
	switch {
	case ex.Status != bulk.Completed:
		msg := ""
		if ex.StatusMsg != "" {
			msg = ": " + ex.StatusMsg
		}
		return fmt.Errorf("execution %s ended %s%s", ex.ExecutionID, ex.Status, msg)
	case fl.failOnErr && ex.ErrorCount > 0:
		return fmt.Errorf("execution %s: %d rows failed", ex.ExecutionID, ex.ErrorCount)
	}
	return nil
}

// writeRowErrors writes failed rows as CSV: id, message, then the union of
// the rows' columns in sorted order (a row given only as text goes in a
// column "row").
func writeRowErrors(path string, errs []bulk.RowError) error {
	var cols []string
	seen := map[string]bool{}
	text := false
	for _, e := range errs {
		for k := range e.Row {
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
		text = text || (e.Row == nil && e.RowText != "")
	}
	slices.Sort(cols)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	header := append([]string{"id", "message"}, cols...)
	if text {
		header = append(header, "row")
	}
	w.Write(header)
	for _, e := range errs {
		rec := []string{e.ID, e.Message}
		for _, k := range cols {
			v, ok := e.Row[k]
			if !ok {
				rec = append(rec, "")
				continue
			}
			rec = append(rec, cellText(v))
		}
		if text {
			rec = append(rec, e.RowText)
		}
		w.Write(rec)
	}
	w.Flush()
	return errors.Join(w.Error(), f.Close())
}

// cellText is a value as a CSV cell: strings as they are, others as JSON.
func cellText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return text(v)
}

// countingReader reports the bytes read from r to a progress bar. It is
// an io.ReadSeeker, so the SDK can still rewind the body for a retry.
type countingReader struct {
	r   io.ReadSeeker
	bar *progress
	n   int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.bar.Set(c.n)
	return n, err
}

func (c *countingReader) Seek(off int64, whence int) (int64, error) {
	pos, err := c.r.Seek(off, whence)
	if err == nil {
		c.n = pos
		c.bar.Set(pos)
	}
	return pos, err
}
