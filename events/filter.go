package events

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/partnerapi/partner-go/internal/text"
)

// Filter is a subscription filter expression: comparisons of object
// fields with values, "in" lists, joined with AND. Build it with Eq, Ne,
// Gt, Lt, Ge, Le, In and And; its String is what is sent as `filters`:
//
//	events.And(events.In("stage", "closed", "won", "lost"), events.Eq("sales_details.partner", "P1"))
//	// (stage in ["closed", "won", "lost"]) AND (sales_details.partner = "P1")
//
// Field names are dotted names whose parts start with a letter or an
// underscore and go on with letters, digits, underscores or hyphens
// (sales_details.crm_opportunity_id). Strings are written in double quotes
// with `"` and `\` escaped by a backslash and control characters as \n,
// \r, \t or \u00XX, so that no value can change the structure of the
// expression. Numbers are written in the JSON number syntax, booleans as
// true and false.
//
// How a filter is evaluated is the service's business; the interface shows
// only the syntax. Package internal/fakeserver/eventfilter documents how the fake evaluates it
// (Filter), a missing field included.
//
// A Filter built from an invalid part (a bad field name, a NaN, a string
// that is not UTF-8, an empty In list) carries the error: Err returns it
// and Service.Subscribe refuses it. The zero Filter is no filter at all.
// Filters are immutable values and safe to share.
type Filter struct {
	expr string
	err  error
}

// Value is what a field can be compared with: a string, a boolean or a
// number (including types defined on them).
type Value interface {
	~string | ~bool | Number
}

// Number is any Go number type.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr |
		~float32 | ~float64
}

// Ordered is what a field can be ordered against: a string or a number.
// Strings order byte by byte.
type Ordered interface {
	~string | Number
}

// Eq is `field = v`.
func Eq[V Value](field string, v V) Filter { return compare(field, "=", v) }

// Ne is `field != v`.
func Ne[V Value](field string, v V) Filter { return compare(field, "!=", v) }

// Gt is `field > v`.
func Gt[V Ordered](field string, v V) Filter { return compare(field, ">", v) }

// Lt is `field < v`.
func Lt[V Ordered](field string, v V) Filter { return compare(field, "<", v) }

// Ge is `field >= v`.
func Ge[V Ordered](field string, v V) Filter { return compare(field, ">=", v) }

// Le is `field <= v`.
func Le[V Ordered](field string, v V) Filter { return compare(field, "<=", v) }

// In is `field in [v1, v2, ...]`: the field equals one of the values. At
// least one value is required.
func In[V Value](field string, vs ...V) Filter {
	if err := checkField(field); err != nil {
		return Filter{err: err}
	}
	if len(vs) == 0 {
		return Filter{err: fmt.Errorf("filter: %s in []: at least one value is required", field)}
	}
	var b strings.Builder
	b.WriteString(field)
	b.WriteString(" in [")
	for i, v := range vs {
		if i > 0 {
			b.WriteString(", ")
		}
		if err := writeValue(&b, v); err != nil {
			return Filter{err: fmt.Errorf("filter: %s in [...]: %w", field, err)}
		}
	}
	b.WriteByte(']')
	return Filter{expr: b.String()}
}

// And is the conjunction of filters: each operand is put in parentheses.
// Zero operands are left out; And of a single operand is that operand, and
// And of none is the zero Filter.
//
// It returns a Filter, not a group as reports.And does: a subscriber's
// filter is one expression of the service's filter language, so a
// conjunction is an expression like its operands and nests in another And,
// Or or Not; a report's filter is a JSON tree whose groups hold field
// filters, which reports.And builds.
func And(fs ...Filter) Filter {
	var ops []Filter
	for _, f := range fs {
		if f.err != nil {
			return Filter{err: f.err}
		}
		if !f.IsZero() {
			ops = append(ops, f)
		}
	}
	switch len(ops) {
	case 0:
		return Filter{}
	case 1:
		return ops[0]
	}
	var b strings.Builder
	for i, f := range ops {
		if i > 0 {
			b.WriteString(" AND ")
		}
		b.WriteByte('(')
		b.WriteString(f.expr)
		b.WriteByte(')')
	}
	return Filter{expr: b.String()}
}

// Raw is a filter expression given as text, such as Subscriber.Filters or
// one kept in configuration. It is sent as it is; the service checks it.
func Raw(expr string) Filter { return Filter{expr: strings.TrimSpace(expr)} }

// String returns the expression as it is sent. A Filter with an error
// returns "" (Err tells why).
func (f Filter) String() string {
	if f.err != nil {
		return ""
	}
	return f.expr
}

// Err returns the reason the filter cannot be sent, or nil.
func (f Filter) Err() error { return f.err }

// IsZero reports whether f is the zero Filter, which matches everything.
func (f Filter) IsZero() bool { return f.expr == "" && f.err == nil }

// MarshalText returns the expression, or Err.
func (f Filter) MarshalText() ([]byte, error) {
	if f.err != nil {
		return nil, f.err
	}
	return []byte(f.expr), nil
}

func compare[V Value](field, op string, v V) Filter {
	if err := checkField(field); err != nil {
		return Filter{err: err}
	}
	var b strings.Builder
	b.WriteString(field)
	b.WriteByte(' ')
	b.WriteString(op)
	b.WriteByte(' ')
	if err := writeValue(&b, v); err != nil {
		return Filter{err: fmt.Errorf("filter: %s %s: %w", field, op, err)}
	}
	return Filter{expr: b.String()}
}

// checkField checks that name is a dotted field name.
func checkField(name string) error {
	if name == "" {
		return errors.New("filter: field name is required")
	}
	for part := range strings.SplitSeq(name, ".") {
		ok := part != ""
		for i := 0; ok && i < len(part); i++ {
			c := part[i]
			letter := c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
			ok = letter || (i > 0 && (c == '-' || ('0' <= c && c <= '9')))
		}
		if !ok {
			return fmt.Errorf("filter: field name %q is not a dotted name of letters, digits, '_' and '-'", name)
		}
	}
	return nil
}

func writeValue[V Value](b *strings.Builder, v V) error {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		return writeString(b, rv.String())
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(rv.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(rv.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		b.WriteString(strconv.FormatUint(rv.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		x := rv.Float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%v is not a number the filter can hold", x)
		}
		b.WriteString(strconv.FormatFloat(x, 'g', -1, rv.Type().Bits()))
	}
	return nil
}

// writeString writes s as a quoted filter string (text.Quote), refusing
// a string that is not valid UTF-8.
func writeString(b *strings.Builder, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("string %q is not valid UTF-8", s)
	}
	text.Quote(b, s)
	return nil
}
