package fake

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Filters of report data and chart data. The interface shows the shape
// (a group with op AND/OR, nested groups, field filters with type, colId
// and filter{op, negate, values}) but not the semantics; the fake gives
// them this meaning:
//
//   - TEXT: EQUAL_TO and IN (equal to one of the values), IS_EMPTY (null
//     or ""), CONTAIN, START_WITH, END_WITH (case sensitive).
//   - TEXT_REPEATED and TEXT_PG_ARRAY: the same operators, matching when
//     any element matches; the value is a JSON array of strings or, for
//     TEXT_PG_ARRAY, also a PostgreSQL array literal such as "{a,b}" or
//     {"a,b",c,NULL} (read by PostgreSQL's rules: pgArray), whose NULL
//     elements match no value. IS_EMPTY matches no element ({} or []).
//   - BOOLEAN: EQUAL_TO ("true" or "false"), IS_EMPTY.
//   - NUMBER, DECIMAL, CURRENCY, DATE, DATE_TIME: EQUAL_TO, IN, IS_EMPTY,
//     GREATER_THAN, LESS_THAN, GREATER_THAN_OR_EQUAL_TO,
//     LESS_THAN_OR_EQUAL_TO, BETWEEN (two values, inclusive). Dates are
//     YYYY-MM-DD (DATE compares days) or RFC 3339.
//   - DATE_OFFSET and DATE_TIME_OFFSET: OFFSET with one or two integers,
//     days relative to the fake clock's now: [-7] is the last seven days up
//     to now, [0, 30] the next thirty, [-30, -7] between; IS_EMPTY.
//
// negate inverts the result of a field filter. Any other pair of type and
// operator is a 400 that names the pair.
//
// A filter is bounded, so that one request cannot buy unbounded CPU on a
// shared fake: at most maxFilterValues values in all (maxFilterValueBytes
// bytes), maxFilterNodes field filters and groups, nested at most
// maxReportFilterDepth deep. A larger filter is a 400 (invalid_filter) that says
// which limit it passed.
//
// colId names a column by its position, a decimal string ("0" is the
// first column), as the deployed service does; the fake also accepts a
// column's ID (Column.ID) as its own extension. A position wins over an
// ID that reads the same.

type filterGroup struct {
	Op           string        `json:"op"`
	Group        []filterGroup `json:"group"`
	FieldFilters []fieldFilter `json:"fieldFilters"`
}

type fieldFilter struct {
	Type   string     `json:"type"`
	ColID  string     `json:"colId"`
	Filter *fieldCond `json:"filter"`
}

type fieldCond struct {
	Op     string   `json:"op"`
	Negate bool     `json:"negate"`
	Values []string `json:"values"`
}

// predicate tells whether a row, as its values in column order, passes.
type predicate func(vals []any) bool

type filterKind int

const (
	kindText filterKind = iota
	kindRepeated
	kindBool
	kindNumber
	kindDate
	kindDateTime
	kindOffset
)

var filterKinds = map[string]filterKind{
	columnText: kindText, columnTextRepeated: kindRepeated, columnTextPGArray: kindRepeated,
	columnBoolean: kindBool, columnNumber: kindNumber, columnDecimal: kindNumber, columnCurrency: kindNumber,
	columnDate: kindDate, columnDateTime: kindDateTime, columnDateOffset: kindOffset, columnDateTimeOffset: kindOffset,
}

func knownColumnType(t string) bool { _, ok := filterKinds[t]; return ok }

var kindOps = map[filterKind][]string{
	kindText:     {"EQUAL_TO", "IN", "IS_EMPTY", "CONTAIN", "START_WITH", "END_WITH"},
	kindRepeated: {"EQUAL_TO", "IN", "IS_EMPTY", "CONTAIN", "START_WITH", "END_WITH"},
	kindBool:     {"EQUAL_TO", "IS_EMPTY"},
	kindNumber:   {"EQUAL_TO", "IN", "IS_EMPTY", "GREATER_THAN", "LESS_THAN", "GREATER_THAN_OR_EQUAL_TO", "LESS_THAN_OR_EQUAL_TO", "BETWEEN"},
	kindDate:     {"EQUAL_TO", "IN", "IS_EMPTY", "GREATER_THAN", "LESS_THAN", "GREATER_THAN_OR_EQUAL_TO", "LESS_THAN_OR_EQUAL_TO", "BETWEEN"},
	kindDateTime: {"EQUAL_TO", "IN", "IS_EMPTY", "GREATER_THAN", "LESS_THAN", "GREATER_THAN_OR_EQUAL_TO", "LESS_THAN_OR_EQUAL_TO", "BETWEEN"},
	kindOffset:   {"OFFSET", "IS_EMPTY"},
}

var knownOps = []string{"EQUAL_TO", "IS_EMPTY", "CONTAIN", "START_WITH", "END_WITH", "IN",
	"GREATER_THAN", "LESS_THAN", "GREATER_THAN_OR_EQUAL_TO", "LESS_THAN_OR_EQUAL_TO", "BETWEEN", "OFFSET"}

// compileFilter checks g against the report's columns and returns its
// predicate, or an error whose text is the 400 message.
func compileFilter(g *filterGroup, cols []Column, now time.Time) (predicate, error) {
	if g == nil {
		return nil, nil
	}
	var sz filterSize
	if err := sz.add(g, 1); err != nil {
		return nil, err
	}
	return compileGroup(g, cols, now, "filters")
}

// Bounds of a report filter (see the package comment above).
const (
	maxFilterValues      = 500
	maxFilterValueBytes  = 32 << 10
	maxFilterNodes       = 100
	maxReportFilterDepth = 8
)

// filterSize counts what a filter holds, failing as soon as it passes a bound.
type filterSize struct{ values, bytes, nodes int }

func (sz *filterSize) add(g *filterGroup, depth int) error {
	if depth > maxReportFilterDepth {
		return fmt.Errorf("filters nest more than %d groups deep", maxReportFilterDepth)
	}
	sz.nodes += 1 + len(g.FieldFilters)
	if sz.nodes > maxFilterNodes {
		return fmt.Errorf("filters hold more than %d groups and field filters", maxFilterNodes)
	}
	for _, ff := range g.FieldFilters {
		if ff.Filter == nil {
			continue
		}
		sz.values += len(ff.Filter.Values)
		for _, v := range ff.Filter.Values {
			sz.bytes += len(v)
		}
		if sz.values > maxFilterValues {
			return fmt.Errorf("filters hold more than %d values", maxFilterValues)
		}
		if sz.bytes > maxFilterValueBytes {
			return fmt.Errorf("filter values hold more than %d bytes", maxFilterValueBytes)
		}
	}
	for i := range g.Group {
		if err := sz.add(&g.Group[i], depth+1); err != nil {
			return err
		}
	}
	return nil
}

func compileGroup(g *filterGroup, cols []Column, now time.Time, where string) (predicate, error) {
	if g.Op != "AND" && g.Op != "OR" {
		return nil, fmt.Errorf("%s.op must be AND or OR, not %q", where, g.Op)
	}
	var parts []predicate
	for i, ff := range g.FieldFilters {
		p, err := compileField(ff, cols, now, fmt.Sprintf("%s.fieldFilters[%d]", where, i))
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	for i := range g.Group {
		p, err := compileGroup(&g.Group[i], cols, now, fmt.Sprintf("%s.group[%d]", where, i))
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	and := g.Op == "AND"
	return func(vals []any) bool {
		for _, p := range parts {
			if p(vals) != and {
				return !and
			}
		}
		return and
	}, nil
}

// columnIndex finds the column colID names: a position ("0", "1", ...)
// or, as the fake's extension, a Column.ID. It returns -1 for neither.
func columnIndex(cols []Column, colID string) int {
	if n, err := strconv.Atoi(colID); err == nil && n >= 0 && n < len(cols) && strconv.Itoa(n) == colID {
		return n
	}
	return slices.IndexFunc(cols, func(c Column) bool { return c.ID == colID })
}

func compileField(ff fieldFilter, cols []Column, now time.Time, where string) (predicate, error) {
	col := columnIndex(cols, ff.ColID)
	if ff.ColID == "" {
		return nil, fmt.Errorf("%s.colId is required", where)
	}
	if col < 0 {
		return nil, fmt.Errorf("%s: the report has no column %q", where, ff.ColID)
	}
	kind, ok := filterKinds[ff.Type]
	if !ok {
		return nil, fmt.Errorf("%s.type %q is not a filter type", where, ff.Type)
	}
	if ff.Filter == nil {
		return nil, fmt.Errorf("%s.filter is required", where)
	}
	c := *ff.Filter
	if !slices.Contains(knownOps, c.Op) {
		return nil, fmt.Errorf("%s.filter.op %q is not a filter operator", where, c.Op)
	}
	if !slices.Contains(kindOps[kind], c.Op) {
		return nil, fmt.Errorf("%s: filter type %s does not support operator %s", where, ff.Type, c.Op)
	}
	match, err := compileCond(kind, c, now)
	if err != nil {
		return nil, fmt.Errorf("%s (%s %s): %v", where, ff.Type, c.Op, err)
	}
	return func(vals []any) bool { return match(vals[col]) != c.Negate }, nil
}

func wantValues(c fieldCond, lo, hi int) error {
	n := len(c.Values)
	switch {
	case lo == hi && n != lo:
		return fmt.Errorf("needs exactly %d value(s), got %d", lo, n)
	case n < lo:
		return fmt.Errorf("needs at least %d value(s), got %d", lo, n)
	case hi >= 0 && n > hi:
		return fmt.Errorf("takes at most %d values, got %d", hi, n)
	}
	return nil
}

func compileCond(kind filterKind, c fieldCond, now time.Time) (func(v any) bool, error) {
	if c.Op == "IS_EMPTY" {
		return func(v any) bool { return isEmpty(kind, v) }, nil
	}
	if c.Op == "BETWEEN" {
		if err := wantValues(c, 2, 2); err != nil {
			return nil, err
		}
	} else if c.Op == "OFFSET" {
		if err := wantValues(c, 1, 2); err != nil {
			return nil, err
		}
	} else if err := wantValues(c, 1, -1); err != nil {
		return nil, err
	}
	switch kind {
	case kindText, kindRepeated:
		var test func(s, want string) bool
		switch c.Op {
		case "EQUAL_TO", "IN":
			test = func(s, want string) bool { return s == want }
		case "CONTAIN":
			test = strings.Contains
		case "START_WITH":
			test = strings.HasPrefix
		case "END_WITH":
			test = strings.HasSuffix
		}
		return func(v any) bool {
			for _, s := range textValues(kind, v) {
				for _, want := range c.Values {
					if test(s, want) {
						return true
					}
				}
			}
			return false
		}, nil
	case kindBool:
		want, err := strconv.ParseBool(c.Values[0])
		if err != nil || len(c.Values) != 1 {
			return nil, fmt.Errorf("needs one value, true or false")
		}
		return func(v any) bool { b, ok := v.(bool); return ok && b == want }, nil
	case kindNumber:
		return compileOrdered(c, parseNumber, toNumber)
	case kindDate:
		return compileOrdered(c, parseDay, toDay)
	case kindDateTime:
		return compileOrdered(c, parseInstant, toInstantNanos)
	case kindOffset:
		var days [2]int
		for i, s := range c.Values {
			n, err := strconv.Atoi(s)
			if err != nil {
				return nil, fmt.Errorf("value %q is not a whole number of days", s)
			}
			days[i] = n
		}
		if len(c.Values) == 1 {
			if days[0] < 0 {
				days = [2]int{days[0], 0}
			} else {
				days = [2]int{0, days[0]}
			}
		}
		from, to := now.AddDate(0, 0, days[0]), now.AddDate(0, 0, days[1])
		return func(v any) bool {
			t, ok := toInstant(v)
			return ok && !t.Before(from) && !t.After(to)
		}, nil
	}
	return nil, fmt.Errorf("unsupported")
}

// compileOrdered builds comparisons over values with a total order.
func compileOrdered[T interface{ ~float64 | ~int64 }](c fieldCond, parse func(string) (T, bool), conv func(any) (T, bool)) (func(v any) bool, error) {
	want := make([]T, len(c.Values))
	for i, s := range c.Values {
		x, ok := parse(s)
		if !ok {
			return nil, fmt.Errorf("value %q cannot be compared", s)
		}
		want[i] = x
	}
	var test func(x T) bool
	switch c.Op {
	case "EQUAL_TO", "IN":
		test = func(x T) bool { return slices.Contains(want, x) }
	case "GREATER_THAN":
		test = func(x T) bool { return x > want[0] }
	case "LESS_THAN":
		test = func(x T) bool { return x < want[0] }
	case "GREATER_THAN_OR_EQUAL_TO":
		test = func(x T) bool { return x >= want[0] }
	case "LESS_THAN_OR_EQUAL_TO":
		test = func(x T) bool { return x <= want[0] }
	case "BETWEEN":
		test = func(x T) bool { return x >= want[0] && x <= want[1] }
	}
	return func(v any) bool {
		x, ok := conv(v)
		return ok && test(x)
	}, nil
}

func isEmpty(kind filterKind, v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		if kind == kindRepeated {
			values, nulls, ok := pgArray(v)
			return ok && len(values)+nulls == 0
		}
		return v == ""
	case []any:
		return len(v) == 0
	}
	return false
}

// textValues gives the strings of a text cell: one for TEXT, the elements
// of a JSON array or a PostgreSQL array literal for the repeated types.
func textValues(kind filterKind, v any) []string {
	switch v := v.(type) {
	case string:
		if kind == kindRepeated {
			if values, _, ok := pgArray(v); ok {
				return values
			}
		}
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case float64:
		return []string{strconv.FormatFloat(v, 'f', -1, 64)}
	case bool:
		return []string{strconv.FormatBool(v)}
	}
	return nil
}

func parseNumber(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil
}

func toNumber(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case string:
		return parseNumber(v)
	}
	return 0, false
}

func parseInstant(s string) (int64, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UnixNano(), true
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t.UnixNano(), true
	}
	return 0, false
}

func toInstant(v any) (time.Time, bool) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, false
	}
	n, ok := parseInstant(s)
	return time.Unix(0, n), ok
}

func parseDay(s string) (int64, bool) {
	n, ok := parseInstant(s)
	if !ok {
		return 0, false
	}
	return time.Unix(0, n).UTC().Truncate(24*time.Hour).Unix() / 86400, true
}

func toDay(v any) (int64, bool) {
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	return parseDay(s)
}

func toInstantNanos(v any) (int64, bool) {
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	return parseInstant(s)
}
