package fakehttp

// What is wrong with a JSON body, in JSON's words, for the messages the
// fake and its admin API answer: their clients are written in any
// language, so a message names the published members and JSON's kinds of
// value, never a Go type or encoding/json's own text.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
)

// JSONKind says in JSON's words what a value of Go type t is written as.
func JSONKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a JSON object"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.String {
			return "an array of strings"
		}
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a JSON value"
}

// JSONProblem says what is wrong with a body that decoding with encoding/json
// refused with err: empty, malformed, a member (named by its JSON path) or
// the whole body of the wrong kind, or a member a strict decoder does not
// know. body names the published body for a body of the wrong kind ("" to
// leave it out); v, when not nil, is what the body was decoded into, so
// that an element of an array member of the wrong kind is named as one.
// ok is false when err is not such an error; msg is then empty.
func JSONProblem(err error, body string, v any) (msg string, ok bool) {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var big *http.MaxBytesError
	switch {
	case errors.Is(err, io.EOF):
		return "request body is empty", true
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON: the body ends inside a JSON value", true
	case errors.As(err, &big):
		return fmt.Sprintf("request body exceeds %d bytes", big.Limit), true
	case errors.As(err, &syn):
		return fmt.Sprintf("malformed JSON at byte %d: %s", syn.Offset, syn.Error()), true
	case errors.As(err, &typ):
		if typ.Field != "" && v != nil && isElement(reflect.TypeOf(v), typ.Field, typ.Type) {
			return fmt.Sprintf("every element of member %q must be %s, not %s", typ.Field, JSONKind(typ.Type), typ.Value), true
		}
		if typ.Field != "" {
			return fmt.Sprintf("member %q must be %s, not %s", jsonPath(typ.Field), JSONKind(typ.Type), typ.Value), true
		}
		if body != "" {
			return fmt.Sprintf("body must be %s (%s), not %s", JSONKind(typ.Type), body, typ.Value), true
		}
		return fmt.Sprintf("body must be %s, not %s", JSONKind(typ.Type), typ.Value), true
	}
	text := err.Error()
	if _, after, ok0 := strings.Cut(text, "json: unknown field "); ok0 {
		return "unknown member " + after, true
	}
	if strings.Contains(text, "json: ") {
		return "malformed JSON", true
	}
	return "", false
}

// isElement reports whether the member at the JSON path (names joined by
// ".") below Go type t is an array of elem, so that a value refused as
// an elem there was one of its elements.
func isElement(t reflect.Type, path string, elem reflect.Type) bool {
	for name := range strings.SplitSeq(path, ".") {
		t = deref(t)
		if isIndex(name) { // a Go release that names the element: "ids.1"
			if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
				return false
			}
			t = t.Elem()
			continue
		}
		for t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = deref(t.Elem())
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		f, ok := member(t, name)
		if !ok {
			return false
		}
		t = f
	}
	t = deref(t)
	return (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t.Elem() == elem
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// member is the type of struct t's member with JSON name name, matched
// as encoding/json matches it (case folded), through embedded structs.
func member(t reflect.Type, name string) (reflect.Type, bool) {
	for sf := range t.Fields() {
		tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if sf.Anonymous && tag == "" && deref(sf.Type).Kind() == reflect.Struct {
			if ft, ok := member(deref(sf.Type), name); ok {
				return ft, true
			}
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if tag == "" {
			tag = sf.Name
		}
		if strings.EqualFold(tag, name) {
			return sf.Type, true
		}
	}
	return nil, false
}

// jsonPath writes a member path as encoding/json names it ("a.b", or
// "a.1.b" in Go releases that name array elements) with the elements
// indexed as JavaScript would: "a[1].b".
func jsonPath(field string) string {
	var b strings.Builder
	for i, name := range strings.Split(field, ".") {
		switch {
		case isIndex(name) && i > 0:
			b.WriteString("[" + name + "]")
		case i > 0:
			b.WriteString("." + name)
		default:
			b.WriteString(name)
		}
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
