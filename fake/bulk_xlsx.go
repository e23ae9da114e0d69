package fake

import (
	"archive/zip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of an uploaded workbook, the fake's own. A zip archive of a few
// hundred KiB can declare gigabytes of XML and millions of rows; these
// bound what a load holds in memory and how long it runs. A workbook past
// one of them is refused with 400 (413 for the body's size) before
// anything is written.
const (
	// maxXLSXBody caps an XLSX body: a zip archive keeps its directory at
	// the end, so unlike CSV and JSON it cannot be read as a stream and is
	// held in memory while it is parsed (413 beyond it).
	maxXLSXBody = 32 << 20
	// maxXLSXDirectory caps the bytes of the zip's central directory,
	// and maxXLSXEntries its entries: both are checked as the directory is
	// read, before any part is.
	maxXLSXDirectory = 1 << 20
	maxXLSXEntries   = 10000
	// maxXLSXUnzipped caps the decompressed bytes of the parts read (the
	// package and workbook relationships, the workbook, the shared strings
	// and the first sheet), declared or actual.
	maxXLSXUnzipped = 64 << 20
	// maxXLSXRow is a worksheet's last row (1,048,576), as in a
	// spreadsheet application.
	maxXLSXRow = 1 << 20
	// maxXLSXColumn is a worksheet's last column (16,384, XFD), as in a
	// spreadsheet application.
	maxXLSXColumn = 1 << 14
	// maxXLSXCells caps the cells of the rows read, empty cells before a
	// row's last value included.
	maxXLSXCells = 1 << 20
	// maxXLSXCellText caps the characters of one cell (32,767, as in a
	// spreadsheet application); a cell's or shared string's bytes are
	// capped at four times as many.
	maxXLSXCellText = 32767
	// maxXLSXRowText caps the bytes of the values of one row, as
	// maxCSVRecord a CSV record's.
	maxXLSXRowText = maxCSVRecord
	// maxXLSXText caps the bytes of the values of the cells read, a shared
	// string counted at each cell that uses it.
	maxXLSXText = maxXLSXUnzipped
	// maxXLSXSharedText caps the bytes of the shared strings table's
	// text, which is held while the sheet is read.
	maxXLSXSharedText = 8 << 20
)

// maxXLSXSharedStrings caps the entries of the shared strings table
// (1,048,576, a string for each row of a worksheet). It is a variable only
// so that a test can prove the cap on a smaller table.
var maxXLSXSharedStrings = 1 << 20

// parseXLSX reads the first sheet of an XLSX workbook (Office Open XML
// spreadsheet) and emits its non-empty rows. Cell values are the text of
// the cell: a shared or inline string, TRUE or FALSE for a boolean, or
// the stored value of a number, date or formula result, unformatted.
func parseXLSX(body io.Reader, header bool, emit func(record) error) error {
	data, err := readWhole(body, maxXLSXBody)
	if err != nil {
		return err
	}
	zr, err := openZip(data)
	if err != nil {
		return err
	}
	wb := &workbook{zr: zr, left: maxXLSXUnzipped}
	sheet, err := wb.firstSheet()
	if err != nil {
		return xlsxError(err, "")
	}
	// The parts read next must fit in what is left, as they declare.
	declared := uint64(0)
	for _, name := range []string{wb.sharedP, sheet.part} {
		if f := wb.file(name); f != nil {
			declared += min(f.UncompressedSize64, maxXLSXUnzipped+1)
		}
	}
	if declared > uint64(wb.left) {
		return tooLarge()
	}
	if err := wb.loadSharedStrings(); err != nil {
		return xlsxError(err, "")
	}
	sr := &sheetReader{wb: wb, sheet: sheet.name, header: header, emit: emit}
	if err := wb.readPart(sheet.part, sr.read); err != nil {
		return xlsxError(err, sheet.name)
	}
	if sr.cols == nil {
		return badInputf("XLSX file is empty: sheet %q has no rows", sheet.name)
	}
	return nil
}

// xlsxError makes err a bad input whose message says it is about an XLSX
// file, unless it already is one (a limit, or a record refused by emit).
func xlsxError(err error, sheet string) error {
	if _, ok := errors.AsType[*badInput](err); ok {
		return err
	}
	if sheet != "" {
		return badInputf("malformed XLSX file: sheet %q: %v", sheet, err)
	}
	return badInputf("malformed XLSX file: %v", err)
}

// workbook is an opened XLSX archive and the budget of decompressed bytes
// left to read from it.
type workbook struct {
	zr      *zip.Reader
	left    int64
	shared  []string
	sharedP string // the shared strings part, "" when there is none
}

type sheetRef struct{ name, part string }

// tooLarge is the error of a workbook past maxXLSXUnzipped.
func tooLarge() error {
	return badInputf("XLSX file decompresses to more than %d bytes (the fake's limit)", maxXLSXUnzipped)
}

// readPart decodes the part name with fn, counting its decompressed bytes
// against the budget: a part that declares, or turns out to hold, more
// than is left fails the load.
func (wb *workbook) readPart(name string, fn func(*xml.Decoder) error) error {
	f := wb.file(name)
	if f == nil {
		return fmt.Errorf("no part %s", name)
	}
	if f.UncompressedSize64 > uint64(wb.left) {
		return tooLarge()
	}
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("part %s: %w", name, err)
	}
	defer rc.Close()
	dec := xml.NewDecoder(&budgetReader{r: rc, wb: wb})
	if err := fn(dec); err != nil {
		if _, ok := errors.AsType[*badInput](err); ok {
			return err
		}
		return fmt.Errorf("part %s: %w", name, err)
	}
	return nil
}

func (wb *workbook) file(name string) *zip.File {
	for _, f := range wb.zr.File {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// budgetReader reads a part and fails once the workbook's budget is spent.
type budgetReader struct {
	r  io.Reader
	wb *workbook
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.wb.left <= 0 {
		// One byte more tells a part that ends exactly at the budget from
		// one that goes on.
		var one [1]byte
		if n, _ := b.r.Read(one[:]); n > 0 {
			return 0, tooLarge()
		}
		return b.r.Read(p)
	}
	if int64(len(p)) > b.wb.left {
		p = p[:b.wb.left]
	}
	n, err := b.r.Read(p)
	b.wb.left -= int64(n)
	return n, err
}

// Relationship types, by the end of their URI (transitional and strict
// Office Open XML differ only before it).
const (
	relOfficeDocument = "/officeDocument"
	relSharedStrings  = "/sharedStrings"
	relWorksheet      = "/worksheet"
)

type relationship struct{ id, typ, target string }

// rels reads the relationships of the part name ("" for the package).
func (wb *workbook) rels(name string) ([]relationship, error) {
	dir, base := path.Split(name)
	relsName := dir + "_rels/" + base + ".rels"
	var out []relationship
	err := wb.readPart(relsName, func(dec *xml.Decoder) error {
		return eachStart(dec, func(se xml.StartElement) error {
			if se.Name.Local == "Relationship" {
				out = append(out, relationship{id: attr(se, "Id"), typ: attr(se, "Type"), target: attr(se, "Target")})
			}
			return nil
		})
	})
	return out, err
}

// resolve is the part a relationship of the part from points at.
func resolve(from, target string) string {
	if after, ok := strings.CutPrefix(target, "/"); ok {
		return after
	}
	return path.Join(path.Dir(from), target)
}

// firstSheet finds the workbook part and its first sheet, and notes the
// shared strings part.
func (wb *workbook) firstSheet() (sheetRef, error) {
	pkg, err := wb.rels("")
	if err != nil {
		return sheetRef{}, err
	}
	book := ""
	for _, r := range pkg {
		if strings.HasSuffix(r.typ, relOfficeDocument) {
			book = resolve("", r.target)
			break
		}
	}
	if book == "" {
		return sheetRef{}, errors.New("no workbook part")
	}
	var first sheetRef
	var firstID string
	err = wb.readPart(book, func(dec *xml.Decoder) error {
		return eachStart(dec, func(se xml.StartElement) error {
			if se.Name.Local == "sheet" && firstID == "" {
				first.name = attr(se, "name")
				for _, a := range se.Attr {
					if a.Name.Local == "id" && a.Name.Space != "" {
						firstID = a.Value
					}
				}
			}
			return nil
		})
	})
	if err != nil {
		return sheetRef{}, err
	}
	if firstID == "" {
		return sheetRef{}, errors.New("no sheet")
	}
	bookRels, err := wb.rels(book)
	if err != nil {
		return sheetRef{}, err
	}
	for _, r := range bookRels {
		switch {
		case r.id == firstID && strings.HasSuffix(r.typ, relWorksheet):
			first.part = resolve(book, r.target)
		case strings.HasSuffix(r.typ, relSharedStrings):
			wb.sharedP = resolve(book, r.target)
		}
	}
	if first.part == "" {
		return sheetRef{}, fmt.Errorf("sheet %q has no worksheet part", first.name)
	}
	return first, nil
}

// loadSharedStrings reads the shared strings table: the text of each si
// element, its runs joined, phonetic hints left out.
func (wb *workbook) loadSharedStrings() error {
	if wb.sharedP == "" {
		return nil
	}
	return wb.readPart(wb.sharedP, func(dec *xml.Decoder) error {
		var text strings.Builder
		in, inT, phonetic, held := false, false, 0, 0
		return eachToken(dec, func(tok xml.Token) error {
			switch t := tok.(type) {
			case xml.StartElement:
				switch t.Name.Local {
				case "si":
					if len(wb.shared) == maxXLSXSharedStrings {
						return badInputf("XLSX file has more than %d shared strings (the fake's limit)", maxXLSXSharedStrings)
					}
					in = true
					text.Reset()
				case "rPh":
					phonetic++
				case "t":
					inT = in && phonetic == 0
				}
			case xml.EndElement:
				switch t.Name.Local {
				case "si":
					if !in {
						return nil // an end tag without its start: nothing to add
					}
					if held += text.Len(); held > maxXLSXSharedText {
						return badInputf("XLSX file: the shared strings hold more than %d bytes of text (the fake's limit)", maxXLSXSharedText)
					}
					wb.shared = append(wb.shared, text.String())
					in, inT = false, false
				case "rPh":
					phonetic = max(0, phonetic-1)
				case "t":
					inT = false
				}
			case xml.CharData:
				if inT {
					if text.Len()+len(t) > 4*maxXLSXCellText { // 4 bytes a character at most
						return cellTooLong(fmt.Sprintf("shared string %d", len(wb.shared)))
					}
					text.Write(t)
				}
			}
			return nil
		})
	})
}

func cellTooLong(where string) error {
	return badInputf("XLSX file: %s is longer than %d characters (the fake's limit)", where, maxXLSXCellText)
}

// eachToken calls fn for each raw token of dec, until the end of its
// input or the first error, fn's or dec's. A token is valid only until fn
// returns.
func eachToken(dec *xml.Decoder, fn func(xml.Token) error) error {
	for {
		tok, err := dec.RawToken()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(tok); err != nil {
			return err
		}
	}
}

// eachStart calls fn for each start element of dec.
func eachStart(dec *xml.Decoder, fn func(xml.StartElement) error) error {
	return eachToken(dec, func(tok xml.Token) error {
		if se, ok := tok.(xml.StartElement); ok {
			return fn(se)
		}
		return nil
	})
}

func attr(se xml.StartElement, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// sheetReader streams a worksheet's rows into records.
type sheetReader struct {
	wb     *workbook
	sheet  string
	header bool
	emit   func(record) error

	cols  []string // nil until the first non-empty row
	row   int      // the current row's number
	cells []string // the current row's values by column, up to the last value
	// lastCol is the column of the current row's last cell, empty or not.
	lastCol int
	cell    cellState
	held    int // cells read so far, for maxXLSXCells
	text    int // bytes of the values read so far, for maxXLSXText
	rowText int // bytes of the current row's values, for maxXLSXRowText
	// inRow and inCell say a row's or a cell's start tag was read and
	// not yet its end: an end tag without its start does nothing, so
	// that each row is emitted once and each cell counted once.
	inRow, inCell bool
}

// cellState is the c element being read.
type cellState struct {
	col     int    // 1-based
	typ     string // the t attribute
	inValue bool   // inside v, or t of an inline string
	text    strings.Builder
}

func (s *sheetReader) read(dec *xml.Decoder) error {
	return eachToken(dec, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			return s.start(t)
		case xml.EndElement:
			return s.end(t)
		case xml.CharData:
			return s.chars(t)
		}
		return nil
	})
}

func (s *sheetReader) start(se xml.StartElement) error {
	switch se.Name.Local {
	case "row":
		n := s.row + 1
		if r := attr(se, "r"); r != "" {
			v, err := strconv.Atoi(r)
			if err != nil || v <= s.row {
				return fmt.Errorf("row %d: bad row number %q", n, r)
			}
			n = v
		}
		if n > maxXLSXRow {
			return badInputf("XLSX file: sheet %q has a row past row %d (the last row of a worksheet)", s.sheet, maxXLSXRow)
		}
		s.row, s.cells, s.lastCol, s.rowText = n, s.cells[:0], 0, 0
		s.inRow, s.inCell = true, false
	case "c":
		col := s.lastCol + 1
		if ref := attr(se, "r"); ref != "" {
			c, ok := refColumn(ref)
			if !ok || c <= s.lastCol {
				return fmt.Errorf("row %d: bad cell reference %q", s.row, ref)
			}
			col = c
		}
		if col > maxXLSXColumn {
			return badInputf("XLSX file: sheet %q, row %d has a cell past column %d (the last column of a worksheet)", s.sheet, s.row, maxXLSXColumn)
		}
		s.cell.col, s.cell.typ = col, attr(se, "t")
		s.cell.text.Reset()
		s.inCell = true
	case "v":
		s.cell.inValue = s.inCell
	case "t":
		s.cell.inValue = s.inCell && s.cell.typ == "inlineStr"
	}
	return nil
}

func (s *sheetReader) chars(data xml.CharData) error {
	if !s.cell.inValue {
		return nil
	}
	if s.cell.text.Len()+len(data) > 4*maxXLSXCellText {
		return cellTooLong(fmt.Sprintf("sheet %q, row %d, column %d", s.sheet, s.row, s.cell.col))
	}
	s.cell.text.Write(data)
	return nil
}

func (s *sheetReader) end(ee xml.EndElement) error {
	switch ee.Name.Local {
	case "v", "t":
		s.cell.inValue = false
	case "c":
		if !s.inCell {
			return nil
		}
		s.inCell, s.cell.inValue = false, false
		return s.endCell()
	case "row":
		if !s.inRow {
			return nil
		}
		s.inRow, s.inCell = false, false
		return s.endRow()
	}
	return nil
}

func (s *sheetReader) endCell() error {
	v := s.cell.text.String()
	switch s.cell.typ {
	case "b":
		switch strings.TrimSpace(v) {
		case "1":
			v = "TRUE"
		case "0":
			v = "FALSE"
		}
	case "s":
		if v == "" {
			break // a cell with a style and no value
		}
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || i < 0 || i >= len(s.wb.shared) {
			return fmt.Errorf("row %d, column %d: no shared string %q", s.row, s.cell.col, v)
		}
		v = s.wb.shared[i]
	}
	s.lastCol = s.cell.col
	if v == "" {
		return nil
	}
	if utf8.RuneCountInString(v) > maxXLSXCellText {
		return cellTooLong(fmt.Sprintf("sheet %q, row %d, column %d", s.sheet, s.row, s.cell.col))
	}
	if s.held+s.cell.col-len(s.cells) > maxXLSXCells {
		return badInputf("XLSX file: sheet %q has more than %d cells (the fake's limit)", s.sheet, maxXLSXCells)
	}
	if s.rowText+len(v) > maxXLSXRowText {
		return badInputf("XLSX file: sheet %q, row %d holds more than %d bytes of text (the fake's limit)", s.sheet, s.row, maxXLSXRowText)
	}
	if s.text+len(v) > maxXLSXText {
		return badInputf("XLSX file: the cells of sheet %q hold more than %d bytes of text (the fake's limit)", s.sheet, maxXLSXText)
	}
	s.held += s.cell.col - len(s.cells)
	s.text += len(v)
	s.rowText += len(v)
	for len(s.cells) < s.cell.col-1 {
		s.cells = append(s.cells, "")
	}
	s.cells = append(s.cells, v)
	return nil
}

func (s *sheetReader) endRow() error {
	cells := s.cells
	if len(cells) == 0 {
		return nil // an empty row
	}
	if s.cols == nil {
		if s.header {
			cols, err := headerColumns(cells, fmt.Sprintf("sheet %q, row %d", s.sheet, s.row))
			s.cols = cols
			return err
		}
		s.cols = positionalColumns(len(cells))
	}
	if len(cells) > len(s.cols) {
		return badInputf("malformed XLSX file: sheet %q, row %d has %d cells, the first row has %d", s.sheet, s.row, len(cells), len(s.cols))
	}
	vals := make([]any, len(cells))
	for i, v := range cells {
		vals[i] = v
	}
	return s.emit(record{cols: s.cols[:len(cells)], vals: vals, size: s.rowText})
}

// refColumn is the 1-based column of a cell reference such as "B7".
func refColumn(ref string) (int, bool) {
	col, i := 0, 0
	for ; i < len(ref) && ref[i] >= 'A' && ref[i] <= 'Z'; i++ {
		col = col*26 + int(ref[i]-'A'+1)
		if col > maxXLSXColumn {
			return col, true // reported as past the last column
		}
	}
	if i == 0 || i == len(ref) {
		return 0, false
	}
	return col, true
}
