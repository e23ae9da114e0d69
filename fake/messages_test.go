package fake_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake/demo"
)

// goWords are marks of Go in a message: a package-qualified type, a
// struct, a strconv or encoding/json error text, "Go struct field".
var goWords = []string{"fake.", "struct", "strconv.", "json:", "Go "}

// TestWriteMessagesSpeakJSON feeds each write route (and the parameters
// of the routes that take them) a value of the wrong type, and wants a
// 400 whose message names what is wrong in the published member's name
// and JSON's words: a client in any language reads it, so no message
// names a Go type or repeats a Go library's error text.
func TestWriteMessagesSpeakJSON(t *testing.T) {
	w := newWire(t)
	audit := "/app/v1/object/" + demo.Opportunity1 + "/audit"
	extID := "/app/v1/object/" + demo.Opportunity1 + "/external_id"
	report := "/report/v1/" + strconv.FormatInt(demo.ReportPipeline, 10)
	users := "/api/scim/v2/Users"
	for _, tc := range []struct {
		method, path, body string
		want               string // in the message; alternatives split by "|" (Go releases differ)
		header             []string
	}{
		{"POST", "/oauth/token", `{"grant_type": 5}`, `"grant_type" must be a string, not number`, []string{"Authorization", ""}},
		{"DELETE", "/oauth/token", `{"token": 5}`, `"token" must be a string, not number`, []string{"Authorization", ""}},
		{"DELETE", "/oauth/token", `["t"]`, `body must be a JSON object`, []string{"Authorization", ""}},
		{"POST", "/event/v1/subscriber", `"x"`, `body must be a JSON object`, nil},
		{"POST", "/event/v1/subscriber", `{"event": 5, "name": "n"}`, `"event" must be an event kind`, nil},
		{"POST", "/event/v1/subscriber", `{"event": ["object.update"], "name": 1}`, `"name" must be a string, not number`, nil},
		{"POST", "/event/v1/subscriber", `{"event": ["object.update"], "name": "n", "webhook_settings": "http://x"}`, `"webhook_settings" must be a JSON object, not string`, nil},
		{"POST", "/event/v1/subscriber", `{"event": ["object.update"], "name": "n", "webhook_settings": {"callback_url": 1}}`, `"webhook_settings.callback_url" must be a string, not number`, nil},
		{"POST", "/event/v1/subscriber", `{"event": ["object.update"], "name": "n", "object_ids": "a"}`, `"object_ids" must be an array of strings, not string`, nil},
		{"POST", "/event/v1/subscriber", `{"event": ["object.update"], "name": "n", "webhook_settings": {"callback_url": "http://a b"}}`, `webhook_settings.callback_url`, nil},
		{"PATCH", audit, `"linked"`, `body must be a JSON object`, nil},
		{"PATCH", audit, `{"field_name": 1}`, `"field_name" must be a string, not number`, nil},
		{"PATCH", audit, `{"status_code": {}}`, `"status_code" must be`, nil},
		{"PATCH", extID, `{"external_id": 5}`, `"external_id" must be a string, not number`, nil},
		{"PATCH", extID, `[1]`, `body must be a JSON object`, nil},
		{"POST", "/users/v1/check-attribute", `{"email": true}`, `"email" must be a string, not bool`, nil},
		{"POST", users, `{"userName": 5}`, `userName must be a string, not number`, nil},
		{"POST", users, `{"userName": "a@example.com", "active": "yes"}`, `active must be true or false, not string`, nil},
		{"POST", users, `{"userName": "a@example.com", "emails": "a@example.com"}`, `emails must be an array, not string`, nil},
		{"POST", users, `{"userName": "a@example.com", "name": []}`, `name must be a JSON object, not array`, nil},
		{"PUT", users + "/u-1", `{"userName": "a@example.com", "active": 1}`, `active must be true or false, not number`, nil},
		{"POST", "/report/v1/list", `{"page": 1}`, `"page" must be a JSON object, not number`, nil},
		{"POST", "/report/v1/list", `{"page": {"number": "1", "size": 10}}`, `"page.number" must be a whole number, not string`, nil},
		{"POST", "/report/v1/list", `{"page": {"number": 0, "size": 1.5}}`, `"page.size" must be a whole number, not number 1.5`, nil},
		{"POST", report + "/data", `{"page": {"number": true, "size": 10}}`, `"page.number" must be a whole number, not bool`, nil},
		{"POST", report + "/data", `{"filters": "stage = won"}`, `"filters" must be a JSON object, not string`, nil},
		{"POST", report + "/data", `{"page": {"number": 0, "size": 10}`, `malformed JSON`, nil},
		{"POST", report + "/chart-data", `{"chartIds": "c1"}`, `"chartIds" must be an array, not string`, nil},
		{"POST", report + "/chart-metadata", `{"chartIds": ["c1"]}`, `every element of member "chartIds" must be a whole number, not string|member "chartIds[0]" must be a whole number, not string`, nil},
		{"POST", "/report/v1/x/data", `{}`, `reportId must be an integer, got "x"`, nil},
		{"POST", "/bulk/v1/bulkload?integration_id=" + demo.OpportunityIntegration + "&data_format=JSON", `{"name": "x"}`, `array`, nil},
		{"POST", "/bulk/v1/bulkload?integration_id=" + demo.OpportunityIntegration + "&data_format=JSON", `[{"name": "x"`, `malformed JSON`, nil},
		{"POST", "/bulk/v1/bulkload_opportunity?integration_id=" + demo.OpportunityIntegration + "&has_header_row=maybe", "name\nx\n", `has_header_row must be true or false, not "maybe"`, nil},
	} {
		status, body, _ := w.do(tc.method, tc.path, tc.body, tc.header...)
		var msg struct {
			Message     string `json:"message"`
			Detail      string `json:"detail"`
			Description string `json:"error_description"`
		}
		json.Unmarshal(body, &msg)
		text := msg.Message + msg.Detail + msg.Description
		if status != http.StatusBadRequest || text == "" {
			t.Errorf("%s %s %s: %d %s, want 400 with a message", tc.method, tc.path, tc.body, status, body)
			continue
		}
		if !slices.ContainsFunc(strings.Split(tc.want, "|"), func(w string) bool { return strings.Contains(text, w) }) {
			t.Errorf("%s %s %s: message %q, want it to say %q", tc.method, tc.path, tc.body, text, tc.want)
		}
		for _, g := range goWords {
			if strings.Contains(text, g) {
				t.Errorf("%s %s %s: message %q speaks Go (%q)", tc.method, tc.path, tc.body, text, g)
			}
		}
	}
}
