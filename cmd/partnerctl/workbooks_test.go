package main

import (
	"archive/zip"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/xuri/excelize/v2"
)

var updateFakeWorkbooks = flag.Bool("update-fake-workbooks", false, "rewrite the workbooks of fake/testdata with excelize")

// fakeWorkbooks are the workbooks in fake/testdata that the fake's tests
// load to check that the fake reads what a spreadsheet library writes.
// They are committed files so that the fake's test binary does not link
// excelize; this package links it anyway, since the command line writes
// workbooks with it. The fake's tests check the values of these rows.
var fakeWorkbooks = []struct {
	file  string
	write func() (*bytes.Buffer, error)
}{
	// Written cell by cell (SetSheetRow) by excelize's ordinary writer:
	// shared strings and numbers.
	{"excelize-rows.xlsx", func() (*bytes.Buffer, error) {
		return excelizeRows([][]any{
			{"sales_details.crm_opportunity_id", "name", "amount"},
			{"X-1", "From Excel", 1234},
			{"X-2", "Bad amount", "n/a"},
		})
	}},
	// The same writer, for the fake's attachment tests.
	{"excelize-attached.xlsx", func() (*bytes.Buffer, error) {
		return excelizeRows([][]any{
			{"sales_details.crm_opportunity_id", "name", "amount"},
			{"F-1", "From Excel", 1234},
			{"F-2", "Bad amount", "n/a"},
		})
	}},
	{"excelize-opportunity.xlsx", func() (*bytes.Buffer, error) {
		return excelizeRows([][]any{
			{"sales_details.crm_opportunity_id", "name", "amount"},
			{"F-5", "Opportunity from Excel", 99},
		})
	}},
	// Written by the stream writer, as the command line exports a report:
	// inline strings that need escaping, an integer, a decimal, a boolean
	// and an empty cell.
	{"excelize-stream.xlsx", func() (*bytes.Buffer, error) {
		return excelizeStream([][]any{
			{"sales_details.crm_opportunity_id", "name", "amount", "note"},
			{"S-1", "Streamed, \"quoted\" & <escaped>", int64(1234), true},
			{"S-2", "Décimal", 12.5, nil},
		})
	}},
}

func excelizeRows(rows [][]any) (*bytes.Buffer, error) {
	x := excelize.NewFile()
	defer x.Close()
	for i, row := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := x.SetSheetRow("Sheet1", cell, &row); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	err := x.Write(&buf)
	return &buf, err
}

func excelizeStream(rows [][]any) (*bytes.Buffer, error) {
	x := excelize.NewFile()
	defer x.Close()
	sw, err := x.NewStreamWriter(x.GetSheetName(0))
	if err != nil {
		return nil, err
	}
	for i, row := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := sw.SetRow(cell, row); err != nil {
			return nil, err
		}
	}
	if err := sw.Flush(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	err = x.Write(&buf)
	return &buf, err
}

// TestFakeWorkbooksWrittenByExcelize checks that each workbook of
// fake/testdata holds what excelize writes for its rows today: the same
// parts, in the same order, with the same uncompressed contents (the
// compressed bytes may differ between Go releases). With
// -update-fake-workbooks it rewrites them.
func TestFakeWorkbooksWrittenByExcelize(t *testing.T) {
	t.Parallel()
	for _, wb := range fakeWorkbooks {
		path := filepath.Join("..", "..", "fake", "testdata", wb.file)
		buf, err := wb.write()
		if err != nil {
			t.Fatalf("%s: %v", wb.file, err)
		}
		if *updateFakeWorkbooks {
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := zipParts(buf.Bytes())
		if err != nil {
			t.Fatalf("excelize wrote %s: %v", wb.file, err)
		}
		committed, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := zipParts(committed)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if d := diffParts(got, want); d != "" {
			t.Errorf("%s is not what excelize writes for its rows: %s; rewrite it with: "+
				"go test ./cmd/partnerctl -run TestFakeWorkbooksWrittenByExcelize -update-fake-workbooks", path, d)
		}
	}
}

// zipPart is one file of a ZIP archive, uncompressed.
type zipPart struct {
	name   string
	method uint16
	data   string
}

// zipParts returns the files of a ZIP archive in their order.
func zipParts(b []byte) ([]zipPart, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	parts := make([]zipPart, 0, len(zr.File))
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		parts = append(parts, zipPart{f.Name, f.Method, string(data)})
	}
	return parts, nil
}

// diffParts describes the first difference between the parts of two
// archives, or returns "" if they hold the same parts.
func diffParts(got, want []zipPart) string {
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		switch {
		case g.name != w.name:
			return fmt.Sprintf("part %d is %s, want %s", i+1, g.name, w.name)
		case g.method != w.method:
			return fmt.Sprintf("%s is compressed with method %d, want %d", g.name, g.method, w.method)
		case g.data != w.data:
			return fmt.Sprintf("%s holds %q, want %q", g.name, g.data, w.data)
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d parts, want %d", len(got), len(want))
	}
	return ""
}
