package fake

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/partnerapi/partner-go/internal/fakeserver/eventfilter"
)

// fieldKind is the type bulk loads expect for a known field of an object
// type. A value of another type in a loaded row is an error naming the
// field; fields without a kind take any value.
type fieldKind string

// Field kinds.
const (
	// fieldText takes any scalar; numbers and booleans are stored as text.
	fieldText fieldKind = "text"
	// fieldNumber takes a JSON number or a string holding one (a CSV
	// cell); it is stored as a number.
	fieldNumber fieldKind = "number"
	// fieldDate takes a date, "2006-01-02", or an RFC 3339 timestamp,
	// stored as given.
	fieldDate fieldKind = "date"
	// fieldBool takes a JSON boolean or "true"/"false".
	fieldBool fieldKind = "bool"
)

// defaultFieldKinds are the known fields of the demo object types.
var defaultFieldKinds = map[string]map[string]fieldKind{
	"opportunity": {"amount": fieldNumber, "probability": fieldNumber, "close_date": fieldDate, "name": fieldText, "stage": fieldText},
	"account":     {"employees": fieldNumber, "annual_revenue": fieldNumber, "name": fieldText},
}

// SetBulkFieldKind declares the kind of a field (dotted name) of an object
// type, checked on every row a bulk load writes to that type; a value of
// another type in a loaded row is an error naming the field, and fields
// without a kind take any value. The kinds:
//
//   - "text" takes any scalar; numbers and booleans are stored as text;
//   - "number" takes a JSON number or a string holding one (a CSV cell),
//     stored as a number;
//   - "date" takes a date, "2006-01-02", or an RFC 3339 timestamp, stored
//     as given;
//   - "bool" takes a JSON boolean or "true"/"false".
//
// Out of the box, opportunities know amount and probability (numbers),
// close_date (a date), name and stage (text); accounts know employees and
// annual_revenue (numbers) and name (text). SetBulkFieldKind panics on
// another kind, a mistake of the test that calls it.
func (f *Fake) SetBulkFieldKind(objectType, field, kind string) {
	switch fieldKind(kind) {
	case fieldText, fieldNumber, fieldDate, fieldBool:
	default:
		panic(fmt.Sprintf("fake: SetBulkFieldKind: unknown kind %q (text, number, date or bool)", kind))
	}
	f.bulk.mu.Lock()
	defer f.bulk.mu.Unlock()
	if f.bulk.kinds[objectType] == nil {
		f.bulk.kinds[objectType] = map[string]fieldKind{}
	}
	f.bulk.kinds[objectType][field] = fieldKind(kind)
}

func (f *Fake) fieldKinds(objectType string) map[string]fieldKind {
	f.bulk.mu.Lock()
	defer f.bulk.mu.Unlock()
	out := make(map[string]fieldKind, len(f.bulk.kinds[objectType]))
	maps.Copy(out, f.bulk.kinds[objectType])
	return out
}

// missingKey is the error of a row without a value for the key field: the
// deployed service's words ("Missing value of key field"), followed by
// the field's name, and its column when columns are named by position.
func missingKey(in Integration, keyCol string) string {
	if keyCol != in.KeyField {
		return fmt.Sprintf("Missing value of key field %q (column %s)", in.KeyField, keyCol)
	}
	return fmt.Sprintf("Missing value of key field %q", in.KeyField)
}

// checkRecord validates rec for an integration: keyCol is the column that
// holds the key (the integration's key field, or "1" without a header
// row). It returns the key value and, when build is set, the fields to
// write by dotted name; or a message saying why the row is refused.
func checkRecord(in Integration, kinds map[string]fieldKind, keyCol string, rec record, build bool) (key string, fields map[string]any, msg string) {
	for i, col := range rec.cols {
		if col == keyCol {
			switch v := rec.vals[i].(type) {
			case string, float64, bool:
				key = scalarString(v)
			}
			break
		}
	}
	if key == "" {
		return "", nil, missingKey(in, keyCol)
	}
	if build {
		fields = make(map[string]any, len(rec.cols))
		fields[in.KeyField] = key
	}
	for i, col := range rec.cols {
		v := rec.vals[i]
		if s, ok := v.(string); ok && s == "" || v == nil || col == keyCol {
			continue // an empty cell or null changes nothing
		}
		if kind, ok := kinds[col]; ok {
			conv, err := convertField(kind, v)
			if err != "" {
				return key, nil, fmt.Sprintf("invalid value for field %q: %s", col, err)
			}
			v = conv
		}
		if build {
			fields[col] = v
		}
	}
	return key, fields, ""
}

// convertField checks v against kind and returns the value to store, or
// what is wrong with it.
func convertField(kind fieldKind, v any) (any, string) {
	switch kind {
	case fieldNumber:
		switch t := v.(type) {
		case float64:
			return t, ""
		case string:
			if n, err := strconv.ParseFloat(strings.TrimSpace(t), 64); err == nil {
				return n, ""
			}
		}
		return nil, fmt.Sprintf("%s is not a number", describe(v))
	case fieldDate:
		if s, ok := v.(string); ok {
			s = strings.TrimSpace(s)
			if _, err := time.Parse(time.DateOnly, s); err == nil {
				return s, ""
			}
			if _, err := time.Parse(time.RFC3339, s); err == nil {
				return s, ""
			}
		}
		return nil, fmt.Sprintf("%s is not a date (YYYY-MM-DD)", describe(v))
	case fieldBool:
		switch t := v.(type) {
		case bool:
			return t, ""
		case string:
			if b, err := strconv.ParseBool(strings.TrimSpace(t)); err == nil {
				return b, ""
			}
		}
		return nil, fmt.Sprintf("%s is not a boolean", describe(v))
	case fieldText:
		switch v.(type) {
		case string:
			return v, ""
		case float64, bool:
			return scalarString(v), ""
		}
		return nil, fmt.Sprintf("%s is not text", describe(v))
	}
	return v, ""
}

func describe(v any) string {
	switch t := v.(type) {
	case string:
		return strconv.Quote(t)
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprint(v)
}

// scalarString is the text form of a JSON scalar, used for key values.
func scalarString(v any) string {
	switch t := v.(type) {
	case string:
		return strings.TrimSpace(t)
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// stagedRow is a valid row waiting to be written.
type stagedRow struct {
	key    string
	fields map[string]any // by dotted name
}

// record returns the row as a record of its fields, for the data_row of
// an error.
func (r stagedRow) record() record {
	rec := record{cols: slices.Sorted(maps.Keys(r.fields))}
	rec.vals = make([]any, len(rec.cols))
	for i, c := range rec.cols {
		rec.vals[i] = r.fields[c]
		rec.size += len(c) + valueBytes(rec.vals[i])
	}
	return rec
}

type keyIndexEntry struct{ typ, field, value string }

// lookupKey returns the id of the object of typ whose field has value,
// building the index of (typ, field) on first use. The index follows the
// object store through an observer, so objects added or changed by tests
// or by other areas are found too.
func (f *Fake) lookupKey(typ, field, value string) (string, bool) {
	f.bulk.idxMu.Lock()
	defer f.bulk.idxMu.Unlock()
	pair := [2]string{typ, field}
	if !f.bulk.indexed[pair] {
		f.bulk.indexed[pair] = true
		for _, o := range f.Objects(typ) {
			if v, ok := o.Field(field); ok {
				if s := scalarString(v); s != "" {
					f.bulk.index[keyIndexEntry{typ, field, s}] = o.ID
				}
			}
		}
	}
	id, ok := f.bulk.index[keyIndexEntry{typ, field, value}]
	return id, ok
}

// observeObjects keeps the key index in step with the object store.
func (f *Fake) observeObjects(c objectChange) {
	f.bulk.idxMu.Lock()
	defer f.bulk.idxMu.Unlock()
	for pair := range f.bulk.indexed {
		if pair[0] != c.Object.Type {
			continue
		}
		field := pair[1]
		drop := func(fields map[string]any) {
			if v, ok := eventfilter.Lookup(fields, field); ok {
				e := keyIndexEntry{pair[0], field, scalarString(v)}
				if f.bulk.index[e] == c.Object.ID {
					delete(f.bulk.index, e)
				}
			}
		}
		switch c.Kind {
		case changeDelete:
			drop(c.Object.Fields)
		default:
			if c.Before != nil {
				drop(c.Before)
			}
			if v, ok := c.Object.Field(field); ok {
				if s := scalarString(v); s != "" {
					f.bulk.index[keyIndexEntry{pair[0], field, s}] = c.Object.ID
				}
			}
		}
	}
}

// applyRows upserts a batch of rows of a load into the object store, in
// order, and returns how many were written and how many were skipped
// because the stored object already held the same values; refused lists
// the rows (by index in rows) that would make their object pass the caps
// of an object a load writes, with why. Batches apply one at a time, so
// two rows with the same key never make two objects.
func (f *Fake) applyRows(in Integration, rows []stagedRow) (written, skipped int, refused []refusedRow) {
	f.bulk.applyMu.Lock()
	defer f.bulk.applyMu.Unlock()
	for i, row := range rows {
		id, found := f.lookupKey(in.ObjectType, in.KeyField, row.key)
		var cur Object
		if found {
			cur, found = f.Object(id)
		}
		if !found {
			if msg := objectTooLarge(nil, row.fields); msg != "" {
				refused = append(refused, refusedRow{i, msg})
				continue
			}
			fields := map[string]any{}
			for k, v := range row.fields {
				setPath(fields, k, v)
			}
			f.AddObject(Object{Type: in.ObjectType, IntegrationID: in.ID, Fields: fields})
			written++
			continue
		}
		if sameValues(cur, row.fields) {
			skipped++
			continue
		}
		if msg := objectTooLarge(cur.Fields, row.fields); msg != "" {
			refused = append(refused, refusedRow{i, msg})
			continue
		}
		f.updateObject(id, func(o *Object) {
			for k, v := range row.fields {
				setPath(o.Fields, k, v)
			}
		})
		written++
	}
	return written, skipped, refused
}

// refusedRow is a row of a batch that applyRows did not write, and why.
type refusedRow struct {
	index int
	msg   string
}

func sameValues(o Object, fields map[string]any) bool {
	for k, v := range fields {
		if cur, ok := o.Field(k); !ok || !reflect.DeepEqual(cur, v) {
			return false
		}
	}
	return true
}
