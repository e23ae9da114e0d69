package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The reading of the document's JSON form into the Checker's model. Each
// object is read with the members the checker understands; any other
// member, save an extension (x-...), is an error naming it, so that an
// edit of the contract cannot go unchecked unnoticed.

// parser reads one document.
type parser struct {
	root    map[string]any
	schemas map[string]*schema // components/schemas by name, as read
	all     []*schema          // every schema read
}

// decodeDocument decodes a JSON document, numbers kept as json.Number.
func decodeDocument(doc []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the document is not JSON (New reads the JSON form, internal/contract/openapi.json): %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("the document has more than one JSON value")
	}
	return object(v, "the document", "openapi", "info", "servers", "paths", "components", "security", "tags", "externalDocs")
}

// object returns v as a JSON object whose members are all in known or
// extensions; where names it in errors.
func object(v any, where string, known ...string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: not an object", where)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !strings.HasPrefix(k, "x-") && !slices.Contains(known, k) {
			return nil, fmt.Errorf("%s: %q is not understood by the checker", where, k)
		}
	}
	return m, nil
}

// extensions are the x- members of m.
func extensions(m map[string]any) map[string]any {
	ext := map[string]any{}
	for k, v := range m {
		if strings.HasPrefix(k, "x-") {
			ext[k] = v
		}
	}
	return ext
}

// refOf returns the target of v when v is a Reference Object, which may
// hold nothing else.
func refOf(v any, where string) (string, bool, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", false, nil
	}
	r, ok := m["$ref"]
	if !ok {
		return "", false, nil
	}
	s, ok := r.(string)
	if !ok || len(m) != 1 {
		return "", false, fmt.Errorf("%s: a $ref must be a string, alone in its object", where)
	}
	return s, true, nil
}

// components returns the components of one kind ("schemas").
func (p *parser) components(kind string) map[string]any {
	c, _ := p.root["components"].(map[string]any)
	m, _ := c[kind].(map[string]any)
	return m
}

func str(m map[string]any, key, where string) (string, error) {
	v, ok := m[key]
	if !ok {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: %s is not a string", where, key)
	}
	return s, nil
}

func strs(m map[string]any, key, where string) ([]string, error) {
	v, ok := m[key]
	if !ok {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: %s is not a list", where, key)
	}
	out := make([]string, len(list))
	for i, e := range list {
		if out[i], ok = e.(string); !ok {
			return nil, fmt.Errorf("%s: %s holds a value that is not a string", where, key)
		}
	}
	return out, nil
}

func boolean(m map[string]any, key, where string) (bool, error) {
	v, ok := m[key]
	if !ok {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%s: %s is not a boolean", where, key)
	}
	return b, nil
}

func number(m map[string]any, key, where string) (*float64, error) {
	v, ok := m[key]
	if !ok {
		return nil, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return nil, fmt.Errorf("%s: %s is not a number", where, key)
	}
	f, err := n.Float64()
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", where, key, err)
	}
	return &f, nil
}
