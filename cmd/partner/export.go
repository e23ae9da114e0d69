package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/xuri/excelize/v2"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/reports"
)

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
