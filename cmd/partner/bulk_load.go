package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
as CSV: id, message, then the row's columns (in the loaded CSV file's order).

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
	spec := loadSpec{path: path, integration: fl.integration, format: format, opportunities: fl.opportunities}
	size := int64(0)
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	bar := a.newProgress("upload "+filepath.Base(path), size, true)
	ack, err := startLoad(ctx, c, spec, bar.Set)
	bar.Done()
	if err != nil {
		return fmt.Errorf("load of %s into integration %s: %w", path, fl.integration, err)
	}
	out := a.stdout
	fmt.Fprintf(out, "execution %s started (integration %s)\n", ack.ExecutionID, ack.IntegrationID)
	if !fl.wait {
		return nil
	}
	maxErrors := -1
	if fl.errorsOut != "" {
		maxErrors = fl.maxErrors
	}
	ex, err := followLoad(ctx, c, ack, maxErrors, func(ex *bulk.Execution) {
		fmt.Fprintf(out, "execution %s: %s\n", ex.ExecutionID, ex.Status)
	})
	if err != nil {
		return fmt.Errorf("following execution %s: %w", ack.ExecutionID, err)
	}
	fmt.Fprintf(out, "%s: %s records, %s succeeded, %s failed, %s skipped\n", ex.Status,
		groupDigits(ex.InputCount), groupDigits(ex.SuccessCount), groupDigits(ex.ErrorCount), groupDigits(ex.SkipCount))
	if fl.errorsOut != "" {
		var order []string
		if format == bulk.CSV {
			order = csvHeader(path)
		}
		if err := writeRowErrors(fl.errorsOut, ex.Errors, order); err != nil {
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
