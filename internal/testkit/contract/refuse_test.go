package contract_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/internal/testkit/contract"
)

// TestNewRefusesWhatItDoesNotApply: a contract that uses a schema
// keyword, a format, a parameter location or style, a media type, a
// security scheme or a document feature the checker does not apply is
// refused, the error naming it, so that no edit of api/openapi.yaml goes
// unchecked unnoticed; the contract as it is loads.
func TestNewRefusesWhatItDoesNotApply(t *testing.T) {
	if _, err := contract.New(contract.JSONForm()); err != nil {
		t.Fatalf("the contract: %v", err)
	}
	var doc any
	if err := json.Unmarshal(contract.JSONForm(), &doc); err != nil {
		t.Fatal(err)
	}
	var (
		audit  = "paths|/app/v1/object/{object_id}/audit|patch"
		status = "paths|/bulk/v1/status/{integration_id}|get"
		bulk   = "paths|/bulk/v1/bulkload|post"
		person = "components|schemas|Person"
	)
	for _, tc := range []struct {
		at    string // the names of the members to the object, "|" between them
		set   string // the member set, and its JSON value
		value string
		want  string // in the error
	}{
		{person + "|properties|id", "pattern", `"^p-"`, "pattern"},
		{person + "|properties|id", "minLength", `1`, "minLength"},
		{person, "allOf", `[{"type": "object"}]`, "allOf"},
		{person, "anyOf", `[{"type": "object"}]`, "anyOf"},
		{person, "not", `{"type": "string"}`, "not"},
		{person, "discriminator", `{"propertyName": "id"}`, "discriminator"},
		{person + "|properties|id", "readOnly", `true`, "readOnly"},
		{person + "|properties|id", "format", `"date"`, "date"},
		{person + "|properties|id", "format", `"int64"`, "int64"},
		{person + "|properties|id", "type", `"null"`, "null"},
		{person + "|properties|id", "type", `["string", "null"]`, "type"},
		{person, "uniqueItems", `true`, "uniqueItems"},
		{person + "|properties|name", "$ref", `"#/components/schemas/Page"`, "$ref"},
		{status + "|parameters|0", "in", `"cookie"`, "cookie"},
		{status + "|parameters|0", "style", `"deepObject"`, "style"},
		{status + "|parameters|0", "explode", `false`, "explode"},
		{status + "|parameters|0", "allowEmptyValue", `true`, "allowEmptyValue"},
		{status + "|parameters|0", "content", `{"application/json": {}}`, "content"},
		{status + "|parameters|0|schema", "type", `"array"`, "array"},
		{audit + "|requestBody|content", "application/xml", `{"schema": {"type": "object"}}`, "application/xml"},
		{audit + "|requestBody|content|application/json", "encoding", `{}`, "encoding"},
		{bulk + "|requestBody|content|text/csv|schema", "format", `"byte"`, "byte"},
		{bulk + "|requestBody|content|text/csv|schema", "format", `null`, "text/csv"},
		{audit + "|responses|200", "headers", `{"X-Next": {"schema": {"type": "array", "items": {"type": "string"}}}}`, "array"},
		{audit + "|responses|200", "headers", `{"X-Next": {"style": "simple", "schema": {"type": "string"}}}`, "style"},
		{audit + "|responses|200", "headers", `{"X-Next": {"content": {"application/json": {}}}}`, "content"},
		{audit + "|responses|200", "headers", `[]`, "headers"},
		{audit + "|responses|200", "links", `{}`, "links"},
		{audit, "callbacks", `{}`, "callbacks"},
		{audit, "security", `[{"subscriptionKeyHeader": []}]`, "subscriptionKeyHeader"},
		{audit, "security", `[{"undeclared": []}]`, "undeclared"},
		{"paths|/report/v1/list", "servers", `[]`, "servers"},
		{"", "servers", `[{"url": "https://api.example.com/v1"}]`, "servers"},
		{"", "openapi", `"3.1.0"`, "3.1.0"},
		{"", "webhooks", `{}`, "webhooks"},
		{"components", "responses", `{}`, "responses"},
		{"paths", "/report/v1/{reportId:[0-9]+}/x", `{}`, "reportId:[0-9]+"},
	} {
		_, err := contract.New(edit(t, doc, tc.at, tc.set, tc.value))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %s: %s: New = %v, want an error naming %s", tc.at, tc.set, tc.value, err, tc.want)
		}
	}
	if _, err := contract.New([]byte("openapi: 3.0.3\n")); err == nil || !strings.Contains(err.Error(), "openapi.json") {
		t.Errorf("a YAML document: %v, want an error naming the JSON form", err)
	}
}

// edit returns the JSON text of doc with the member set of the object at
// ("|" between the names of the members leading to it, an index into a
// list given as a number) set to value (JSON; null removes it). doc is
// left as it was.
func edit(t *testing.T, doc any, at, set, value string) []byte {
	t.Helper()
	v := doc
	if at != "" {
		for name := range strings.SplitSeq(at, "|") {
			switch o := v.(type) {
			case map[string]any:
				v = o[name]
			case []any:
				i, err := strconv.Atoi(name)
				if err != nil || i >= len(o) {
					t.Fatalf("%s: no element %s", at, name)
				}
				v = o[i]
			}
		}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: not an object", at)
	}
	var x any
	if err := json.Unmarshal([]byte(value), &x); err != nil {
		t.Fatal(err)
	}
	old, had := obj[set]
	if x == nil {
		delete(obj, set)
	} else {
		obj[set] = x
	}
	b, err := json.Marshal(doc)
	if had {
		obj[set] = old
	} else {
		delete(obj, set)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}
