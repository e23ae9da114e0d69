package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Row is one row of report data: its values keyed by column name, in the
// order the server sent the members of the row's JSON object, which is the
// report's column order.
//
// Values keep their JSON type: nil (null), bool, json.Number (numbers,
// exactly as sent), string, []any and map[string]any (nested values, with
// json.Number numbers, decoded anew on every call). A row read from the
// service keeps where each value's JSON text starts in its page, 4 bytes a
// value, and makes the value when it is asked for: Value and Get put it in
// an interface (an allocation for a string or a number), Text gives a
// string or a number's text without allocating. Rows of one page usually
// share their column list.
//
// The values of a row read from the service share the memory of the page
// they came in (one buffer per page, 2 MB for 10,000 rows of 10 columns):
// a row kept long after its page, among few others, keeps that page alive.
// Keep a Clone of such rows.
type Row struct {
	cols *columns
	src  *source
	offs []uint32 // where each value starts in src.text
}

// source is what the values of rows are read from: the JSON text of a
// page (or of a row), or the values given to NewRow.
type source struct {
	text string
	vals []any // NewRow's values, when not nil
}

// columns is a list of column names shared by the rows that have it.
type columns struct {
	names []string
	once  sync.Once
	index map[string]int
}

// rowKeys gives a decoded row its columns as its keys come: while they
// follow the previous row's (shared), the row shares that *columns; from
// the first key that differs it gets names of its own. Both page decoders
// use it (the scanner and the encoding/json baseline of its benchmark).
type rowKeys struct {
	shared  *columns
	names   []string // set once the keys leave shared's
	matched bool
	clone   bool // copy a key of its own (it points into the page)
}

func newRowKeys(shared *columns, clone bool) rowKeys {
	return rowKeys{shared: shared, matched: shared != nil, clone: clone}
}

// add notes key, the name of value number i of the row.
func (k *rowKeys) add(i int, key string) {
	if k.matched && (i >= len(k.shared.names) || k.shared.names[i] != key) {
		k.matched = false
		k.names = append([]string(nil), k.shared.names[:i]...)
	}
	if !k.matched {
		if k.clone {
			key = strings.Clone(key)
		}
		k.names = append(k.names, key)
	}
}

// columns returns the columns of the row, which has n values.
func (k *rowKeys) columns(n int) *columns {
	switch {
	case k.matched && n == len(k.shared.names):
		return k.shared
	case k.matched:
		return &columns{names: append([]string(nil), k.shared.names[:n]...)}
	case k.names == nil:
		return &columns{names: []string{}}
	}
	return &columns{names: k.names}
}

func (c *columns) lookup(name string) (int, bool) {
	if len(c.names) <= 8 {
		i := slices.Index(c.names, name)
		return i, i >= 0
	}
	c.once.Do(func() {
		c.index = make(map[string]int, len(c.names))
		for i, v := range slices.Backward(c.names) {
			c.index[v] = i
		}
	})
	i, ok := c.index[name]
	return i, ok
}

// NewRow builds a row from column names and values, which must have the
// same length; it is meant for tests of code that consumes rows.
func NewRow(names []string, values []any) Row {
	if len(names) != len(values) {
		panic("reports: NewRow: names and values differ in length")
	}
	vals := slices.Clone(values)
	if vals == nil {
		vals = []any{}
	}
	return Row{cols: &columns{names: slices.Clone(names)}, src: &source{vals: vals}}
}

// Clone returns a copy of the row that shares no memory with its page.
func (r Row) Clone() Row {
	if r.src == nil || r.src.vals != nil {
		return r // NewRow's values are the caller's, not a page's
	}
	var b strings.Builder
	offs := make([]uint32, len(r.offs))
	for i := range r.offs {
		offs[i] = uint32(b.Len())
		b.WriteString(r.raw(i))
		b.WriteByte(',')
	}
	return Row{cols: r.cols, src: &source{text: b.String()}, offs: offs}
}

// raw returns the JSON text of value i of a row read from the service.
func (r Row) raw(i int) string {
	off := int(r.offs[i])
	return r.src.text[off:valueEnd(r.src.text, off)]
}

// Len returns the number of columns of the row.
func (r Row) Len() int {
	if r.src != nil && r.src.vals != nil {
		return len(r.src.vals)
	}
	return len(r.offs)
}

// Columns returns the column names in order.
func (r Row) Columns() []string {
	if r.cols == nil {
		return nil
	}
	return slices.Clone(r.cols.names)
}

// Column returns the name of column i.
func (r Row) Column(i int) string { return r.cols.names[i] }

// Value returns the value of column i.
func (r Row) Value(i int) any {
	if r.src != nil && r.src.vals != nil {
		return r.src.vals[i]
	}
	return valueOf(r.raw(i))
}

// text returns the value of column i as Text gives it.
func (r Row) text(i int) string {
	if r.src != nil && r.src.vals != nil {
		return formatValue(r.src.vals[i])
	}
	return textOf(r.raw(i))
}

// Values returns the values in column order.
func (r Row) Values() []any {
	vals := make([]any, r.Len())
	for i := range vals {
		vals[i] = r.Value(i)
	}
	return vals
}

// Get returns the value of the column named name, and whether the row has
// that column.
func (r Row) Get(name string) (any, bool) {
	if r.cols == nil {
		return nil, false
	}
	i, ok := r.cols.lookup(name)
	if !ok {
		return nil, false
	}
	return r.Value(i), true
}

// Text returns the value of the named column as text: strings as they
// are, numbers as sent, booleans as true/false, null or a missing column
// as "", nested values as JSON. It is what ExportCSV writes.
func (r Row) Text(name string) string {
	if r.cols == nil {
		return ""
	}
	i, ok := r.cols.lookup(name)
	if !ok {
		return ""
	}
	return r.text(i)
}

// All iterates over the columns in order, name and value.
func (r Row) All() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		for i := range r.Len() {
			if !yield(r.cols.names[i], r.Value(i)) {
				return
			}
		}
	}
}

// MarshalJSON encodes the row as a JSON object with its members in
// column order.
func (r Row) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := range r.Len() {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(r.cols.names[i])
		b.Write(k)
		b.WriteByte(':')
		if err := r.appendJSON(&b, i); err != nil {
			return nil, fmt.Errorf("reports: column %q: %w", r.cols.names[i], err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// appendJSON writes value i as JSON to b.
func (r Row) appendJSON(b *bytes.Buffer, i int) error {
	var v any
	if r.src.vals == nil {
		raw := r.raw(i)
		if utf8.ValidString(raw) {
			b.WriteString(raw) // valid JSON, checked when decoded
			return nil
		}
		v = valueOf(raw) // invalid UTF-8 becomes U+FFFD
	} else {
		v = r.src.vals[i]
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(raw)
	return nil
}

// UnmarshalJSON decodes a JSON object keeping its member order.
func (r *Row) UnmarshalJSON(b []byte) error {
	d := &scanner{s: string(b)}
	row, err := d.row()
	if err == nil {
		err = d.end()
	}
	if err != nil {
		return fmt.Errorf("reports: decoding row: %w", err)
	}
	*r = row
	return nil
}

// formatValue renders a value as CSV cell text.
func formatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	}
}
