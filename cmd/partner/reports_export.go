package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/xuri/excelize/v2"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/reports"
)

func (a *app) reportsExportCmd() *cobra.Command {
	var format, out string
	cmd := &cobra.Command{
		Use:   "export REPORT_ID",
		Short: "Export every row of a report, read through a consistent view",
		Long: `Export prepares a view of the report (a consistent snapshot), waits for it
and writes every row in the report's column order: CSV with a header row,
JSON lines (one object per row) or an XLSX workbook. A report without rows
gives the header alone (CSV, XLSX), from the report's metadata.

Without -o the rows go to stdout. With -o they are written to a temporary
file beside FILE that is renamed to FILE once the export succeeded, so a
failed export leaves no partial file under that name. A progress line
(rows, rate) goes to stderr when stderr is a terminal.`,
		Example: `  partner reports export 104 -o deals.csv
  partner reports export 104 --format jsonl | head
  partner reports export 104 --format xlsx -o deals.xlsx`,
		Args: exactArgs("REPORT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID("REPORT_ID", args[0])
			if err != nil {
				return err
			}
			format = strings.ToLower(format)
			if format == "" && out != "" {
				format = strings.TrimPrefix(strings.ToLower(filepath.Ext(out)), ".")
				if format == "json" || format == "ndjson" {
					format = formatJSONL
				}
			}
			switch format {
			case "":
				format = formatCSV
			case formatCSV, formatJSONL, formatXLSX:
			default:
				return usagef("--format must be csv, jsonl or xlsx, not %q", format)
			}
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				n, err := a.export(ctx, cmd, c, id, format, out)
				if err != nil {
					return fmt.Errorf("export of report %d failed: %w", id, err)
				}
				if out != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "exported %s rows of report %d to %s\n", groupDigits(n), id, out)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "csv, jsonl or xlsx (default: from -o's extension, else csv)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to `FILE` instead of stdout")
	cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{formatCSV, formatJSONL, formatXLSX}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// export runs the export to stdout, or to a temporary file renamed to out.
func (a *app) export(ctx context.Context, cmd *cobra.Command, c *partner.Client, id int64, format, out string) (int64, error) {
	bar := a.newProgress(cmd.ErrOrStderr(), fmt.Sprintf("report %d", id), 0, false)
	defer bar.Done()
	if out == "" {
		return exportReport(ctx, c, id, format, cmd.OutOrStdout(), bar)
	}
	tmp, err := createPartial(out)
	if err != nil {
		// Name the file the operator asked for, not the temporary one.
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return 0, fmt.Errorf("cannot write %s: %w", out, err)
	}
	// A new file has the mode the umask gives; one that replaces a file
	// takes that file's mode.
	var mode os.FileMode
	if fi, err := os.Stat(out); err == nil {
		mode = fi.Mode().Perm()
	}
	committed := false
	defer func() {
		if !committed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	n, err := exportReport(ctx, c, id, format, tmp, bar)
	if err != nil {
		return n, err
	}
	if mode != 0 {
		if err := tmp.Chmod(mode); err != nil {
			return n, err
		}
	}
	if err := tmp.Close(); err != nil {
		return n, err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return n, err
	}
	committed = true
	return n, nil
}

// createPartial creates an empty temporary file beside out, named
// .BASE.NNN.partial, with the mode 0666 less the umask, as the file out
// would get (os.CreateTemp would make it 0600 whatever the umask).
func createPartial(out string) (*os.File, error) {
	dir, base := filepath.Split(out)
	for {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(uint64(rand.Uint32()), 10)+".partial")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
}

// Export formats.
const (
	formatCSV   = "csv"
	formatJSONL = "jsonl"
	formatXLSX  = "xlsx"
)

// exportProgress hears how an export goes: the row count of the view once
// it is ready (when the service says), then the rows written so far.
type exportProgress interface {
	enabled() bool
	SetTotal(rows int64)
	Set(rows int64)
}

// exportReport writes every row of a report, read through a consistent
// view, to w in format, columns in the report's order, and returns the
// number of rows.
func exportReport(ctx context.Context, c *partner.Client, id int64, format string, w io.Writer, progress exportProgress) (int64, error) {
	opts := reports.ExportOptions{Progress: progress.Set}
	if progress.enabled() {
		// The view's metadata may tell how many rows are coming; only
		// worth a request when a bar shows it.
		opts.Wait.Progress = func(st *reports.ViewStatus) {
			if st.Status != reports.ViewSuccess {
				return
			}
			if md, err := c.Reports.ViewMetadata(ctx, st.ViewID); err == nil && md.RowCount > 0 {
				progress.SetTotal(md.RowCount)
			}
		}
	}
	switch format {
	case formatCSV:
		n, err := c.Reports.ExportCSV(ctx, id, w, opts)
		if err == nil && n == 0 {
			// A report without rows has no row to take the header from:
			// write the columns its metadata lists, if it lists them.
			if cols := metadataColumns(ctx, c, id); cols != nil {
				cw := csv.NewWriter(w)
				cw.Write(cols)
				cw.Flush()
				err = cw.Error()
			}
		}
		return n, err
	case formatJSONL:
		bw := bufio.NewWriter(w)
		var n int64
		for row, err := range c.Reports.Export(ctx, id, opts) {
			if err != nil {
				return n, err
			}
			b, err := json.Marshal(row)
			if err != nil {
				return n, err
			}
			bw.Write(b)
			if err := bw.WriteByte('\n'); err != nil {
				return n, err
			}
			n++
		}
		return n, bw.Flush()
	case formatXLSX:
		return exportXLSX(ctx, c, id, w, opts)
	}
	return 0, fmt.Errorf("unknown format %q", format)
}

// exportXLSX writes the rows to the first sheet of a workbook, a header
// row first, streaming them into the sheet.
func exportXLSX(ctx context.Context, c *partner.Client, id int64, w io.Writer, opts reports.ExportOptions) (int64, error) {
	f := excelize.NewFile()
	defer f.Close()
	sheet := f.GetSheetName(0)
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return 0, err
	}
	var n int64
	var cols []string
	for row, err := range c.Reports.Export(ctx, id, opts) {
		if err != nil {
			return n, err
		}
		if cols == nil {
			cols = row.Columns()
			header := make([]any, len(cols))
			for i, name := range cols {
				header[i] = name
			}
			if err := sw.SetRow("A1", header); err != nil {
				return n, err
			}
		}
		cells := make([]any, len(cols))
		for i, name := range cols {
			v, _ := row.Get(name)
			cells[i] = cellValue(v)
		}
		cell, err := excelize.CoordinatesToCellName(1, int(n)+2)
		if err != nil {
			return n, err
		}
		if err := sw.SetRow(cell, cells); err != nil {
			return n, err
		}
		n++
	}
	if cols == nil {
		if cols = metadataColumns(ctx, c, id); cols != nil {
			header := make([]any, len(cols))
			for i, name := range cols {
				header[i] = name
			}
			if err := sw.SetRow("A1", header); err != nil {
				return n, err
			}
		}
	}
	if err := sw.Flush(); err != nil {
		return n, err
	}
	return n, f.Write(w)
}

// metadataColumns returns the column names of a report from its metadata
// (POST /report/v1/{id}/metadata), or nil when the answer does not list
// them: the header of an export without rows.
func metadataColumns(ctx context.Context, c *partner.Client, id int64) []string {
	md, err := c.Reports.Metadata(ctx, id)
	if err != nil {
		return nil
	}
	cols, err := md.Columns()
	if err != nil || len(cols) == 0 {
		return nil
	}
	names := make([]string, len(cols))
	for i, col := range cols {
		names[i] = col.Name
		if names[i] == "" {
			names[i] = col.ID
		}
	}
	return names
}

// cellValue turns a row value into a spreadsheet cell: numbers stay
// numbers, nested values become their JSON text.
func cellValue(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			return f
		}
		return string(x)
	case string, bool:
		return x
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}
