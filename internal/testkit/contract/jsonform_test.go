package contract

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/partnerapi/partner-go/api"
)

var update = flag.Bool("update", false, "rewrite openapi.json as the JSON form of api/openapi.yaml")

// TestJSONForm: internal/contract/openapi.json, which the Checker reads, is the JSON form of
// api/openapi.yaml, the document edited by hand. Run with -update to
// rewrite it.
func TestJSONForm(t *testing.T) {
	want, err := YAMLToJSON(api.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(openapiJSON, want) {
		return
	}
	if *update {
		if err := os.WriteFile(filepath.Join("..", "..", "contract", "openapi.json"), want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("rewrote internal/contract/openapi.json")
		return
	}
	t.Error("internal/contract/openapi.json is not the JSON form of api/openapi.yaml: " +
		"run go test ./internal/testkit/contract -run TestJSONForm -update")
}

// YAMLToJSON converts a YAML document to its JSON form: the same values,
// mapping keys written as strings, members sorted by name, indented by
// two spaces.
func YAMLToJSON(doc []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		return nil, err
	}
	v, err := jsonValue(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// jsonValue turns a decoded YAML value into one encoding/json writes as
// the same JSON value; a value JSON has no form for is an error.
func jsonValue(v any) (any, error) {
	switch v := v.(type) {
	case nil, bool, string, int, int64, uint64, float64:
		return v, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			var err error
			if out[i], err = jsonValue(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			var err error
			if out[k], err = jsonValue(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			key, ok := k.(string)
			if !ok {
				switch k.(type) {
				case int, int64, uint64, bool:
					key = fmt.Sprint(k)
				default:
					return nil, fmt.Errorf("mapping key %v of type %T", k, k)
				}
			}
			if _, dup := out[key]; dup {
				return nil, fmt.Errorf("mapping key %q twice", key)
			}
			var err error
			if out[key], err = jsonValue(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("value %v of type %T has no JSON form", v, v)
}
