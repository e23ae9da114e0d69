// Package jsonwords says what is wrong with a JSON body in JSON's words,
// for the messages the fake answers: its clients are written in any
// language, so a message names the published members and JSON's kinds of
// value, never a Go type or encoding/json's own text.
package jsonwords

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
)

// Kind says in JSON's words what a value of Go type t is written as.
func Kind(t reflect.Type) string {
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

// Problem says what is wrong with a body that decoding with encoding/json
// refused with err: empty, malformed, a member (named by its JSON path) or
// the whole body of the wrong kind, or a member a strict decoder does not
// know. body names the published body for a body of the wrong kind ("" to
// leave it out). ok is false when err is not such an error; msg is then
// empty.
func Problem(err error, body string) (msg string, ok bool) {
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
		if typ.Field != "" {
			return fmt.Sprintf("member %q must be %s, not %s", typ.Field, Kind(typ.Type), typ.Value), true
		}
		if body != "" {
			return fmt.Sprintf("body must be %s (%s), not %s", Kind(typ.Type), body, typ.Value), true
		}
		return fmt.Sprintf("body must be %s, not %s", Kind(typ.Type), typ.Value), true
	}
	text := err.Error()
	if i := strings.Index(text, "json: unknown field "); i >= 0 {
		return "unknown member " + text[i+len("json: unknown field "):], true
	}
	if strings.Contains(text, "json: ") {
		return "malformed JSON", true
	}
	return "", false
}
