package main

import (
	"archive/zip"
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/xuri/excelize/v2"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/reports"
)

// exportFlags are the flags of reports export.
type exportFlags struct {
	format, out           string
	force, rawCSV, resume bool
}

func (a *app) reportsExportCmd() *cobra.Command {
	var fl exportFlags
	cmd := &cobra.Command{
		Use:   "export REPORT_ID",
		Short: "Export every row of a report, read through a consistent view",
		Long: `Export prepares a view of the report (a consistent snapshot), waits for it
and writes every row in the report's column order: CSV with a header row,
JSON lines (one object per row) or an XLSX workbook. A report without rows
gives the header alone (CSV, XLSX), from the report's metadata.

Without -o the rows go to stdout (control characters escaped when it is a
terminal). With -o they are written to a temporary file beside FILE that
takes the name FILE once the export succeeded, so a failed export leaves
no partial file under that name. An existing FILE (a symbolic link
included, which is never followed) is replaced only with --force; -o is
checked before anything is sent.

In CSV, a cell that starts with =, +, -, @, a tab or a carriage return is
written with a single quote before it ('=1+2), as OWASP advises against
CSV injection: a spreadsheet shows it as text instead of running it as a
formula. Negative numbers (-5) get the quote too, since a formula can
start like one. --raw-csv writes every cell as the service sent it, for
programs that read the file. JSON lines are written as they are, and XLSX
cells hold text as text. An XLSX workbook is not written to a terminal:
give -o or redirect stdout. A progress bar (rows, rate, time left) goes to
stderr when stderr is a terminal.

An export of CSV or JSON lines to -o FILE that stops (Ctrl-C, a failed
request) keeps the rows written so far in .FILE.partial and where it stands
in .FILE.checkpoint, beside FILE, and says so: --resume goes on from there,
reading the same view, and writes the rows not written yet. Give the
command the same way (report, format, --raw-csv): --resume refuses a
checkpoint of another export, of another report's view, one that does not
match the partial file's length and SHA-256, or one whose position in the
view is not where the partial file's rows end, and neither file is ever
followed through a symbolic link. Once the export completes, .FILE.partial
becomes FILE and the checkpoint is removed. A view lasts about a day; an
export without --resume starts over.`,
		Example: `  partnerctl reports export 104 -o deals.csv
  partnerctl reports export 104 --format jsonl | head
  partnerctl reports export 104 --format xlsx -o deals.xlsx
  partnerctl reports export 104 -o deals.csv --resume`,
		Args: exactArgs("REPORT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID("REPORT_ID", args[0])
			if err != nil {
				return err
			}
			format := strings.ToLower(fl.format)
			fromExt := false
			if format == "" && fl.out != "" {
				format = formatOfExt(fl.out)
				fromExt = format != ""
			}
			switch format {
			case "":
				format = formatCSV
			case formatCSV, formatJSONL, formatXLSX:
			default:
				if fromExt {
					return usagef("-o %s: the extension %q is not csv, jsonl or xlsx: give --format", fl.out, filepath.Ext(fl.out))
				}
				return usagef("--format must be csv, jsonl or xlsx, not %q", format)
			}
			if fl.rawCSV && format != formatCSV {
				return usagef("--raw-csv is for --format csv")
			}
			if err := checkOutputPath("-o", fl.out, fl.force); err != nil {
				return err
			}
			if fl.resume && (fl.out == "" || !resumable(format)) {
				return usagef("--resume goes on with an export of CSV or JSON lines to a file (-o FILE)")
			}
			if format == formatXLSX && fl.out == "" && a.isTerminal(cmd.OutOrStdout()) {
				return usagef("an XLSX workbook is binary: give -o FILE or redirect stdout, not a terminal")
			}
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				n, err := a.export(ctx, cmd, c, id, format, fl)
				if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("report %d", id)) {
					// The SDK's errors name the report; the others say which.
					err = fmt.Errorf("export of report %d: %w", id, err)
				}
				if err != nil {
					return err
				}
				if fl.out != "" {
					printf(cmd.ErrOrStderr(), "exported %s rows of report %d to %s\n", groupDigits(n), id, fl.out)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&fl.format, "format", "", "csv, jsonl or xlsx (default: from -o's extension, else csv)")
	cmd.Flags().StringVarP(&fl.out, "output", "o", "", "write to `FILE` instead of stdout")
	cmd.Flags().BoolVar(&fl.force, "force", false, "replace FILE when it exists")
	cmd.Flags().BoolVar(&fl.resume, "resume", false, "go on with the stopped export to -o FILE")
	cmd.Flags().BoolVar(&fl.rawCSV, "raw-csv", false, "write CSV cells as they are, without the quote before =, +, -, @ (for programs, not spreadsheets)")
	cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{formatCSV, formatJSONL, formatXLSX}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// export runs the export to stdout, or to the output file out.
func (a *app) export(ctx context.Context, cmd *cobra.Command, c *partner.Client, id int64, format string, fl exportFlags) (n int64, err error) {
	bar := a.newProgress(cmd.ErrOrStderr(), fmt.Sprintf("report %d", id), 0, false)
	defer func() { bar.Done(err) }()
	if fl.out == "" {
		w := cmd.OutOrStdout()
		if format == formatXLSX || !a.isTerminal(w) {
			return exportReport(ctx, c, id, format, fl.rawCSV, w, bar, reports.ExportOptions{})
		}
		// Rows shown on a terminal are text for a person.
		tw := &termWriter{w: w}
		n, err = exportReport(ctx, c, id, format, fl.rawCSV, tw, bar, reports.ExportOptions{})
		return n, errors.Join(err, tw.flush())
	}
	if resumable(format) {
		return exportResumable(ctx, c, id, format, fl, bar)
	}
	f, err := createOutput("-o", fl.out, fl.force)
	if err != nil {
		return 0, err
	}
	defer f.abort()
	if n, err = exportReport(ctx, c, id, format, fl.rawCSV, f, bar, reports.ExportOptions{}); err != nil {
		return n, err
	}
	return n, f.commit()
}

// exportResumable runs an export of CSV or JSON lines to the partial file
// of fl.out (openExportFile), keeping its checkpoints; the partial file
// takes the name fl.out once the export completes, as an output file does
// (outputFile.commit). An export that stops after some rows keeps both
// files and says how to go on. n counts the rows a resumed export wrote
// before too.
func exportResumable(ctx context.Context, c *partner.Client, id int64, format string, fl exportFlags, bar exportProgress) (int64, error) {
	ef, err := openExportFile(fl.out, id, format, fl.rawCSV, fl.resume)
	if _, ok := errors.AsType[usageError](err); ok {
		return 0, err
	}
	if err != nil {
		return 0, fmt.Errorf("-o: cannot write %s: %w", fl.out, err)
	}
	from := ef.from()
	if from != nil {
		// The view must be one of this report's: a checkpoint naming
		// another report's view would append that report's rows. Its
		// row count is the progress bar's total.
		md, err := c.Reports.ViewMetadata(ctx, from.ViewID)
		switch {
		case partner.IsNotFound(err):
			err = fmt.Errorf("--resume: view %d is gone (a view lasts about a day): %s: %w", from.ViewID, startOver, err)
		case err == nil && md.ReportID != 0 && md.ReportID != id:
			err = usagef("--resume: the checkpoint in %s names view %d, of report %d, not %d: %s", ef.checkpoint, from.ViewID, md.ReportID, id, startOver)
		}
		if err != nil {
			ef.f.Close()
			return 0, err
		}
		bar.Resume(from.Rows, md.RowCount)
	}
	if err := ef.start(); err != nil {
		ef.f.Close()
		return 0, fmt.Errorf("-o: cannot write %s: %w", ef.partial, err)
	}
	n, err := exportReport(ctx, c, id, format, fl.rawCSV, ef, bar, reports.ExportOptions{From: from, Checkpoint: ef.save})
	if from != nil {
		n += from.Rows
	}
	if err != nil {
		if !ef.saved {
			ef.discard()
			return n, err
		}
		ef.f.Close()
		return n, fmt.Errorf("%w; %s kept in %s: go on with: %s", err, plural(ef.state.Checkpoint.Rows, "row"), ef.partial, resumeCommand(id, format, fl))
	}
	if err := placeOutput("-o", ef.f, fl.out, fl.force); err != nil {
		ef.discard()
		return n, err
	}
	os.Remove(ef.checkpoint)
	return n, nil
}

// formatOfExt is the format the extension of the file out names (csv,
// jsonl for .json and .ndjson too, xlsx, or another), "" for none.
func formatOfExt(out string) string {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(out)), ".")
	if format == "json" || format == "ndjson" {
		format = formatJSONL
	}
	return format
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
	// Resume says the export goes on after done rows, of total (0:
	// unknown): the rate counts this run's rows only.
	Resume(done, total int64)
}

// exportReport writes every row of a report, read through a consistent
// view, to w in format, columns in the report's order, and returns the
// number of rows written. opts may hold the checkpoint to go on from and
// the function told each new one, once the rows before it are written.
func exportReport(ctx context.Context, c *partner.Client, id int64, format string, rawCSV bool, w io.Writer, progress exportProgress, opts reports.ExportOptions) (int64, error) {
	opts.Progress = progress.Set
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
		return exportCSV(ctx, c, id, w, opts, rawCSV)
	case formatJSONL:
		bw := bufio.NewWriter(w)
		if tell := opts.Checkpoint; tell != nil {
			opts.Checkpoint = func(cp reports.Checkpoint) {
				if bw.Flush() == nil {
					tell(cp)
				}
			}
		}
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

// exportCSV writes the rows as CSV, a header row first (from the first
// row, or from the report's metadata when there is none), each cell
// through csvCell. An export from a checkpoint (opts.From) goes on with a
// file that has its header; opts.Checkpoint is told each checkpoint once
// the rows before it are written to w.
func exportCSV(ctx context.Context, c *partner.Client, id int64, w io.Writer, opts reports.ExportOptions, raw bool) (int64, error) {
	cw := csv.NewWriter(w)
	var header, record []string
	var n int64
	if tell := opts.Checkpoint; tell != nil {
		opts.Checkpoint = func(cp reports.Checkpoint) {
			if cw.Flush(); cw.Error() == nil {
				tell(cp)
			}
		}
	}
	for row, err := range c.Reports.Export(ctx, id, opts) {
		if err != nil {
			return n, err
		}
		if header == nil {
			header = row.Columns()
			record = make([]string, len(header))
			for i, name := range header {
				record[i] = csvCell(name, raw)
			}
			if opts.From == nil {
				cw.Write(record)
			}
		}
		for i, name := range header {
			record[i] = csvCell(row.Text(name), raw)
		}
		if err := cw.Write(record); err != nil {
			return n, err
		}
		n++
	}
	if header == nil && opts.From == nil {
		// A report without rows has no row to take the header from:
		// write the columns its metadata lists, if it lists them.
		cols := metadataColumns(ctx, c, id)
		for i := range cols {
			cols[i] = csvCell(cols[i], raw)
		}
		if cols != nil {
			cw.Write(cols)
		}
	}
	cw.Flush()
	return n, cw.Error()
}

// csvCell returns a CSV cell as a spreadsheet shows it as text, following
// OWASP's advice against CSV injection: a value starting with =, +, -, @,
// a tab or a carriage return gets a single quote before it, negative
// numbers included (a formula can start like one). raw keeps the value.
func csvCell(s string, raw bool) string {
	if !raw && s != "" && strings.IndexByte("=+-@\t\r", s[0]) >= 0 {
		return "'" + s
	}
	return s
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
	ref := "A1"
	if len(cols) > 0 {
		var err error
		if ref, err = excelize.CoordinatesToCellName(len(cols), int(n)+1); err != nil {
			return n, err
		}
		ref = "A1:" + ref
	}
	return n, writeWorkbook(f, ref, w)
}

// dimensionElem is the <dimension> element of a sheet's XML.
var dimensionElem = regexp.MustCompile(`<dimension ref="[^"]*"\s*(/>|></dimension>)`)

// writeWorkbook writes f to w, with the first sheet's used range
// (<dimension ref>) set to ref. The stream writer writes the dimension
// before the rows, as "A1", and streaming readers trust it: the workbook
// goes through a temporary file, and the sheet's entry is copied with the
// real range, the other entries as they are.
func writeWorkbook(f *excelize.File, ref string, w io.Writer) error {
	tmp, err := os.CreateTemp("", "partner-export-*.xlsx")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := f.Write(tmp); err != nil {
		return err
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(tmp, size)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(w)
	for _, e := range zr.File {
		if e.Name != "xl/worksheets/sheet1.xml" {
			if err := zw.Copy(e); err != nil {
				return err
			}
			continue
		}
		dst, err := zw.CreateHeader(&zip.FileHeader{Name: e.Name, Method: zip.Deflate, Modified: e.Modified})
		if err != nil {
			return err
		}
		src, err := e.Open()
		if err != nil {
			return err
		}
		br := bufio.NewReaderSize(src, 32<<10)
		head, _ := br.Peek(16 << 10) // the element comes before the rows, after the namespaces (some 5 kB)
		if loc := dimensionElem.FindIndex(head); loc != nil {
			dst.Write(head[:loc[0]])
			fmt.Fprintf(dst, `<dimension ref="%s"/>`, ref)
			br.Discard(loc[1])
		}
		_, err = io.Copy(dst, br)
		src.Close()
		if err != nil {
			return err
		}
	}
	return zw.Close()
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
