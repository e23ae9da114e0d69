package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// A Finding is one place where an answer differs from what the contract
// declares, and so from what the fake answers.
type Finding struct {
	// At names the place: "status", "Content-Type", the header's name,
	// "body" (an answer that is not JSON), or a JSON pointer into the
	// body ("/results/0/name").
	At string
	// Want is what the contract declares there; Got is what the answer
	// holds ("none" for a member left out).
	Want, Got string
	// Reason is the checker's words for it.
	Reason string
}

// String says the finding in one line.
func (f Finding) String() string {
	return fmt.Sprintf("%s: the contract declares %s, the answer has %s", f.At, f.Want, f.Got)
}

// Findings checks an answer as CheckResponse does and returns each place
// where it breaks the contract, one Finding each: an undeclared status;
// a declared header missing or malformed; a media type not declared; a
// body that does not decode; every member of the body of the wrong type
// or value, missing though required, or not declared in a closed object.
// A status of x-any-operation-statuses that the operation does not
// declare itself is not checked (nil).
func (x *Exchange) Findings(status int, header http.Header, body []byte) []Finding {
	if x.c.anyStatus[status] && x.op.ownResponse(status) == nil {
		return nil
	}
	r := x.op.response(status)
	if r == nil {
		return []Finding{{At: "status", Want: "one of " + strings.Join(x.Statuses(), ", "), Got: strconv.Itoa(status),
			Reason: "response error: status is not supported"}}
	}
	var out []Finding
	for _, h := range r.headers {
		if err := h.checkAnswer(header); err != nil {
			got := "none"
			if v := header.Get(h.name); v != "" {
				got = strconv.Quote(v)
			}
			out = append(out, Finding{At: h.name, Want: "a " + h.schema.wanted(), Got: got, Reason: err.Error()})
		}
	}
	if len(r.content) == 0 {
		return out
	}
	ct := header.Get("Content-Type")
	mt := lookup(r.content, ct)
	switch {
	case mt == nil:
		return append(out, Finding{At: "Content-Type", Want: mediaKeys(r.content), Got: strconv.Quote(ct),
			Reason: fmt.Sprintf(responseWords.badType, ct)})
	case mt.schema == nil:
		return out
	}
	value, err := mt.decode(body, ct)
	if err != nil {
		return append(out, Finding{At: "body", Want: "a body of " + mt.key, Got: "a body that does not decode",
			Reason: fmt.Sprintf(responseWords.badDecode, err)})
	}
	var v validation
	mt.schema.validate(&v, value, nil)
	for _, e := range v.errs {
		at := e.at
		if e.member != "" {
			at = append(slices.Clone(at), e.member)
		}
		want, got := e.want, e.got
		if want == "" {
			want, got = "another value", "this one"
		}
		out = append(out, Finding{At: pointer(at), Want: want, Got: got, Reason: e.reason})
	}
	return out
}

// Statuses are the statuses the exchange's operation declares, in order.
func (x *Exchange) Statuses() []string {
	return slices.Sorted(maps.Keys(x.op.responses))
}

// FakeShape reports whether the answer of status is a shape of the
// fake's own (marked x-fake-extension): the service publishes none, so a
// deployment's body is not held to it.
func (x *Exchange) FakeShape(status int) bool {
	r := x.op.response(status)
	return r != nil && r.ext[ExtMark] != nil
}

// An Object is one JSON object of an answer whose schema lists its
// members: where it is (a JSON pointer whose array indices are "[]"), and
// the members it holds of those its schema lists, by name, each with its
// JSON type (TypeOf).
type Object struct {
	Path    string
	Members map[string]string
}

// Objects walks a JSON answer of status along its declared schema and
// returns each object of it whose schema lists members (a closed object,
// or one with properties), with the listed members it holds. Objects
// whose schema lists none (a report's rows, a JSON Schema) and values
// below a oneOf are not walked. A body that does not decode, or an answer
// without a JSON schema, has none.
func (x *Exchange) Objects(status int, body []byte) []Object {
	r := x.op.response(status)
	if r == nil {
		return nil
	}
	mt := lookup(r.content, "application/json")
	if mt == nil || mt.schema == nil || mt.kind != bodyJSON {
		return nil
	}
	value, err := mt.decode(body, "application/json")
	if err != nil {
		return nil
	}
	var out []Object
	walkObjects(mt.schema, value, "", &out)
	return out
}

// walkObjects adds the objects of value under s, at path, to out.
func walkObjects(s *schema, value any, path string, out *[]Object) {
	switch value := value.(type) {
	case map[string]any:
		if len(s.properties) == 0 || len(s.oneOf) > 0 {
			return
		}
		o := Object{Path: path, Members: map[string]string{}}
		for _, k := range slices.Sorted(maps.Keys(value)) {
			if p := s.properties[k]; p != nil {
				o.Members[k] = TypeOf(value[k])
				walkObjects(p, value[k], path+"/"+escapeToken(k), out)
			}
		}
		*out = append(*out, o)
	case []any:
		if s.items == nil || len(s.oneOf) > 0 {
			return
		}
		for _, e := range value {
			walkObjects(s.items, e, path+"/[]", out)
		}
	}
}

// pointer writes tokens as a JSON pointer ("" for the whole body is "/").
func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString("/" + escapeToken(t))
	}
	return b.String()
}

// escapeToken escapes a JSON pointer's token (RFC 6901).
func escapeToken(t string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(t)
}

func mediaKeys(content []*mediaType) string {
	keys := make([]string, len(content))
	for i, m := range content {
		keys[i] = strconv.Quote(m.key)
	}
	return strings.Join(keys, " or ")
}

// DecodeJSON decodes a JSON body as the checker does (numbers kept as
// json.Number), for TypeOf.
func DecodeJSON(body []byte) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	err := dec.Decode(&v)
	return v, err
}
