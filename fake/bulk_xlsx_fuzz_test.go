package fake

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The XLSX reader's fuzz target and its seed corpus, testdata/fuzz/FuzzXLSX:
// the hostile workbooks of the memory model's tests in small sizes (cells, rows and shared
// strings closed by unmatched end tags), written by TestXLSXFuzzSeeds
// with -xlsx-seeds and checked against it otherwise.

var writeSeeds = flag.Bool("xlsx-seeds", false, "rewrite the seed corpus of FuzzXLSX in testdata/fuzz/FuzzXLSX")

// xlsxSeeds are the hostile workbooks of the corpus, by file name.
func xlsxSeeds(t testing.TB) map[string][]byte {
	cells := `<row r="2"><c r="A2" t="inlineStr"><is><t>K-1</t></is></c>`
	return map[string][]byte{
		"unmatched-end-tags": unmatchedEndTags(t, 1000),
		"unmatched-cells":    craftedXLSX(t, repeat(sheetOpen+header+cells, "</c>", 1000, "</row>"+sheetEnd), sharedText()),
		"unmatched-rows":     craftedXLSX(t, repeat(sheetOpen+header+cells+"</row>", "</row>", 1000, sheetEnd), sharedText()),
		"unmatched-si": craftedXLSX(t, sheetText(header+`<row r="2"><c r="A2" t="s"><v>0</v></c></row>`),
			repeat(xmlHead+`<sst xmlns="`+nsMain+`"><si><t>K-1</t></si>`, "</si>", 1000, "</sst>")),
		"value-outside-cell": craftedXLSX(t, repeat(sheetOpen+header+`<row r="2">`, "<v>x</v>", 1000, "</row>"+sheetEnd), sharedText()),
	}
}

func seedFile(data []byte, header bool) []byte {
	return []byte("go test fuzz v1\n[]byte(" + strconv.Quote(string(data)) + ")\nbool(" + strconv.FormatBool(header) + ")\n")
}

// TestXLSXFuzzSeeds checks that the committed corpus holds a file for
// each of xlsxSeeds (-xlsx-seeds rewrites them), and that none loads more
// than its one row: each once emitted a row, a cell or a string at every
// unmatched end tag.
func TestXLSXFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzXLSX")
	for name, data := range xlsxSeeds(t) {
		path := filepath.Join(dir, name)
		if *writeSeeds {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, seedFile(data, true), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%v; write the corpus with go test -run TestXLSXFuzzSeeds -xlsx-seeds ./fake", err)
			continue
		}
		lines := strings.Split(string(raw), "\n")
		if len(lines) < 3 || !strings.HasPrefix(lines[1], "[]byte(") {
			t.Fatalf("%s: not a fuzz seed", path)
		}
		seed, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		rows := 0
		err = parseXLSX(strings.NewReader(seed), true, func(record) error { rows++; return nil })
		if rows > 1 {
			t.Errorf("%s: %d rows emitted (%v), want at most the one", name, rows, err)
		}
	}
}

// FuzzXLSX reads a workbook: whatever it holds, the reader emits no row
// with more values than columns or more text than a row may hold, no more
// rows than a worksheet has, and no more cells than its cap.
func FuzzXLSX(f *testing.F) {
	for _, name := range []string{"excelize-attached.xlsx", "excelize-rows.xlsx"} {
		if data, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(data, true)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, header bool) {
		rows, cells := 0, 0
		parseXLSX(bytes.NewReader(data), header, func(rec record) error {
			rows++
			cells += len(rec.vals)
			switch {
			case len(rec.vals) > len(rec.cols):
				t.Fatalf("row %d: %d values, %d columns", rows, len(rec.vals), len(rec.cols))
			case rec.size > maxXLSXRowText:
				t.Fatalf("row %d: %d bytes of text", rows, rec.size)
			case rows > maxXLSXRow || cells > maxXLSXCells:
				t.Fatalf("%d rows, %d cells emitted", rows, cells)
			}
			return nil
		})
	})
}
