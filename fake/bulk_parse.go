package fake

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Bulk input formats (data_format, case-insensitive on the wire).
const (
	formatCSV  = "CSV"
	formatJSON = "JSON"
	formatXLSX = "XLSX"
)

// badInput is a parse or validation failure of a load; it becomes a 400
// whose message says where the input is wrong.
type badInput struct {
	status int // 400 unless set
	msg    string
}

func (e *badInput) Error() string { return e.msg }

func badInputf(format string, args ...any) error {
	return &badInput{msg: fmt.Sprintf(format, args...)}
}

// record is one parsed row: column names (dotted field names) and their
// values, as JSON values (CSV and XLSX cells are strings).
type record struct {
	cols []string
	vals []any
	// raw is the JSON object as sent, kept to show it back in errors.
	raw map[string]any
	// size is the bytes the record took in the body (the text of its
	// cells for XLSX), to bound what a load keeps of it.
	size int
}

// maxErrorRow caps the bytes of the data_row an execution keeps of a
// refused row, and maxErrorColumns its columns: a row within both is
// kept whole (a JSON record as sent), a longer one by its first columns
// that fit, the others left out.
const (
	maxErrorRow     = 2 << 10
	maxErrorColumns = 32
)

// dataRow returns the row as an object of column name to value, the
// data_row of an execution error, at most about maxErrorRow bytes.
func (r record) dataRow() map[string]any {
	if r.raw != nil && r.size <= maxErrorRow && len(r.cols) <= maxErrorColumns {
		return deepCopy(r.raw).(map[string]any)
	}
	m := make(map[string]any, min(len(r.cols), maxErrorColumns))
	left := maxErrorRow
	for i, c := range r.cols {
		if i >= len(r.vals) || i == maxErrorColumns {
			break
		}
		v := r.vals[i]
		n := len(c) + 8
		if s, ok := v.(string); ok {
			n += len(s)
		}
		if n > left {
			break
		}
		left -= n
		m[c] = v
	}
	return m
}

// parseRows parses body in format and calls emit for each record, as the
// body is read; a nil emit only checks the body (and builds no record a
// check does not need). header says whether the first CSV or XLSX row
// names the columns; without it columns are named by position, "1",
// "2", ...
func parseRows(body io.Reader, format string, delim rune, header bool, emit func(record) error) error {
	if format == formatJSON {
		return parseJSON(body, emit)
	}
	if emit == nil {
		emit = func(record) error { return nil }
	}
	switch format {
	case formatCSV:
		return parseCSV(body, delim, header, emit)
	case formatXLSX:
		return parseXLSX(body, header, emit)
	}
	return badInputf("unsupported data_format %q", format)
}

// Limits of a CSV load, the fake's own: the CSV reader holds a whole
// record in memory, so one endless line must not be read to its end.
const (
	// maxCSVRecord caps the bytes of one CSV record (a line, or several
	// when a quoted field holds line breaks).
	maxCSVRecord = 1 << 20
	// maxCSVFields caps the fields of one CSV record, as many as a
	// worksheet has columns.
	maxCSVFields = maxXLSXColumn
	// maxJSONRecord caps the bytes of one record of a JSON body, as
	// maxCSVRecord a CSV record's.
	maxJSONRecord = 1 << 20
)

// csvBuffer is the read-ahead of the CSV reader.
const csvBuffer = 64 << 10

// recordLimiter reads a CSV or JSON body and fails once the reader has
// taken more than a record's cap (plus its read-ahead) past the end of
// the last whole record: max is moved on at each record.
type recordLimiter struct {
	r       io.Reader
	read    int64 // bytes read so far
	max     int64 // bytes that may be read before the next record ends
	tripped bool
}

func (l *recordLimiter) Read(p []byte) (int, error) {
	if l.read >= l.max {
		l.tripped = true
		return 0, errRecordTooLong
	}
	if int64(len(p)) > l.max-l.read {
		p = p[:l.max-l.read]
	}
	n, err := l.r.Read(p)
	l.read += int64(n)
	return n, err
}

var errRecordTooLong = errors.New("record too long")

func parseCSV(body io.Reader, delim rune, header bool, emit func(record) error) error {
	lim := &recordLimiter{r: body, max: maxCSVRecord + csvBuffer}
	cr := csv.NewReader(bufio.NewReaderSize(lim, csvBuffer))
	cr.Comma = delim
	cr.ReuseRecord = true
	var cols []string
	for n := 1; ; n++ {
		first := n == 1
		fields, err := cr.Read()
		if errors.Is(err, io.EOF) {
			if first {
				return badInputf("CSV body is empty")
			}
			return nil
		}
		if lim.tripped {
			return badInputf("malformed CSV: record %d is longer than %d bytes (the fake's limit)", n, maxCSVRecord)
		}
		size := int(cr.InputOffset() - (lim.max - maxCSVRecord - csvBuffer))
		lim.max = cr.InputOffset() + maxCSVRecord + csvBuffer
		if len(fields) > maxCSVFields { // fields come with a wrong count too
			return badInputf("malformed CSV: record %d has more than %d fields (the fake's limit)", n, maxCSVFields)
		}
		if err != nil {
			if pe, ok := errors.AsType[*csv.ParseError](err); ok {
				if errors.Is(pe.Err, csv.ErrFieldCount) {
					return badInputf("malformed CSV: record on line %d has %d fields, the first row has %d", pe.StartLine, len(fields), len(cols))
				}
				return badInputf("malformed CSV at line %d, column %d: %v", pe.Line, pe.Column, pe.Err)
			}
			return err // the connection failed
		}
		if first {
			if header {
				line, _ := cr.FieldPos(0)
				if cols, err = headerColumns(fields, fmt.Sprintf("line %d", line)); err != nil {
					return err
				}
				continue
			}
			cols = positionalColumns(len(fields))
		}
		vals := make([]any, len(fields))
		for i, s := range fields {
			vals[i] = s
		}
		if err := emit(record{cols: cols, vals: vals, size: size}); err != nil {
			return err
		}
	}
}

func headerColumns(fields []string, where string) ([]string, error) {
	cols := make([]string, len(fields))
	seen := make(map[string]bool, len(fields))
	for i, c := range fields {
		if i == 0 {
			c = strings.TrimPrefix(c, "\ufeff") // a byte order mark
		}
		c = strings.TrimSpace(c)
		switch {
		case c == "":
			return nil, badInputf("malformed header row (%s): column %d has no name", where, i+1)
		case seen[c]:
			return nil, badInputf("malformed header row (%s): column %q appears twice", where, c)
		}
		seen[c] = true
		cols[i] = c
	}
	return cols, nil
}

func positionalColumns(n int) []string {
	cols := make([]string, n)
	for i := range cols {
		cols[i] = strconv.Itoa(i + 1)
	}
	return cols
}

// endReader notes where the last byte that can start a value was read,
// and whether the body has ended: a JSON body that ends after a record
// (and perhaps a comma) ends "after record n" whatever the decoder makes
// of it (Go 1.27's Decoder reports More and then a syntax error there).
type endReader struct {
	r           io.Reader
	read        int64
	significant int64 // offset of the last byte read that is not space or comma; -1 if none
	ended       bool
}

func (e *endReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	for i := n - 1; i >= 0; i-- {
		if c := p[i]; c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ',' {
			e.significant = e.read + int64(i)
			break
		}
	}
	e.read += int64(n)
	if errors.Is(err, io.EOF) {
		e.ended = true
	}
	return n, err
}

// endedBefore reports whether the body ended with nothing but space and
// commas from offset on.
func (e *endReader) endedBefore(offset int64) bool {
	return e.ended && e.significant < offset
}

// jsonSlack is what the JSON reader may read past a record's end: its
// own read-ahead and the decoder's buffer, which can hold a record.
const jsonSlack = maxJSONRecord + 2*csvBuffer

func parseJSON(body io.Reader, emit func(record) error) error {
	lim := &recordLimiter{r: body, max: maxJSONRecord + jsonSlack}
	end := &endReader{r: lim, significant: -1}
	dec := json.NewDecoder(bufio.NewReaderSize(end, csvBuffer))
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return badInputf("JSON body is empty")
		}
		return jsonError(err, dec, "the opening bracket")
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return badInputf("malformed JSON at byte 0: the body must be an array of objects")
	}
	n := 0
	for dec.More() {
		n++
		start := dec.InputOffset()
		lim.max = start + maxJSONRecord + jsonSlack
		var obj map[string]any
		err := dec.Decode(&obj)
		if lim.tripped || err == nil && dec.InputOffset()-start > maxJSONRecord {
			return badInputf("malformed JSON: record %d (byte %d) is longer than %d bytes (the fake's limit)", n, start, maxJSONRecord)
		}
		if err != nil {
			if end.endedBefore(start) {
				return badInputf("malformed JSON at byte %d (after record %d): unexpected end of body", start, n-1)
			}
			if _, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
				return badInputf("malformed JSON: record %d (byte %d) is not an object", n, start)
			}
			return jsonError(err, dec, fmt.Sprintf("record %d", n))
		}
		if obj == nil {
			return badInputf("malformed JSON: record %d (byte %d) is not an object", n, start)
		}
		count := countFlat(obj)
		if msg := recordTooLarge(n, start, count); msg != "" {
			return &badInput{msg: msg}
		}
		if emit == nil {
			continue
		}
		flat := flatten(obj)
		// size counts the dotted names built, which may be longer than
		// the record: it bounds the batches that hold the rows.
		rec := record{cols: slices.Sorted(maps.Keys(flat)), raw: obj, size: max(int(dec.InputOffset()-start), count.bytes)}
		rec.vals = make([]any, len(rec.cols))
		for i, c := range rec.cols {
			rec.vals[i] = flat[c]
		}
		if err := emit(rec); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing bracket
		return jsonError(err, dec, fmt.Sprintf("after record %d", n))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badInputf("malformed JSON at byte %d: data after the array", dec.InputOffset())
	}
	return nil
}

// jsonError is a JSON body's syntax error or early end, saying where:
// in a record, or where the array should go on.
func jsonError(err error, dec *json.Decoder, where string) error {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return badInputf("malformed JSON at byte %d (%s): %v", syn.Offset, where, err)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return badInputf("malformed JSON at byte %d (%s): unexpected end of body", dec.InputOffset(), where)
	}
	return err // the connection failed
}
