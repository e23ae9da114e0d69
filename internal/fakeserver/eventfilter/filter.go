// Package eventfilter parses and evaluates the filter expressions of event
// subscriptions as the fake does. The fake uses it at registration and for
// every delivery decision; the events package's tests check the SDK's
// filter builder against it.
package eventfilter

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/partnerapi/partner-go/internal/text"
)

// Filter is a parsed subscription filter expression. The filter
// language of event subscriptions, as the fake parses it (at most 16 KiB,
// parentheses nested at most 32 deep):
//
//	filter     = term { "AND" term }
//	term       = "(" filter ")" | comparison
//	comparison = field op value | field "in" "[" value { "," value } "]"
//	op         = "=" | "!=" | ">" | "<" | ">=" | "<="
//	field      = name { "." name }        name = [A-Za-z_][A-Za-z0-9_-]*
//	value      = string | number | "true" | "false"
//
// Keywords (AND, in) are matched without regard to case. Strings are in
// double quotes; inside them `"` and `\` are escaped with a backslash and
// the JSON escapes \b \f \n \r \t \/ \uXXXX are understood. Numbers follow
// the JSON number syntax. Blanks between tokens are ignored.
//
// Evaluation against an object's fields (dotted names reach nested
// members):
//   - a missing field (absent or null) satisfies only "!=";
//   - a string value compares with the field's text, the same text a
//     delivery carries (10000 for the number 10000, true for a boolean);
//     ordering is by bytes;
//   - a number compares numerically with a number field or a string field
//     holding a JSON number;
//   - a boolean compares with a boolean field or the strings "true" and
//     "false"; booleans are not ordered (the parser refuses < with them);
//   - values that cannot be compared are unequal, and unordered;
//   - "!=" is exactly the negation of "=", and "in" is "=" with any
//     member of the list.
type Filter struct {
	root evNode
}

// Limits of the filter language in the fake.
const (
	evMaxFilterLen   = 16 << 10
	evMaxFilterDepth = 32
)

// Parse parses a subscription filter expression as the fake's
// registration does. Tests can use it to check what a filter matches.
func Parse(expr string) (*Filter, error) {
	if len(expr) > evMaxFilterLen {
		return nil, fmt.Errorf("filter is longer than %d bytes", evMaxFilterLen)
	}
	if !utf8.ValidString(expr) {
		return nil, errors.New("filter is not valid UTF-8")
	}
	p := &evParser{src: expr}
	p.next()
	root, err := p.parseAnd(0)
	if err != nil {
		return nil, err
	}
	if p.tok.kind != evTokEOF {
		return nil, p.errorf("expected AND or the end of the filter, found %s", p.tok)
	}
	return &Filter{root: root}, nil
}

// Match reports whether an object with these fields satisfies the filter.
// Fields nest as in Object.Fields; dotted names reach nested members.
func (f *Filter) Match(fields map[string]any) bool { return f.root.match(fields) }

// String returns the filter in canonical form: comparisons as
// `field op value`, each operand of AND in parentheses, strings quoted as
// described above, numbers as written.
func (f *Filter) String() string {
	var b strings.Builder
	f.root.write(&b)
	return b.String()
}

type evNode interface {
	match(fields map[string]any) bool
	write(b *strings.Builder)
}

type evAndNode []evNode

func (n evAndNode) match(fields map[string]any) bool {
	for _, c := range n {
		if !c.match(fields) {
			return false
		}
	}
	return true
}

func (n evAndNode) write(b *strings.Builder) {
	for i, c := range n {
		if i > 0 {
			b.WriteString(" AND ")
		}
		b.WriteByte('(')
		c.write(b)
		b.WriteByte(')')
	}
}

type evValueKind int

const (
	evString evValueKind = iota
	evNumber
	evBool
)

type evValue struct {
	kind evValueKind
	text string // the string, or the number as written
	num  float64
	b    bool
}

func (v evValue) write(b *strings.Builder) {
	switch v.kind {
	case evString:
		text.QuoteLiteral(b, v.text)
	case evNumber:
		b.WriteString(v.text)
	case evBool:
		b.WriteString(strconv.FormatBool(v.b))
	}
}

type evCmpNode struct {
	field  string
	op     string // = != > < >= <= in
	values []evValue
}

func (n evCmpNode) write(b *strings.Builder) {
	b.WriteString(n.field)
	b.WriteByte(' ')
	b.WriteString(n.op)
	b.WriteByte(' ')
	if n.op != "in" {
		n.values[0].write(b)
		return
	}
	b.WriteByte('[')
	for i, v := range n.values {
		if i > 0 {
			b.WriteString(", ")
		}
		v.write(b)
	}
	b.WriteByte(']')
}

func (n evCmpNode) match(fields map[string]any) bool {
	got, ok := Lookup(fields, n.field)
	if !ok || got == nil {
		return n.op == "!="
	}
	switch n.op {
	case "in":
		for _, v := range n.values {
			if c, ok := evCompare(got, v); ok && c == 0 {
				return true
			}
		}
		return false
	case "=":
		c, ok := evCompare(got, n.values[0])
		return ok && c == 0
	case "!=":
		c, ok := evCompare(got, n.values[0])
		return !ok || c != 0
	}
	return n.ordered(got)
}

// ordered evaluates the ordering operators (>, <, >=, <=); booleans and
// values that cannot be compared are unordered.
func (n evCmpNode) ordered(got any) bool {
	c, ok := evCompare(got, n.values[0])
	if !ok || n.values[0].kind == evBool {
		return false
	}
	switch n.op {
	case ">":
		return c > 0
	case "<":
		return c < 0
	case ">=":
		return c >= 0
	default: // "<="
		return c <= 0
	}
}

// evCompare compares a field's value with a literal: -1, 0, +1,
// and false when they cannot be compared.
func evCompare(field any, v evValue) (int, bool) {
	switch v.kind {
	case evString:
		s, ok := Text(field)
		if !ok {
			return 0, false
		}
		return strings.Compare(s, v.text), true
	case evNumber:
		n, ok := evNumberOf(field)
		if !ok {
			return 0, false
		}
		switch {
		case n < v.num:
			return -1, true
		case n > v.num:
			return 1, true
		case n == v.num:
			return 0, true
		}
		return 0, false // NaN
	default:
		var b bool
		switch t := field.(type) {
		case bool:
			b = t
		case string:
			switch t {
			case "true":
				b = true
			case "false":
			default:
				return 0, false
			}
		default:
			return 0, false
		}
		if b == v.b {
			return 0, true
		}
		return 1, true
	}
}

// evNumberOf reads a field as a number: a Go number, or a string holding a
// JSON number.
func evNumberOf(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case float32:
		return float64(t), true
	case int:
		return float64(t), true
	case int8:
		return float64(t), true
	case int16:
		return float64(t), true
	case int32:
		return float64(t), true
	case int64:
		return float64(t), true
	case uint:
		return float64(t), true
	case uint8:
		return float64(t), true
	case uint16:
		return float64(t), true
	case uint32:
		return float64(t), true
	case uint64:
		return float64(t), true
	case string:
		if evScanNumber(t) != len(t) {
			return 0, false
		}
		n, err := strconv.ParseFloat(t, 64)
		return n, err == nil
	}
	return 0, false
}

// evScanNumber returns the length of the JSON number at the start of s,
// or 0 when there is none.
func evScanNumber(s string) int {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if n := evDigits(s[i:]); n > 0 {
		i += n
	} else {
		return 0
	}
	if i < len(s) && s[i] == '.' {
		n := evDigits(s[i+1:])
		if n == 0 {
			return 0
		}
		i += 1 + n
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		n := evScanExponent(s[i+1:])
		if n == 0 {
			return 0
		}
		i += 1 + n
	}
	return i
}

// evScanExponent returns the length of an exponent's sign and digits at
// the start of s, or 0 when there are no digits.
func evScanExponent(s string) int {
	j := 0
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	n := evDigits(s[j:])
	if n == 0 {
		return 0
	}
	return j + n
}

// evDigits returns how many ASCII digits s starts with.
func evDigits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// Lookup reads a dotted name from nested maps: a member named with the
// dots wins, then the first segment's object is searched for the rest.
// The fake reads its objects' fields with it too.
func Lookup(m map[string]any, name string) (any, bool) {
	if v, ok := m[name]; ok {
		return v, true
	}
	head, rest, found := strings.Cut(name, ".")
	if !found {
		return nil, false
	}
	sub, ok := m[head].(map[string]any)
	if !ok {
		return nil, false
	}
	return Lookup(sub, rest)
}

// Text renders a field value as the text a delivery carries:
// strings as they are, numbers in plain decimal, booleans as true/false,
// lists as JSON. It returns false for null.
func Text(v any) (string, bool) {
	switch t := v.(type) {
	case nil:
		return "", false
	case string:
		return t, true
	case bool:
		return strconv.FormatBool(t), true
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(t), 'f', -1, 32), true
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		b, _ := json.Marshal(t)
		return string(b), true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	return string(b), true
}
