package main

import (
	"bufio"
	"context"
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

// exportReport writes every row of a report, read through a consistent
// view, to w in format, columns in the report's order. progress is called
// with the rows written so far. It returns the number of rows.
func exportReport(ctx context.Context, c *partner.Client, id int64, format string, w io.Writer, progress func(int64)) (int64, error) {
	opts := reports.ExportOptions{Progress: progress}
	switch format {
	case formatCSV:
		return c.Reports.ExportCSV(ctx, id, w, opts)
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
	if err := sw.Flush(); err != nil {
		return n, err
	}
	return n, f.Write(w)
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
