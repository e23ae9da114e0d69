package contract

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A schema is a Schema Object of the document, reduced to the keywords
// the checker applies (schemaKeys); parseSchema refuses any other.
type schema struct {
	typ        string // "" for any type
	format     string
	enum       []any // strings, json.Numbers and bools
	min, max   *float64
	nullable   bool
	properties map[string]*schema
	required   []string
	// additional is additionalProperties: nil when absent, else its
	// boolean; additionalSchema is its schema form.
	additional       *bool
	additionalSchema *schema
	items            *schema
	oneOf            []*schema
	ext              map[string]any
	// droppedBy names, for each property New dropped, the option of the
	// fake that adds it (dropOptionsOff).
	droppedBy map[string]string
	// empty: no keyword of s or below it constrains a value, so that it
	// takes any value but null (New sets it, isEmpty).
	empty bool
}

// schemaKeys are the keywords parseSchema understands; the annotations
// among them (description, example, default, title) check nothing, and
// default is never filled in.
var schemaKeys = []string{"type", "format", "enum", "minimum", "maximum", "nullable", "properties",
	"required", "additionalProperties", "items", "oneOf", "description", "example", "default", "title"}

// formats are the formats the checker knows, by type: the others of
// OpenAPI 3.0 (date, byte, ...) are refused rather than left unchecked.
var formats = map[string][]string{
	"integer": {"int32", "int64"},
	"number":  {"float", "double"},
	"string":  {"date-time", "binary"},
}

// parseSchema reads the schema v at where, following a $ref to
// components/schemas (a schema reached through several refs is one
// *schema, recursion included).
func (p *parser) parseSchema(v any, where string) (*schema, error) {
	ref, isRef, err := refOf(v, where)
	switch {
	case err != nil:
		return nil, err
	case isRef:
		return p.schemaRef(ref, where)
	}
	return p.readSchema(v, where, "")
}

// schemaRef is the schema a $ref names.
func (p *parser) schemaRef(ref, where string) (*schema, error) {
	name, ok := strings.CutPrefix(ref, "#/components/schemas/")
	if !ok {
		return nil, fmt.Errorf("%s: $ref %q: only #/components/schemas/ refs are understood here", where, ref)
	}
	if s := p.schemas[name]; s != nil {
		return s, nil
	}
	raw, ok := p.components("schemas")[name]
	if !ok {
		return nil, fmt.Errorf("%s: $ref %q: no such schema", where, ref)
	}
	return p.readSchema(raw, ref, name)
}

// readSchema reads the Schema Object v at where into a new schema; one
// of components/schemas (name) is known by its name before its
// subschemas are read, so that a $ref among them to it finds it.
func (p *parser) readSchema(v any, where, name string) (*schema, error) {
	m, err := object(v, where, schemaKeys...)
	if err != nil {
		return nil, err
	}
	s := &schema{ext: extensions(m)}
	if name != "" {
		p.schemas[name] = s
	}
	p.all = append(p.all, s)
	return s, p.fillSchema(s, m, where)
}

// fillSchema reads the keywords of m into s.
func (p *parser) fillSchema(s *schema, m map[string]any, where string) error {
	var err error
	if s.typ, err = str(m, "type", where); err != nil {
		return err
	}
	if s.format, err = str(m, "format", where); err != nil {
		return err
	}
	if s.typ == "" && s.format != "" || s.format != "" && !slices.Contains(formats[s.typ], s.format) {
		return fmt.Errorf("%s: format %q of type %q is not understood", where, s.format, s.typ)
	}
	if !slices.Contains([]string{"", "string", "integer", "number", "boolean", "object", "array"}, s.typ) {
		return fmt.Errorf("%s: type %q is not understood", where, s.typ)
	}
	if s.nullable, err = boolean(m, "nullable", where); err != nil {
		return err
	}
	if s.min, err = number(m, "minimum", where); err != nil {
		return err
	}
	if s.max, err = number(m, "maximum", where); err != nil {
		return err
	}
	if s.required, err = strs(m, "required", where); err != nil {
		return err
	}
	if err := s.readEnum(m, where); err != nil {
		return err
	}
	return p.fillSubschemas(s, m, where)
}

// readEnum reads enum, a list of scalars.
func (s *schema) readEnum(m map[string]any, where string) error {
	v, ok := m["enum"]
	if !ok {
		return nil
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return fmt.Errorf("%s: enum is not a list of values", where)
	}
	for _, e := range list {
		switch e.(type) {
		case string, json.Number, bool:
		default:
			return fmt.Errorf("%s: enum value %v is not a string, number or boolean", where, e)
		}
	}
	s.enum = list
	return nil
}

// fillSubschemas reads properties, additionalProperties, items and oneOf.
func (p *parser) fillSubschemas(s *schema, m map[string]any, where string) error {
	if v, ok := m["properties"]; ok {
		props, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: properties is not an object", where)
		}
		s.properties = make(map[string]*schema, len(props))
		for name, v := range props {
			var err error
			if s.properties[name], err = p.parseSchema(v, where+"/properties/"+name); err != nil {
				return err
			}
		}
	}
	switch v := m["additionalProperties"].(type) {
	case nil:
	case bool:
		s.additional = &v
	default:
		var err error
		if s.additionalSchema, err = p.parseSchema(v, where+"/additionalProperties"); err != nil {
			return err
		}
	}
	if v, ok := m["items"]; ok {
		var err error
		if s.items, err = p.parseSchema(v, where+"/items"); err != nil {
			return err
		}
	}
	if v, ok := m["oneOf"]; ok {
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return fmt.Errorf("%s: oneOf is not a list of schemas", where)
		}
		for i, e := range list {
			sub, err := p.parseSchema(e, fmt.Sprintf("%s/oneOf/%d", where, i))
			if err != nil {
				return err
			}
			s.oneOf = append(s.oneOf, sub)
		}
	}
	return nil
}

// constrains reports whether a keyword of s itself constrains a value.
func (s *schema) constrains() bool {
	return s.typ != "" || s.format != "" || len(s.enum) > 0 || s.nullable || s.min != nil || s.max != nil ||
		len(s.required) > 0 || s.additional != nil && !*s.additional
}

// isEmpty reports whether no keyword of s or of a schema below it
// constrains a value, on a graph that may be cyclic: a schema met again
// on the way down adds nothing of its own there.
func (s *schema) isEmpty(visiting map[*schema]bool) bool {
	if visiting[s] {
		return true
	}
	visiting[s] = true
	defer delete(visiting, s)
	if s.constrains() {
		return false
	}
	for _, sub := range append([]*schema{s.items, s.additionalSchema}, s.oneOf...) {
		if sub != nil && !sub.isEmpty(visiting) {
			return false
		}
	}
	for _, sub := range s.properties {
		if !sub.isEmpty(visiting) {
			return false
		}
	}
	return true
}

// A schemaError is a value that breaks a schema: the reason, where in
// the value (a JSON pointer's tokens), and, where the reason is a
// member's presence, type or value, what the schema wants there and what
// the value holds (Finding).
type schemaError struct {
	reason    string
	at        []string
	want, got string
	// member is the member of the object at at that the error is about,
	// when the reason names one that at does not reach (an unsupported
	// member).
	member string
}

func (e schemaError) Error() string {
	return fmt.Sprintf("%s (at /%s)", e.reason, strings.Join(e.at, "/"))
}

// validation collects the errors of a value against a schema.
type validation struct {
	errs []schemaError
}

func (v *validation) fail(at []string, format string, args ...any) {
	v.errs = append(v.errs, schemaError{reason: fmt.Sprintf(format, args...), at: slices.Clone(at)})
}

// differ is fail, saying what the schema wants at at and what the value
// holds.
func (v *validation) differ(at []string, want, got, format string, args ...any) {
	v.errs = append(v.errs, schemaError{reason: fmt.Sprintf(format, args...), at: slices.Clone(at), want: want, got: got})
}

// validate checks value (as encoding/json decodes it with UseNumber, or a
// parameter's int64, float64, bool or string) against s, as kin-openapi's
// Schema.VisitJSON does for OpenAPI 3.0.
func (s *schema) validate(v *validation, value any, at []string) {
	if value == nil && s.nullable {
		return
	}
	if s.empty {
		if value == nil {
			v.differ(at, "a value", "null", "Value is not nullable")
		}
		return
	}
	if len(s.oneOf) > 0 && (!s.validateOneOf(v, value, at) || value == nil) {
		return
	}
	if len(s.enum) > 0 && !slices.ContainsFunc(s.enum, func(e any) bool { return equalJSON(e, value) }) {
		v.differ(at, "one of "+enumText(s.enum), valueText(value), "value is not one of the allowed values %s", enumText(s.enum))
		return
	}
	s.validateValue(v, value, at)
}

// validateValue checks value against the keywords of its type.
func (s *schema) validateValue(v *validation, value any, at []string) {
	switch value := value.(type) {
	case nil:
		v.differ(at, s.wanted(), "null", "Value is not nullable")
	case bool:
		s.expect(v, "boolean", at)
	case json.Number, int64, float64:
		f, ok := asFloat(value)
		if !ok {
			v.fail(at, "cannot convert json.Number to float64")
			return
		}
		s.validateNumber(v, f, at)
	case string:
		s.validateString(v, value, at)
	case []any:
		s.validateArray(v, value, at)
	case map[string]any:
		s.validateObject(v, value, at)
	default:
		v.fail(at, "unhandled value of type %T", value)
	}
}

// validateOneOf reports whether value matches exactly one of s.oneOf,
// recording the error when it does not.
func (s *schema) validateOneOf(v *validation, value any, at []string) bool {
	matched := 0
	for _, sub := range s.oneOf {
		var try validation
		sub.validate(&try, value, at)
		if len(try.errs) == 0 {
			matched++
		}
	}
	switch {
	case matched == 0:
		v.fail(at, `value doesn't match any schema from "oneOf"`)
	case matched > 1:
		v.fail(at, `value matches more than one schema from "oneOf"`)
	}
	return matched == 1
}

// expect records a value of type got where s wants another type; any
// type passes a schema without one.
func (s *schema) expect(v *validation, got string, at []string) bool {
	if s.typ == "" || s.typ == got {
		return true
	}
	a := "a"
	if s.typ == "array" || s.typ == "object" || s.typ == "integer" {
		a = "an"
	}
	v.differ(at, s.typ, got, "value must be %s %s", a, s.typ)
	return false
}

func (s *schema) validateNumber(v *validation, f float64, at []string) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		v.fail(at, "NaN or Inf is not a JSON number")
		return
	}
	if s.typ != "" && s.typ != "integer" && s.typ != "number" {
		s.expect(v, "number", at)
		return
	}
	if s.typ == "integer" {
		if f != math.Trunc(f) {
			v.differ(at, "integer", "number", "value must be an integer")
		}
		if err := intFormat(s.format, f); err != nil {
			v.fail(at, `number doesn't match the format %q (%v)`, s.format, err)
		}
	}
	if s.min != nil && !(*s.min <= f) {
		v.fail(at, "number must be at least %g", *s.min)
	}
	if s.max != nil && !(*s.max >= f) {
		v.fail(at, "number must be at most %g", *s.max)
	}
}

// intFormat checks an integer's format: its range.
func intFormat(format string, f float64) error {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	switch format {
	case "int32":
		lo, hi = math.MinInt32, math.MaxInt32
	case "int64":
	default:
		return nil
	}
	var n int64
	switch {
	case f == float64(math.MaxInt64):
		n = math.MaxInt64
	case f >= float64(math.MinInt64) && f < float64(math.MaxInt64):
		n = int64(f)
	default:
		return fmt.Errorf("value should be between %d and %d", int64(math.MinInt64), int64(math.MaxInt64))
	}
	if n < lo || n > hi {
		return fmt.Errorf("value should be between %d and %d", lo, hi)
	}
	return nil
}

// dateTime is RFC 3339's date-time, as kin-openapi matches it before it
// checks that the month has the day.
var dateTime = regexp.MustCompile(`^[0-9]{4}-(0[1-9]|10|11|12)-(0[1-9]|[12][0-9]|3[01])T([0-1][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?(Z|(\+|-)([0-1][0-9]|2[0-3]):[0-5][0-9])$`)

func (s *schema) validateString(v *validation, str string, at []string) {
	if !s.expect(v, "string", at) {
		return
	}
	if s.format != "date-time" {
		return
	}
	if !dateTime.MatchString(str) {
		v.fail(at, `string doesn't match the format "date-time"`)
	} else if _, err := time.Parse(time.DateOnly, str[:len(time.DateOnly)]); err != nil {
		v.fail(at, `string doesn't match the format "date-time" (%v)`, err)
	}
}

func (s *schema) validateArray(v *validation, list []any, at []string) {
	if !s.expect(v, "array", at) || s.items == nil {
		return
	}
	for i, e := range list {
		s.items.validate(v, e, append(at, strconv.Itoa(i)))
	}
}

func (s *schema) validateObject(v *validation, obj map[string]any, at []string) {
	if !s.expect(v, "object", at) {
		return
	}
	// The members are checked in the map's order, which costs no sort;
	// when one fails, they are checked again in the order of their
	// names, so that the errors come in the same order on every run.
	n := len(v.errs)
	for k, value := range obj {
		s.validateMember(v, k, value, at)
	}
	if len(v.errs) > n {
		v.errs = v.errs[:n]
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			s.validateMember(v, k, obj[k], at)
		}
	}
	for _, k := range s.required {
		if _, ok := obj[k]; !ok {
			want := "a member"
			if p := s.properties[k]; p != nil {
				want = "a member of type " + p.wanted()
			}
			v.differ(append(at, k), want, "none", "property %q is missing", k)
		}
	}
}

// validateMember checks the member k of an object against s's property
// of that name, or its rule for members it does not name.
func (s *schema) validateMember(v *validation, k string, value any, at []string) {
	if p := s.properties[k]; p != nil {
		p.validate(v, value, append(at, k))
		return
	}
	if s.additional != nil && !*s.additional {
		want := "no such member"
		if o := s.droppedBy[k]; o != "" {
			want += " (it does with its option " + o + ")"
		}
		v.differ(at, want, "a member of type "+TypeOf(value), "property %q is unsupported", k)
		v.errs[len(v.errs)-1].member = k
		return
	}
	if s.additionalSchema != nil {
		s.additionalSchema.validate(v, value, append(at, k))
	}
}

// wanted names the type s wants, "any type" when it names none.
func (s *schema) wanted() string {
	if s.typ == "" {
		return "any type"
	}
	return s.typ
}

// TypeOf names the JSON type of a value as encoding/json decodes it with
// UseNumber: null, boolean, integer (a number without fraction or
// exponent), number, string, array or object.
func TypeOf(value any) string {
	switch value := value.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if strings.ContainsAny(string(value), ".eE") {
			return "number"
		}
		return "integer"
	case int64:
		return "integer"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", value)
}

// valueText is a scalar value as JSON, or its type.
func valueText(value any) string {
	switch value.(type) {
	case string, bool, json.Number, nil:
		b, _ := json.Marshal(value)
		if len(b) > 80 {
			return TypeOf(value)
		}
		return string(b)
	}
	return TypeOf(value)
}

// equalJSON compares an enum value with a decoded one: numbers by value.
func equalJSON(e, value any) bool {
	if _, ok := e.(json.Number); ok {
		x, okE := asFloat(e)
		y, ok := asFloat(value)
		return okE && ok && x == y
	}
	return e == value
}

// asFloat is a number as a float64: a json.Number that parses, an
// int64 or a float64.
func asFloat(value any) (float64, bool) {
	switch value := value.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(value), 64)
		return f, err == nil
	case int64:
		return float64(value), true
	case float64:
		return value, true
	}
	return 0, false
}

func enumText(enum []any) string {
	b, _ := json.Marshal(enum)
	return string(b)
}
