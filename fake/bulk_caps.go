package fake

// The caps of a record once its nested members are flattened to dotted
// names, and of the object a load writes. A JSON record's members nest,
// and each leaf's dotted name repeats the names of the members above it:
// one 16 KiB member name over 40,000 members is 372 KB of JSON and 640 MB
// of dotted names. So a record is counted as the fake holds it, names
// included, before any name is built; the object a row writes is held to
// the same caps, since loads that each stay within them could otherwise
// grow one object past them (and every change of an object is flattened
// for its observers and deliveries).

import (
	"fmt"
	"strings"
)

const (
	// maxRecordFields caps the fields (leaves, by dotted name) of a
	// record and of the object a load writes: as many as a CSV record or
	// a worksheet row has columns.
	maxRecordFields = maxCSVFields
	// maxRecordBytes caps the bytes of a record's or an object's dotted
	// names and values together, as maxCSVRecord a CSV record's.
	maxRecordBytes = 1 << 20
)

// flatCount is the cost of a record or an object as dotted names: its
// leaves and the bytes of their names and values.
type flatCount struct{ fields, bytes int }

func (c flatCount) over() bool { return c.fields > maxRecordFields || c.bytes > maxRecordBytes }

// countFlat counts m's leaves as flatten would make them, without
// building their names, and stops once past either cap. The bytes count
// the prefix flatten builds for each nested member too (its dotted name
// and a dot), empty ones included: flatten holds the prefixes of every
// level above a leaf at once, so a deep chain of short names costs the
// square of its depth, and a record of members nested 9,000 deep
// (52 KB) took partnerfake to 161 MiB while its leaves counted 18 KB.
func countFlat(m map[string]any) flatCount {
	var c flatCount
	var walk func(prefix int, m map[string]any)
	walk = func(prefix int, m map[string]any) {
		for k, v := range m {
			if c.over() {
				return
			}
			if sub, ok := v.(map[string]any); ok {
				c.bytes += prefix + len(k) + 1
				walk(prefix+len(k)+1, sub)
				continue
			}
			c.fields++
			c.bytes += prefix + len(k) + valueBytes(v)
		}
	}
	walk(0, m)
	return c
}

// valueBytes is about the bytes of a leaf's value: a string's length,
// an array's elements (a nested object's names included), 1 for other
// scalars.
func valueBytes(v any) int {
	switch t := v.(type) {
	case string:
		return len(t)
	case []any:
		n := 1
		for _, x := range t {
			n += valueBytes(x)
		}
		return n
	case map[string]any:
		n := 1
		for k, x := range t {
			n += len(k) + valueBytes(x)
		}
		return n
	}
	return 1
}

// recordTooLarge is the message of a JSON record past a cap, or "".
func recordTooLarge(n int, start int64, c flatCount) string {
	switch {
	case c.fields > maxRecordFields:
		return fmt.Sprintf("JSON record %d (byte %d) has more than %d fields, nested members counted by dotted name (the fake's limit)", n, start, maxRecordFields)
	case c.bytes > maxRecordBytes:
		return fmt.Sprintf("JSON record %d (byte %d) holds more than %d bytes of field names and values, nested members counted by dotted name (the fake's limit)", n, start, maxRecordBytes)
	}
	return ""
}

// objectTooLarge says why writing fields (by dotted name) into an object
// holding cur would pass a cap, or "". It counts what the object would
// hold without building it: a field already there costs its new value
// instead of its old one, a new one its name and value.
func objectTooLarge(cur map[string]any, fields map[string]any) string {
	c := countFlat(cur)
	for name, v := range fields {
		if c.over() {
			break
		}
		if old, ok := lookupLeaf(cur, name); ok {
			c.bytes += valueBytes(v) - valueBytes(old)
			continue
		}
		c.fields++
		c.bytes += len(name) + valueBytes(v)
	}
	switch {
	case c.fields > maxRecordFields:
		return fmt.Sprintf("the object would hold more than %d fields (the fake's limit of an object a load writes)", maxRecordFields)
	case c.bytes > maxRecordBytes:
		return fmt.Sprintf("the object would hold more than %d bytes of field names and values (the fake's limit of an object a load writes)", maxRecordBytes)
	}
	return ""
}

// lookupLeaf returns the value at a dotted name of nested maps when it is
// a leaf (not a map).
func lookupLeaf(m map[string]any, name string) (any, bool) {
	for {
		head, rest, nested := strings.Cut(name, ".")
		v, ok := m[head]
		if !ok {
			return nil, false
		}
		if !nested {
			_, isMap := v.(map[string]any)
			return v, !isMap
		}
		if m, ok = v.(map[string]any); !ok {
			return nil, false
		}
		name = rest
	}
}
