package fake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// rowSet stores a report's rows compactly: every row pre-encoded as its
// JSON object, all in one buffer, with the end offset of each row. A
// million rows cost their JSON bytes and one int each: no map, no boxed
// value per cell; serving a page is a copy of a byte range.
//
// A rowSet is a value; snapshots share its arrays. Appending only writes
// past the end of the shared arrays, which no snapshot reads, so a view
// stays valid while its report grows; every other change builds a new
// rowSet.
type rowSet struct {
	buf  []byte
	ends []int
}

func (s rowSet) len() int { return len(s.ends) }

// object returns the JSON object of row i. The caller must not modify it.
func (s rowSet) object(i int) []byte {
	start := 0
	if i > 0 {
		start = s.ends[i-1] + 1 // skip the separating comma
	}
	return s.buf[start:s.ends[i]:s.ends[i]]
}

// rangeBytes returns rows [lo, hi) as one comma-separated byte range.
func (s rowSet) rangeBytes(lo, hi int) []byte {
	if lo >= hi {
		return nil
	}
	start := 0
	if lo > 0 {
		start = s.ends[lo-1] + 1
	}
	return s.buf[start:s.ends[hi-1]:s.ends[hi-1]]
}

func (s *rowSet) grow(n int) {
	s.ends = make([]int, 0, n)
	s.buf = make([]byte, 0, n*64)
}

// reserve makes room for n rows in all, each the size of those s holds
// on average and an eighth more, so that appending them copies the rows
// made so far at most once more.
func (s *rowSet) reserve(n int) {
	if len(s.ends) == 0 || n <= len(s.ends) {
		return
	}
	want := len(s.buf) / len(s.ends) * n
	want += want / 8
	if want > cap(s.buf) {
		s.buf = append(make([]byte, 0, want), s.buf...)
	}
}

// columnKeys pre-encodes `{"name":` and `,"name":` for each column.
func columnKeys(cols []Column) [][]byte {
	keys := make([][]byte, len(cols))
	for i, c := range cols {
		name := c.Name
		if name == "" {
			name = c.ID
		}
		k := []byte{','}
		if i == 0 {
			k[0] = '{'
		}
		k = appendString(k, name)
		keys[i] = append(k, ':')
	}
	return keys
}

// appendRow encodes vals (in column order) as one more row. The rows
// are separated by commas in buf so that a page is one byte range.
func (s rowSet) appendRow(keys [][]byte, vals []any) rowSet {
	if len(vals) != len(keys) {
		panic(fmt.Sprintf("fake: report row has %d values for %d columns", len(vals), len(keys)))
	}
	if len(s.ends) > 0 {
		s.buf = append(s.buf, ',')
	}
	if len(keys) == 0 {
		s.buf = append(s.buf, '{')
	}
	for i, v := range vals {
		s.buf = append(s.buf, keys[i]...)
		s.buf = appendValue(s.buf, v)
	}
	s.buf = append(s.buf, '}')
	s.ends = append(s.ends, len(s.buf))
	return s
}

func (s rowSet) appendRows(keys [][]byte, rows [][]any) rowSet {
	for _, r := range rows {
		s = s.appendRow(keys, r)
	}
	return s
}

// appendValue appends v as JSON.
func appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return appendString(b, v)
	case bool:
		return strconv.AppendBool(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int32:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case uint:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint64:
		return strconv.AppendUint(b, v, 10)
	case float64:
		return appendFloat(b, v)
	case float32:
		return appendFloat(b, float64(v))
	case json.Number:
		return append(b, v...)
	case time.Time:
		return appendString(b, v.Format(time.RFC3339Nano))
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			return append(b, "null"...)
		}
		return append(b, raw...)
	}
}

// appendFloat writes f the way encoding/json does.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		raw, _ := json.Marshal(f)
		return append(b, raw...)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// appendString writes s as a JSON string; plain ASCII is copied as is.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			raw, _ := json.Marshal(s)
			return append(b, raw...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// values decodes row i into its values in column order, numbers as
// float64, for filters and charts.
func (s rowSet) values(i int, cols []Column) ([]any, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(s.object(i)))
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	out := make([]any, len(cols))
	for j, c := range cols {
		out[j] = m[c.Name]
	}
	return out, nil
}
