package fake

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"hash/crc32"
	"io"
	"mime/multipart"
	"runtime/metrics"
	"strings"
	"testing"
)

// The tests of this file send hostile uploads: small bodies that expand to
// gigabytes of XML, rows or cells. Each must be refused with 400 and a
// message naming the limit, without the fake allocating what the upload
// declares. They are not parallel, so that the heap they measure is theirs.

// heapAllocs is the number of bytes allocated on the heap so far by the
// whole process.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// refusedWithin sends body as a load and checks that it is refused with
// 400 and a message containing want, allocating at most maxAlloc bytes.
func refusedWithin(t *testing.T, e *bulkEnv, format string, body []byte, want string, maxAlloc uint64) {
	t.Helper()
	q, ctype, r := opps("data_format", format), "text/csv", io.Reader(bytes.NewReader(body))
	if format == "XLSX" {
		ctype, r = attach(body)
	}
	before := heapAllocs()
	code, ack := e.do("POST", "/bulk/v1/bulkload", q, ctype, r)
	allocated := heapAllocs() - before
	if msg, _ := ack["message"].(string); code != 400 || !strings.Contains(msg, want) {
		t.Errorf("load: %d %v, want 400 saying %q", code, ack, want)
	}
	if allocated > maxAlloc {
		t.Errorf("the load allocated %d MiB, want at most %d MiB", allocated>>20, maxAlloc>>20)
	}
}

// attach makes a multipart/form-data body with data as the part "file",
// as the service takes a workbook, and returns its content type.
func attach(data []byte) (string, io.Reader) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "opps.xlsx")
	fw.Write(data)
	mw.Close()
	return mw.FormDataContentType(), &body
}

// loadXLSX sends a workbook as a file to the load of the demo
// opportunities.
func loadXLSX(t *testing.T, e *bulkEnv, data []byte) (int, map[string]any) {
	t.Helper()
	ctype, body := attach(data)
	return e.do("POST", "/bulk/v1/bulkload", opps("data_format", "XLSX"), ctype, body)
}

// loadHeaderless sends an XLSX workbook whose first row is data, as a file
// to the opportunity load.
func loadHeaderless(t *testing.T, e *bulkEnv, data []byte) (int, map[string]any) {
	t.Helper()
	ctype, body := attach(data)
	q := opps("has_header_row", "false", "content_type", "XLSX")
	return e.do("POST", "/bulk/v1/bulkload_opportunity", q, ctype, body)
}

// part is one file of a crafted workbook: its text, then, for a part
// made by repeat, unit n times and tail.
type part struct {
	name string
	text string
	unit string
	n    int
	tail string
}

// repeat is a part of prefix, then unit n times, then suffix. It is
// compressed without being held whole, so that a test holds only the
// compressed bytes.
func repeat(prefix, unit string, n int, suffix string) part {
	return part{text: prefix, unit: unit, n: n, tail: suffix}
}

// workbookZip builds an XLSX archive of parts.
func workbookZip(t testing.TB, parts ...part) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range parts {
		var err error
		if p.n > 0 {
			err = writeRepeated(zw, p)
		} else {
			var w io.Writer
			if w, err = zw.Create(p.name); err == nil {
				_, err = io.WriteString(w, p.text)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeRepeated adds a part made by repeat to zw, deflated as any
// archiver does, but built from pieces compressed once: the text, a chunk
// of units, and the rest. Each piece is compressed by a new compressor and
// flushed, so that it refers to no byte before it and ends on a byte
// boundary; such pieces joined are one deflate stream (as pigz builds
// them), and the chunk's piece is written as many times as the part
// holds chunks.
func writeRepeated(zw *zip.Writer, p part) error {
	per := max(1, 1<<20/len(p.unit))
	chunk := strings.Repeat(p.unit, per)
	full, rest := p.n/per, p.n%per
	last := chunk[:rest*len(p.unit)] + p.tail
	head, body, end := deflated(p.text, false), deflated(chunk, false), deflated(last, true)
	crc := crc32.ChecksumIEEE([]byte(p.text))
	chunkBytes := []byte(chunk)
	for range full {
		crc = crc32.Update(crc, crc32.IEEETable, chunkBytes)
	}
	crc = crc32.Update(crc, crc32.IEEETable, []byte(last))
	w, err := zw.CreateRaw(&zip.FileHeader{
		Name:               p.name,
		Method:             zip.Deflate,
		CRC32:              crc,
		CompressedSize64:   uint64(len(head) + full*len(body) + len(end)),
		UncompressedSize64: uint64(len(p.text) + p.n*len(p.unit) + len(p.tail)),
	})
	if err != nil {
		return err
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	for range full {
		if _, err := w.Write(body); err != nil {
			return err
		}
	}
	_, err = w.Write(end)
	return err
}

// deflated is s compressed into deflate blocks ending on a byte boundary,
// the last of the stream if final.
func deflated(s string, final bool) []byte {
	var b bytes.Buffer
	fw, _ := flate.NewWriter(&b, flate.DefaultCompression)
	io.WriteString(fw, s)
	if final {
		fw.Close()
	} else {
		fw.Flush()
	}
	return b.Bytes()
}

const (
	xmlHead   = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"
	nsMain    = `http://schemas.openxmlformats.org/spreadsheetml/2006/main`
	nsRel     = `http://schemas.openxmlformats.org/officeDocument/2006/relationships`
	nsPkgRel  = `http://schemas.openxmlformats.org/package/2006/relationships`
	sheetOpen = xmlHead + `<worksheet xmlns="` + nsMain + `"><sheetData>`
	sheetEnd  = `</sheetData></worksheet>`
)

// bookParts are the parts of a workbook with one sheet, Data, at
// xl/worksheets/sheet1.xml, and a shared strings table at
// xl/sharedStrings.xml.
func bookParts() []part {
	return []part{
		{name: "_rels/.rels", text: xmlHead + `<Relationships xmlns="` + nsPkgRel + `">` +
			`<Relationship Id="rId1" Type="` + nsRel + `/officeDocument" Target="xl/workbook.xml"/></Relationships>`},
		{name: "xl/workbook.xml", text: xmlHead + `<workbook xmlns="` + nsMain + `" xmlns:r="` + nsRel + `">` +
			`<sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>`},
		{name: "xl/_rels/workbook.xml.rels", text: xmlHead + `<Relationships xmlns="` + nsPkgRel + `">` +
			`<Relationship Id="rId1" Type="` + nsRel + `/worksheet" Target="worksheets/sheet1.xml"/>` +
			`<Relationship Id="rId2" Type="` + nsRel + `/sharedStrings" Target="sharedStrings.xml"/></Relationships>`},
	}
}

// craftedXLSX is a workbook whose sheet and shared strings are given.
func craftedXLSX(t testing.TB, sheet, shared part) []byte {
	t.Helper()
	sheet.name, shared.name = "xl/worksheets/sheet1.xml", "xl/sharedStrings.xml"
	return workbookZip(t, append(bookParts(), shared, sheet)...)
}

func sharedText(strs ...string) part {
	var b strings.Builder
	b.WriteString(xmlHead + `<sst xmlns="` + nsMain + `">`)
	for _, s := range strs {
		b.WriteString("<si><t>" + s + "</t></si>")
	}
	b.WriteString("</sst>")
	return part{text: b.String()}
}

// header is the header row of the demo opportunity integration.
const header = `<row r="1"><c r="A1" t="inlineStr"><is><t>sales_details.crm_opportunity_id</t></is></c>` +
	`<c r="B1" t="inlineStr"><is><t>name</t></is></c></row>`

func sheetText(rows string) part { return part{text: sheetOpen + rows + sheetEnd} }

// TestXLSXCraftedWorkbook checks the reader on a workbook written by hand
// the way other tools write them: shared and inline strings, booleans,
// numbers, rich text runs with a phonetic hint, a cell without reference
// and a gap of empty rows and cells.
func TestXLSXCraftedWorkbook(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0))
	data := craftedXLSX(t,
		sheetText(header+`<row r="2"><c r="A2" t="s"><v>0</v></c><c t="s"><v>1</v></c></row>`+
			`<row r="5"><c r="A5" t="inlineStr"><is><t>K-2</t></is></c><c r="B5" t="b"><v>1</v></c><c r="C5"/></row>`),
		part{text: xmlHead + `<sst xmlns="` + nsMain + `"><si><t>K-1</t></si>` +
			`<si><r><t>Rich </t></r><r><t>name</t></r><rPh><t>hint</t></rPh></si></sst>`})
	code, ack := loadXLSX(t, e, data)
	if code != 200 {
		t.Fatalf("load: %d %v", code, ack)
	}
	got := map[string]any{}
	for _, o := range e.srv.Objects("opportunity") {
		if k, _ := o.Field("sales_details.crm_opportunity_id"); k == "K-1" || k == "K-2" {
			got[k.(string)] = o.Fields["name"]
		}
	}
	if got["K-1"] != "Rich name" || got["K-2"] != "TRUE" {
		t.Errorf("names = %v, want K-1: Rich name, K-2: TRUE", got)
	}
}

// TestXLSXMalformed checks that a workbook the reader cannot follow is
// refused with 400 and a message saying where.
func TestXLSXMalformed(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0))
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"no package relationships", workbookZip(t, part{name: "xl/workbook.xml", text: "<workbook/>"}), "no part _rels/.rels"},
		{"no sheet", workbookZip(t, bookParts()[0], part{name: "xl/workbook.xml", text: "<workbook/>"}), "no sheet"},
		{"shared string out of range", craftedXLSX(t, sheetText(header+`<row><c t="s"><v>7</v></c></row>`), sharedText("a")), `no shared string "7"`},
		{"rows out of order", craftedXLSX(t, sheetText(header+`<row r="1"><c><v>1</v></c></row>`), sharedText()), `bad row number "1"`},
		{"cells out of order", craftedXLSX(t, sheetText(header+`<row><c r="B2"><v>1</v></c><c r="A2"><v>1</v></c></row>`), sharedText()), `bad cell reference "A2"`},
		{"not XML", craftedXLSX(t, sheetText("<row><c><v>1</v></row"), sharedText()), "malformed XLSX file"},
		{"empty sheet", craftedXLSX(t, sheetText(""), sharedText()), `sheet "Data" has no rows`},
	} {
		code, ack := loadXLSX(t, e, tc.data)
		if msg, _ := ack["message"].(string); code != 400 || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %v, want 400 saying %q", tc.name, code, ack, tc.want)
		}
	}
}

func TestXLSXBombDecompressedSize(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0))
	row := `<row><c t="inlineStr"><is><t>B-1</t></is></c><c><v>1</v></c></row>`
	n := maxXLSXUnzipped/len(row) + 1 // a sheet just past the limit
	sheet := repeat(sheetOpen+header, row, n, sheetEnd)
	refusedWithin(t, e, "XLSX", craftedXLSX(t, sheet, sharedText()), "decompresses to more than", 32<<20)

	// Two parts within the limit each, past it together.
	half := maxXLSXUnzipped/2 + 1
	shared := repeat(xmlHead+`<sst xmlns="`+nsMain+`">`, " ", half, "</sst>")
	sheet = repeat(sheetOpen+header, " ", half, sheetEnd)
	refusedWithin(t, e, "XLSX", craftedXLSX(t, sheet, shared), "decompresses to more than", 32<<20)
}

func TestXLSXBombRowIndex(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0))
	for _, r := range []string{"1048577", "2147483647", "99999999999999999999"} {
		rows := header + `<row r="` + r + `"><c r="A` + r + `" t="inlineStr"><is><t>R-1</t></is></c></row>`
		want := "past row 1048576"
		if len(r) > 18 {
			want = "bad row number"
		}
		refusedWithin(t, e, "XLSX", craftedXLSX(t, sheetText(rows), sharedText()), want, 8<<20)
	}
	// A row of a worksheet's last column is read; one past it is refused.
	rows := `<row r="1"><c r="XFD1" t="inlineStr"><is><t>x</t></is></c></row>`
	code, ack := loadHeaderless(t, e, craftedXLSX(t, sheetText(rows), sharedText()))
	if code != 200 {
		t.Errorf("a cell in column XFD: %d %v", code, ack)
	}
	rows = `<row r="1"><c r="XFE1" t="inlineStr"><is><t>x</t></is></c></row>`
	refusedWithin(t, e, "XLSX", craftedXLSX(t, sheetText(rows), sharedText()), "past column 16384", 8<<20)
}

func TestXLSXBombCells(t *testing.T) {
	// The fake discards the rows it reads, so that what it allocates is
	// the reader's: a stored row, or a refused row kept with its errors,
	// would be a map of its 16,384 columns.
	e := newBulkEnv(t, WithBulkDelay(0), WithBulkDiscard())
	// Each row holds a key in the first column and a value in the last:
	// 16,384 cells a row.
	rows := maxXLSXCells/maxXLSXColumn + 1
	var b strings.Builder
	for r := 1; r <= rows; r++ {
		fmt.Fprintf(&b, `<row r="%d"><c r="A%[1]d"><v>%[1]d</v></c><c r="XFD%[1]d"><v>%[1]d</v></c></row>`, r)
	}
	ctype, body := attach(craftedXLSX(t, sheetText(b.String()), sharedText()))
	q := opps("has_header_row", "false", "content_type", "XLSX")
	before := heapAllocs()
	code, ack := e.do("POST", "/bulk/v1/bulkload_opportunity", q, ctype, body)
	allocated := heapAllocs() - before
	if msg, _ := ack["message"].(string); code != 400 || !strings.Contains(msg, "more than 1048576 cells") {
		t.Errorf("load: %d %v", code, ack)
	}
	if allocated > 32<<20 {
		t.Errorf("the load allocated %d MiB, want at most 32 MiB", allocated>>20)
	}
}

func TestXLSXBombSharedStrings(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0))
	// One shared string past a cell's length.
	long := strings.Repeat("x", maxXLSXCellText+1)
	rows := header + `<row><c t="s"><v>0</v></c></row>`
	refusedWithin(t, e, "XLSX", craftedXLSX(t, sheetText(rows), sharedText(long)), "longer than 32767 characters", 16<<20)

	// A long string used by many cells: 2 KiB of XML that would expand to
	// more than the decompressed limit.
	long = strings.Repeat("y", maxXLSXCellText)
	n := maxXLSXText/maxXLSXCellText + 1
	sheet := repeat(sheetOpen+header, `<row><c t="s"><v>0</v></c></row>`, n, sheetEnd)
	refusedWithin(t, e, "XLSX", craftedXLSX(t, sheet, sharedText(long)), "bytes of text", 32<<20)

	// More shared strings than the cap. The cap is a worksheet's rows
	// (1,048,576); the test lowers it to 65,536 so that the fake parses a
	// sixteenth of the entries (the full table takes about a second of
	// CPU), and the bound on the bytes allocated shrinks with it: most are
	// the XML tokenizer's, collected as it goes, and the table holds 16 B
	// an entry. The variable is restored before any parallel test runs.
	if maxXLSXSharedStrings != maxXLSXRow {
		t.Fatalf("maxXLSXSharedStrings = %d, want a worksheet's rows, %d", maxXLSXSharedStrings, maxXLSXRow)
	}
	defer func(n int) { maxXLSXSharedStrings = n }(maxXLSXSharedStrings)
	maxXLSXSharedStrings = 1 << 16
	shared := repeat(xmlHead+`<sst xmlns="`+nsMain+`">`, "<si/>", maxXLSXSharedStrings+1, "</sst>")
	refusedWithin(t, e, "XLSX", craftedXLSX(t, sheetText(header), shared), "more than 65536 shared strings", 256<<20>>4)
	// One entry fewer is within the cap: the refusal is the cap's.
	shared = repeat(xmlHead+`<sst xmlns="`+nsMain+`">`, "<si/>", maxXLSXSharedStrings, "</sst>")
	ctype, body := attach(craftedXLSX(t, sheetText(header), shared))
	code, ack := e.do("POST", "/bulk/v1/bulkload", opps("data_format", "XLSX"), ctype, body)
	if msg, _ := ack["message"].(string); code >= 500 || strings.Contains(msg, "shared strings") {
		t.Errorf("a table at the cap: %d %v, want it accepted", code, ack)
	}
}

// endless is a reader of n bytes of b, made as they are read: a body
// over a size limit that the test does not hold.
type endless struct {
	b byte
	n int
}

func (r *endless) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p = p[:min(len(p), r.n)]
	p[0] = r.b
	for i := 1; i < len(p); i *= 2 {
		copy(p[i:], p[:i])
	}
	r.n -= len(p)
	return len(p), nil
}

func TestCSVBombLongLine(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0))
	body := io.MultiReader(strings.NewReader("sales_details.crm_opportunity_id,name\nL-1,"), &endless{b: 'a', n: 24 << 20})
	before := heapAllocs()
	code, ack := e.do("POST", "/bulk/v1/bulkload", opps(), "text/csv", body)
	allocated := heapAllocs() - before
	if msg, _ := ack["message"].(string); code != 400 || !strings.Contains(msg, "record 2 is longer than 1048576 bytes") {
		t.Errorf("load: %d %v", code, ack)
	}
	if allocated > 12<<20 {
		t.Errorf("the load allocated %d MiB, want at most 12 MiB", allocated>>20)
	}

	// A line of many empty fields.
	line := "sales_details.crm_opportunity_id,name\n" + strings.Repeat(",", maxCSVFields) + "\n"
	refusedWithin(t, e, "CSV", []byte(line), "more than 16384 fields", 16<<20)

	// A record just within the limit is read.
	ok := "sales_details.crm_opportunity_id,name\nL-2," + strings.Repeat("b", maxCSVRecord-8) + "\n"
	if code, ack := e.load(opps(), "text/csv", ok); code != 200 {
		t.Errorf("a record of %d bytes: %d %v", len(ok), code, ack)
	}
}
