package reports

import (
	"errors"
	"fmt"
	"slices"
)

// GroupOp combines the members of a filter group.
type GroupOp string

// Group operators.
const (
	OpAnd GroupOp = "AND"
	OpOr  GroupOp = "OR"
)

// FieldType is the type of a field filter: how the column's values are
// compared.
type FieldType string

// Field filter types.
const (
	TypeText           FieldType = "TEXT"
	TypeTextRepeated   FieldType = "TEXT_REPEATED"
	TypeTextPGArray    FieldType = "TEXT_PG_ARRAY"
	TypeBoolean        FieldType = "BOOLEAN"
	TypeNumber         FieldType = "NUMBER"
	TypeDecimal        FieldType = "DECIMAL"
	TypeDate           FieldType = "DATE"
	TypeDateOffset     FieldType = "DATE_OFFSET"
	TypeDateTime       FieldType = "DATE_TIME"
	TypeDateTimeOffset FieldType = "DATE_TIME_OFFSET"
	TypeCurrency       FieldType = "CURRENCY"
)

var fieldTypes = []FieldType{TypeText, TypeTextRepeated, TypeTextPGArray, TypeBoolean, TypeNumber,
	TypeDecimal, TypeDate, TypeDateOffset, TypeDateTime, TypeDateTimeOffset, TypeCurrency}

// Operator is the comparison of a field filter.
type Operator string

// Field filter operators.
const (
	OpEqualTo              Operator = "EQUAL_TO"
	OpIsEmpty              Operator = "IS_EMPTY"
	OpContain              Operator = "CONTAIN"
	OpStartWith            Operator = "START_WITH"
	OpEndWith              Operator = "END_WITH"
	OpIn                   Operator = "IN"
	OpGreaterThan          Operator = "GREATER_THAN"
	OpLessThan             Operator = "LESS_THAN"
	OpGreaterThanOrEqualTo Operator = "GREATER_THAN_OR_EQUAL_TO"
	OpLessThanOrEqualTo    Operator = "LESS_THAN_OR_EQUAL_TO"
	OpBetween              Operator = "BETWEEN"
	OpOffset               Operator = "OFFSET"
)

var operators = []Operator{OpEqualTo, OpIsEmpty, OpContain, OpStartWith, OpEndWith, OpIn, OpGreaterThan,
	OpLessThan, OpGreaterThanOrEqualTo, OpLessThanOrEqualTo, OpBetween, OpOffset}

// FilterGroup is the `filters` object of real-time data and chart data:
// field filters and nested groups combined by Op. Build one with And and
// Or:
//
//	f := reports.And(
//		reports.Text("1").EqualTo("won"),
//		reports.Or(
//			reports.Number("2").GreaterThan("10000"),
//			reports.Text("3").In("EMEA", "APAC"),
//		),
//	)
//
// A field filter names its column by the column's id (colId). The deployed
// service identifies columns by position, as decimal strings: "0" is the
// first column. Find a column's id by its name with Metadata.ColumnID
// rather than counting.
//
// Which operator applies to which type is the server's to decide (the
// interface does not list the pairs); the SDK checks that types and
// operators are known and that each operator gets a sensible number of
// values.
type FilterGroup struct {
	Op           GroupOp       `json:"op"`
	Group        []FilterGroup `json:"group,omitempty"`
	FieldFilters []FieldFilter `json:"fieldFilters,omitempty"`
}

// FieldFilter compares one column (ColID) with values.
type FieldFilter struct {
	// Type is the column's type, which decides how values compare.
	Type FieldType `json:"type"`
	// ColID is the column's id as the service names it: a position
	// such as "0" on the deployed service (see Metadata.ColumnID).
	ColID string `json:"colId"`
	// Filter is the comparison.
	Filter Condition `json:"filter"`
}

// Condition is the comparison of a field filter. Negate inverts it.
type Condition struct {
	Op     Operator `json:"op"`
	Negate bool     `json:"negate"`
	Values []string `json:"values"`
}

// Filter is a member of a filter group: a FieldFilter or a FilterGroup.
type Filter interface {
	addTo(g *FilterGroup)
}

func (f FieldFilter) addTo(g *FilterGroup) { g.FieldFilters = append(g.FieldFilters, f) }
func (f FilterGroup) addTo(g *FilterGroup) { g.Group = append(g.Group, f) }

// And returns a group that matches when every member matches. It builds
// the JSON tree a report's filter is (a group of field filters and
// groups), where events.And builds an expression of the subscription
// filter language: the two services' filters differ, and so do their
// builders' results.
func And(members ...Filter) FilterGroup { return group(OpAnd, members) }

// Or returns a group that matches when any member matches.
func Or(members ...Filter) FilterGroup { return group(OpOr, members) }

func group(op GroupOp, members []Filter) FilterGroup {
	g := FilterGroup{Op: op}
	for _, m := range members {
		if m != nil {
			m.addTo(&g)
		}
	}
	return g
}

// Field names a column to filter on by its id (a position such as "0" on
// the deployed service; see Metadata.ColumnID), compared as type t.
type Field struct {
	Type  FieldType
	ColID string
}

// Text, Number and the functions below name a column of their type by
// its id.
func Text(colID string) Field { return Field{TypeText, colID} }

// TextRepeated names a column of repeated text values.
func TextRepeated(colID string) Field { return Field{TypeTextRepeated, colID} }

// TextPGArray names a column of text array values.
func TextPGArray(colID string) Field { return Field{TypeTextPGArray, colID} }

// Boolean names a boolean column.
func Boolean(colID string) Field { return Field{TypeBoolean, colID} }

// Number names a numeric column.
func Number(colID string) Field { return Field{TypeNumber, colID} }

// Decimal names a decimal column.
func Decimal(colID string) Field { return Field{TypeDecimal, colID} }

// Currency names a currency column.
func Currency(colID string) Field { return Field{TypeCurrency, colID} }

// Date names a date column (values YYYY-MM-DD).
func Date(colID string) Field { return Field{TypeDate, colID} }

// DateTime names a date-time column (values RFC 3339).
func DateTime(colID string) Field { return Field{TypeDateTime, colID} }

// DateOffset names a date column compared relative to today (Offset).
func DateOffset(colID string) Field { return Field{TypeDateOffset, colID} }

// DateTimeOffset names a date-time column compared relative to now (Offset).
func DateTimeOffset(colID string) Field { return Field{TypeDateTimeOffset, colID} }

// Where returns the field filter comparing the column with op.
func (f Field) Where(op Operator, values ...string) FieldFilter {
	if values == nil {
		values = []string{}
	}
	return FieldFilter{Type: f.Type, ColID: f.ColID, Filter: Condition{Op: op, Values: values}}
}

// EqualTo matches values equal to one of vs.
func (f Field) EqualTo(vs ...string) FieldFilter { return f.Where(OpEqualTo, vs...) }

// In matches values in vs.
func (f Field) In(vs ...string) FieldFilter { return f.Where(OpIn, vs...) }

// IsEmpty matches empty values.
func (f Field) IsEmpty() FieldFilter { return f.Where(OpIsEmpty) }

// Contains matches text containing v.
func (f Field) Contains(v string) FieldFilter { return f.Where(OpContain, v) }

// StartsWith matches text starting with v.
func (f Field) StartsWith(v string) FieldFilter { return f.Where(OpStartWith, v) }

// EndsWith matches text ending with v.
func (f Field) EndsWith(v string) FieldFilter { return f.Where(OpEndWith, v) }

// GreaterThan matches values above v.
func (f Field) GreaterThan(v string) FieldFilter { return f.Where(OpGreaterThan, v) }

// LessThan matches values below v.
func (f Field) LessThan(v string) FieldFilter { return f.Where(OpLessThan, v) }

// AtLeast matches values greater than or equal to v.
func (f Field) AtLeast(v string) FieldFilter { return f.Where(OpGreaterThanOrEqualTo, v) }

// AtMost matches values less than or equal to v.
func (f Field) AtMost(v string) FieldFilter { return f.Where(OpLessThanOrEqualTo, v) }

// Between matches values from lo to hi.
func (f Field) Between(lo, hi string) FieldFilter { return f.Where(OpBetween, lo, hi) }

// Offset matches dates relative to now; the values' meaning (units,
// signs) is the server's.
func (f Field) Offset(vs ...string) FieldFilter { return f.Where(OpOffset, vs...) }

// Not returns the filter with its comparison inverted.
func (f FieldFilter) Not() FieldFilter {
	f.Filter.Negate = !f.Filter.Negate
	return f
}

// Validate checks what the SDK can know of a filter group before sending
// it: known operators and types, a column on every field filter, and the
// number of values each operator takes.
func (g *FilterGroup) Validate() error { return g.validate("filters") }

func (g *FilterGroup) validate(where string) error {
	if g.Op != OpAnd && g.Op != OpOr {
		return fmt.Errorf("partner: reports: %s.op must be AND or OR, not %q", where, g.Op)
	}
	var errs []error
	for i, ff := range g.FieldFilters {
		if err := ff.validate(fmt.Sprintf("%s.fieldFilters[%d]", where, i)); err != nil {
			errs = append(errs, err)
		}
	}
	for i := range g.Group {
		if err := g.Group[i].validate(fmt.Sprintf("%s.group[%d]", where, i)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (f FieldFilter) validate(where string) error {
	switch {
	case f.ColID == "":
		return fmt.Errorf("partner: reports: %s: colId is required", where)
	case !slices.Contains(fieldTypes, f.Type):
		return fmt.Errorf("partner: reports: %s: unknown filter type %q", where, f.Type)
	case !slices.Contains(operators, f.Filter.Op):
		return fmt.Errorf("partner: reports: %s: unknown operator %q", where, f.Filter.Op)
	}
	n := len(f.Filter.Values)
	switch f.Filter.Op {
	case OpIsEmpty:
		if n != 0 {
			return fmt.Errorf("partner: reports: %s: IS_EMPTY takes no values, got %d", where, n)
		}
	case OpBetween:
		if n != 2 {
			return fmt.Errorf("partner: reports: %s: BETWEEN takes 2 values, got %d", where, n)
		}
	case OpGreaterThan, OpLessThan, OpGreaterThanOrEqualTo, OpLessThanOrEqualTo, OpContain, OpStartWith, OpEndWith:
		if n != 1 {
			return fmt.Errorf("partner: reports: %s: %s takes 1 value, got %d", where, f.Filter.Op, n)
		}
	default:
		if n == 0 {
			return fmt.Errorf("partner: reports: %s: %s needs at least one value", where, f.Filter.Op)
		}
	}
	return nil
}
