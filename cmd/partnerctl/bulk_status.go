package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
)

// reasonsShown is how many failed rows a load or status without
// --errors-out prints.
const reasonsShown = 3

// bulkStatusFlags are the flags of bulk status.
type bulkStatusFlags struct {
	integration string
	followFlags
}

func (a *app) bulkStatusCmd() *cobra.Command {
	var fl bulkStatusFlags
	cmd := &cobra.Command{
		Use:   "status EXECUTION --integration ID",
		Short: "Show, or follow, the execution of a bulk load",
		Long: `status reads the execution EXECUTION of a load into the integration and prints
its state and counts. With --wait it follows the execution until it completes,
as 'bulk load --wait' does: this is how to go on with a load whose wait was
interrupted (Ctrl-C, a timeout), which says this command.

With --errors-out (which implies --wait) the failed rows are written to FILE
as CSV that loads again, as 'bulk load --errors-out' writes them (columns in
name order, as the loaded file's order is not known here). Without it, the
first few reasons are printed.

With --json, the states and reasons go to stderr and the execution is
printed on stdout as` + executionJSONHelp + `

Exit status: 0 when the execution was read (with --wait: once it completed)
and refused no record; 1 when it could not be read; 5 when it was read and
ended in a state other than completed, or when records were refused (with
--allow-partial: when every record was refused); 2 for a usage error; 4 when
the credentials were refused; 130 when Ctrl-C ended the wait (the execution
goes on).`,
		Example: `  partnerctl bulk status exe_01 --integration int-crm
  partnerctl bulk status exe_01 --integration int-crm --wait --errors-out failed.csv`,
		Args: exactArgs("EXECUTION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if fl.integration == "" {
				return usagef("--integration is required")
			}
			if err := fl.check(); err != nil {
				return err
			}
			if err := checkOutputPath("--errors-out", fl.errorsOut, fl.force); err != nil {
				return err
			}
			ack := &bulk.Ack{IntegrationID: fl.integration, ExecutionID: args[0]}
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				return followExecution(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), c, ack, fl.followFlags)
			})
		},
	}
	cmd.Flags().StringVar(&fl.integration, "integration", "", "integration `ID` the load went to (required)")
	fl.addFlags(cmd)
	return cmd
}

// followFlags say how to follow an execution.
type followFlags struct {
	wait      bool     // until it completes; else one status read
	errorsOut string   // file for the failed rows, or ""
	force     bool     // errorsOut may replace a file
	maxErrors int      // failed rows to fetch for errorsOut
	partialOK bool     // refused rows are a failure only when none succeeded
	failOnErr bool     // --fail-on-errors, deprecated: refused rows are a failure by default
	asJSON    bool     // print the execution as JSON on stdout
	order     []string // the loaded CSV file's columns, for errorsOut and the reasons
}

// addFlags adds the flags that set fl to cmd.
func (fl *followFlags) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&fl.wait, "wait", false, "follow the execution until it completes")
	f.StringVar(&fl.errorsOut, "errors-out", "", "write the failed rows as CSV to `FILE` (implies --wait)")
	f.BoolVar(&fl.force, "force", false, "replace the --errors-out file when it exists")
	f.BoolVar(&fl.partialOK, "allow-partial", false, "exit 0 when some records were refused and others loaded (without it: exit 5 when any was refused)")
	f.BoolVar(&fl.failOnErr, "fail-on-errors", false, "exit 5 when rows failed (implies --wait)")
	f.MarkDeprecated("fail-on-errors", "exit status 5 for refused records is the default; --allow-partial accepts partial refusals")
	f.BoolVar(&fl.asJSON, "json", false, "print the execution as JSON for scripts (messages go to stderr)")
	f.IntVar(&fl.maxErrors, "max-errors", 1000, "failed rows to fetch for --errors-out")
}

// check checks the flags' values and sets wait when --errors-out or
// --fail-on-errors implies it.
func (fl *followFlags) check() error {
	if fl.maxErrors < 0 {
		return usagef("--max-errors must not be negative")
	}
	if fl.partialOK && fl.failOnErr {
		return usagef("give --allow-partial or --fail-on-errors, not both")
	}
	fl.wait = fl.wait || fl.errorsOut != "" || fl.failOnErr
	return nil
}

// statusParams are the status reads' parameters: the failed rows are
// always asked for, all of them (up to maxErrors) for errorsOut, else the
// few printed.
func (fl followFlags) statusParams() bulk.StatusParams {
	n := reasonsShown
	if fl.errorsOut != "" {
		n = fl.maxErrors
	}
	return bulk.StatusParams{IncludeErrors: new(true), MaxErrors: new(n)}
}

// goOn is the command line that goes on following the execution.
func (fl followFlags) goOn(ack *bulk.Ack) string {
	args := []string{"partnerctl", "bulk", "status", shellQuote(ack.ExecutionID), "--integration", shellQuote(ack.IntegrationID), "--wait"}
	if fl.errorsOut != "" {
		args = append(args, "--errors-out", shellQuote(fl.errorsOut))
	}
	if fl.force {
		args = append(args, "--force")
	}
	if fl.partialOK {
		args = append(args, "--allow-partial")
	}
	if fl.asJSON {
		args = append(args, "--json")
	}
	return strings.Join(args, " ")
}

// followExecution reads (fl.wait: follows) the execution of ack, prints
// its states and counts, writes or prints its failed rows, and returns
// the failure the exit status reports. With fl.asJSON, what it prints
// goes to msgs and the execution to out as JSON.
func followExecution(ctx context.Context, out, msgs io.Writer, c *partner.Client, ack *bulk.Ack, fl followFlags) error {
	data := out
	if fl.asJSON {
		out = msgs
	}
	onState := func(ex *bulk.Execution) { printf(out, "execution %s: %s\n", ex.ExecutionID, ex.Status) }
	var ex *bulk.Execution
	var err error
	if fl.wait {
		ex, err = followLoad(ctx, c, ack, fl.statusParams(), onState)
	} else if ex, err = c.Bulk.Status(ctx, ack.IntegrationID, ack.ExecutionID, fl.statusParams()); err == nil {
		onState(ex)
	}
	var failed *bulk.ExecutionError
	switch {
	case errors.As(err, &failed):
		// The execution was followed to its end, which is a failure.
		if jerr := printExecutionJSON(data, failed.Execution, fl); jerr != nil {
			return jerr
		}
		return dataFailure{fmt.Errorf("following execution %s: %w", ack.ExecutionID, err)}
	case err != nil && fl.wait:
		return fmt.Errorf("following execution %s: %w; to go on: %s", ack.ExecutionID, err, fl.goOn(ack))
	case err != nil:
		return fmt.Errorf("reading execution %s: %w", ack.ExecutionID, err)
	case !ex.Done():
		printf(out, "%s records so far, %s succeeded, %s failed, %s skipped; follow it with: %s\n",
			groupDigits(ex.InputCount), groupDigits(ex.SuccessCount), groupDigits(ex.ErrorCount), groupDigits(ex.SkipCount), fl.goOn(ack))
		return printExecutionJSON(data, ex, fl)
	}
	printf(out, "%s: %s, %s succeeded, %s failed, %s skipped\n", ex.Status,
		plural(ex.InputCount, "record"), groupDigits(ex.SuccessCount), groupDigits(ex.ErrorCount), groupDigits(ex.SkipCount))
	if fl.errorsOut != "" {
		if err := writeFailedRows(out, ex, fl); err != nil {
			return err
		}
	} else {
		printReasons(out, ex, fl.order)
	}
	if err := printExecutionJSON(data, ex, fl); err != nil {
		return err
	}
	switch {
	case ex.StatusMsg != "":
		return dataFailedf("execution %s ended %s: %s", ex.ExecutionID, ex.Status, ex.StatusMsg)
	case ex.ErrorCount > 0 && ex.SuccessCount == 0 && ex.SkipCount == 0:
		return dataFailedf("execution %s: no record succeeded: all %d failed", ex.ExecutionID, ex.ErrorCount)
	case ex.ErrorCount > 0 && !fl.partialOK:
		return dataFailedf("execution %s: %s failed (--allow-partial accepts a load that refused some records)", ex.ExecutionID, plural(ex.ErrorCount, "row"))
	}
	return nil
}

// executionJSONHelp is the shape of an execution printed with --json.
const executionJSONHelp = `
  {"integration_id": "int-crm", "execution_id": "exe_01", "status": "completed",
   "status_message": "", "done": true, "input_count": 3, "success_count": 2,
   "error_count": 1, "skip_count": 0, "started_at": "2026-01-02T15:04:05Z",
   "completed_at": "2026-01-02T15:04:09Z",
   "errors": [{"id": "E-1", "message": "...", "row": {"column": "value"}}]}
"errors" holds the failed rows the service returned (a row it gave only as
text has "row_text" in place of "row"); the times are absent until known.`

// executionJSON is an execution as --json prints it (executionJSONHelp).
type executionJSON struct {
	IntegrationID string         `json:"integration_id"`
	ExecutionID   string         `json:"execution_id"`
	Status        string         `json:"status"`
	StatusMessage string         `json:"status_message"`
	Done          bool           `json:"done"`
	InputCount    int64          `json:"input_count"`
	SuccessCount  int64          `json:"success_count"`
	ErrorCount    int64          `json:"error_count"`
	SkipCount     int64          `json:"skip_count"`
	StartedAt     *time.Time     `json:"started_at,omitempty"`
	CompletedAt   *time.Time     `json:"completed_at,omitempty"`
	Errors        []rowErrorJSON `json:"errors"`
}

// rowErrorJSON is a failed row in executionJSON.
type rowErrorJSON struct {
	ID      string         `json:"id"`
	Message string         `json:"message"`
	Row     map[string]any `json:"row,omitempty"`
	RowText string         `json:"row_text,omitempty"`
}

// printExecutionJSON prints ex to w as executionJSON when fl asks for
// JSON.
func printExecutionJSON(w io.Writer, ex *bulk.Execution, fl followFlags) error {
	if !fl.asJSON {
		return nil
	}
	j := executionJSON{
		IntegrationID: ex.IntegrationID, ExecutionID: ex.ExecutionID, Status: string(ex.Status), StatusMessage: ex.StatusMsg,
		Done: ex.Done(), InputCount: ex.InputCount, SuccessCount: ex.SuccessCount, ErrorCount: ex.ErrorCount, SkipCount: ex.SkipCount,
		Errors: []rowErrorJSON{},
	}
	if !ex.StartedAt.IsZero() {
		j.StartedAt = &ex.StartedAt
	}
	if !ex.CompletedAt.IsZero() {
		j.CompletedAt = &ex.CompletedAt
	}
	for _, e := range ex.Errors {
		j.Errors = append(j.Errors, rowErrorJSON{ID: e.ID, Message: e.Message, Row: e.Row, RowText: e.RowText})
	}
	return writeJSON(w, j)
}

// writeFailedRows writes the failed rows of ex to fl.errorsOut, or says
// why it wrote none.
func writeFailedRows(out io.Writer, ex *bulk.Execution, fl followFlags) error {
	switch {
	case len(ex.Errors) == 0 && ex.ErrorCount == 0:
		printf(out, "no row failed: %s not written\n", fl.errorsOut)
	case len(ex.Errors) == 0:
		printf(out, "the service returned none of the %d failed rows: %s not written\n", ex.ErrorCount, fl.errorsOut)
	default:
		if err := writeRowErrors(fl.errorsOut, fl.force, ex.Errors, fl.order); err != nil {
			return err
		}
		note := ""
		if int64(len(ex.Errors)) < ex.ErrorCount {
			note = fmt.Sprintf(" (the service returned %d of %d)", len(ex.Errors), ex.ErrorCount)
		}
		printf(out, "failed rows written to %s%s\n", fl.errorsOut, note)
	}
	return nil
}

// printReasons prints the first failed rows the service returned (key,
// message, row, its columns in the order of order, the loaded file's
// header when known) and the flag that writes them all.
func printReasons(out io.Writer, ex *bulk.Execution, order []string) {
	if ex.ErrorCount == 0 {
		return
	}
	errs := ex.Errors[:min(len(ex.Errors), reasonsShown)]
	if len(errs) == 0 {
		printf(out, "the service gave no reason; --errors-out FILE asks for the failed rows\n")
		return
	}
	printf(out, "failed rows, %d of %d shown (--errors-out FILE writes them all as CSV):\n", len(errs), ex.ErrorCount)
	for _, e := range errs {
		key := e.ID
		if key == "" {
			key = "(none)"
		}
		printf(out, "  key %s: %s\n", key, e.Message)
		if row := rowText(e, order); row != "" {
			printf(out, "    row: %s\n", row)
		}
	}
}

// rowText is a failed row on one line, cut at 100 characters: its
// columns in the order of order (the loaded file's header), then the
// others in name order.
func rowText(e bulk.RowError, order []string) string {
	s := e.RowText
	if e.Row != nil {
		var cells []string
		for _, k := range columnOrder(slices.Collect(maps.Keys(e.Row)), order) {
			cells = append(cells, k+"="+cellText(e.Row[k]))
		}
		s = strings.Join(cells, ", ")
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 100 {
		s = string(r[:99]) + "…"
	}
	return s
}

// plural is n and noun, with an s when n is not 1.
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return groupDigits(n) + " " + noun + "s"
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isAdded says whether col is the column --errors-out adds for word:
// _error for the reason, _row for a row given as text, with more
// underscores when the data has such a column.
func isAdded(col, word string) bool {
	return strings.HasPrefix(col, "_") && strings.TrimLeft(col, "_") == word
}

// withoutReasonColumns returns a copy of the CSV file at path without the
// columns --errors-out added, so that reloading a fixed errors file sends
// the rows' own columns only: the last column when it is a reason column
// (_error), and a _row column after it. It returns the copy's path (a
// temporary file the caller removes) and the dropped columns' names, or
// no path and no names when there is nothing to drop.
func withoutReasonColumns(path string) (string, []string, error) {
	header := csvHeader(path)
	keep := len(header)
	if keep > 1 && isAdded(header[keep-1], "row") && isAdded(header[keep-2], "error") {
		keep -= 2
	} else if keep > 0 && isAdded(header[keep-1], "error") {
		keep--
	}
	if keep == len(header) || keep == 0 {
		return "", nil, nil
	}
	in, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer in.Close()
	tmp, err := os.CreateTemp("", "partnerctl-*-"+filepath.Base(path))
	if err != nil {
		return "", nil, err
	}
	r := csv.NewReader(in)
	r.FieldsPerRecord = -1
	w := csv.NewWriter(tmp)
	for first := true; ; first = false {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			return "", nil, err
		}
		if first && len(rec) > 0 {
			rec[0] = strings.TrimPrefix(rec[0], "\ufeff")
		}
		w.Write(rec[:min(len(rec), keep)])
	}
	w.Flush()
	if err := errors.Join(w.Error(), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return "", nil, err
	}
	return tmp.Name(), header[keep:], nil
}
