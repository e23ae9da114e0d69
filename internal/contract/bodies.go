package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// mediaType is a media range a body may come as, and how it is read.
type mediaType struct {
	key    string // the media range, lower case
	kind   bodyKind
	schema *schema // nil: the body is not checked
}

// bodyKind is how a body is decoded before its schema is applied.
type bodyKind int

const (
	bodyJSON      bodyKind = iota // a JSON value
	bodyBytes                     // any bytes: a string of format binary
	bodyForm                      // application/x-www-form-urlencoded, members of type string
	bodyMultipart                 // multipart/form-data, parts of format binary
)

// jsonType is a structured syntax suffix of JSON (RFC 6839).
var jsonType = regexp.MustCompile(`^application/[a-z0-9.+-]+\+json$`)

// content reads a map of media ranges to Media Type Objects.
func (p *parser) content(v any, where string) ([]*mediaType, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s/content: not an object", where)
	}
	var out []*mediaType
	for _, key := range slices.Sorted(maps.Keys(m)) {
		at := where + "/content/" + key
		obj, err := object(m[key], at, "schema", "example")
		if err != nil {
			return nil, err
		}
		mt := &mediaType{key: strings.ToLower(key)}
		if slices.ContainsFunc(out, func(o *mediaType) bool { return o.key == mt.key }) {
			return nil, fmt.Errorf("%s: media type %q twice", where, key)
		}
		if raw, ok := obj["schema"]; ok {
			if mt.schema, err = p.parseSchema(raw, at+"/schema"); err != nil {
				return nil, err
			}
		}
		if mt.kind, err = kindOf(mt.key, mt.schema); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		out = append(out, mt)
	}
	return out, nil
}

// mediaKinds are the media ranges the checker reads, and how.
var mediaKinds = map[string]bodyKind{
	"application/json":                  bodyJSON,
	"application/x-www-form-urlencoded": bodyForm,
	"multipart/form-data":               bodyMultipart,
	"text/csv":                          bodyBytes,
	"text/plain":                        bodyBytes,
	"*/*":                               bodyBytes,
}

// kindOf is how a body of media range key and schema s is read, or an
// error when the checker does not understand it. A string of format
// binary is any bytes whatever the media type, as kin-openapi reads it.
func kindOf(key string, s *schema) (bodyKind, error) {
	kind, ok := mediaKinds[key]
	if !ok && jsonType.MatchString(key) {
		kind, ok = bodyJSON, true
	}
	switch {
	case !ok:
		return 0, fmt.Errorf("media type %q is not understood by the checker", key)
	case s == nil || isBinary(s):
		return bodyBytes, nil
	case readable(kind, s):
		return kind, nil
	}
	return 0, fmt.Errorf("media type %q: this schema of it is not understood by the checker", key)
}

// readable reports whether the checker reads a body of this kind with
// schema s: any JSON value; a form of strings; multipart files named by
// the properties of a closed list.
func readable(kind bodyKind, s *schema) bool {
	object := s.typ == "object" && len(s.oneOf) == 0
	switch kind {
	case bodyJSON:
		return true
	case bodyForm:
		return object && allProperties(s, isString)
	case bodyMultipart:
		return object && s.additional == nil && s.additionalSchema == nil && allProperties(s, isBinary)
	}
	return false // text and */* only as binary strings
}

func isBinary(s *schema) bool { return s.typ == "string" && s.format == "binary" }

func isString(s *schema) bool { return s.typ == "string" && len(s.oneOf) == 0 }

func allProperties(s *schema, f func(*schema) bool) bool {
	for _, p := range s.properties {
		if !f(p) {
			return false
		}
	}
	return true
}

// lookup finds the media type of a Content-Type: the media type itself,
// then without its parameters, then type/*, then */*; no Content-Type is
// */* (kin-openapi's Content.Get).
func lookup(content []*mediaType, contentType string) *mediaType {
	find := func(key string) *mediaType {
		i := slices.IndexFunc(content, func(m *mediaType) bool { return m.key == key })
		if i < 0 {
			return nil
		}
		return content[i]
	}
	if contentType == "" {
		return find("*/*")
	}
	ct := strings.ToLower(strings.TrimSpace(contentType))
	if m := find(ct); m != nil {
		return m
	}
	base, _, _ := strings.Cut(ct, ";")
	base = strings.TrimSpace(base)
	if m := find(base); m != nil {
		return m
	}
	typ, _, ok := strings.Cut(base, "/")
	if !ok {
		return nil
	}
	if m := find(typ + "/*"); m != nil {
		return m
	}
	return find("*/*")
}

// decode reads a body of this media type (contentType is the body's
// Content-Type) into the value its schema is applied to.
func (m *mediaType) decode(body []byte, contentType string) (any, error) {
	switch m.kind {
	case bodyJSON:
		// One JSON value; what follows it is not read.
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		err := dec.Decode(&v)
		return v, err
	case bodyForm:
		return m.decodeForm(body)
	case bodyMultipart:
		return m.decodeMultipart(body, contentType)
	}
	return string(body), nil
}

// decodeForm reads the members the schema declares of a form; a member
// sent several times counts with its first value that is not empty.
func (m *mediaType) decodeForm(body []byte) (any, error) {
	values, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, err
	}
	obj := map[string]any{}
	for name := range m.schema.properties {
		if vs := values[name]; len(vs) > 0 {
			obj[name] = firstValue(vs)
		}
	}
	return obj, nil
}

// decodeMultipart reads the parts of a form, each named by a property of
// the schema; a part sent several times counts with its first.
func (m *mediaType) decodeMultipart(body []byte, contentType string) (any, error) {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, err
	}
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	obj := map[string]any{}
	for {
		part, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			return obj, nil
		}
		if err != nil {
			return nil, err
		}
		name := part.FormName()
		if m.schema.properties[name] == nil {
			return nil, fmt.Errorf("part %s: undefined", name)
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return nil, fmt.Errorf("part %s: %w", name, err)
		}
		if _, ok := obj[name]; !ok {
			obj[name] = string(data)
		}
	}
}
