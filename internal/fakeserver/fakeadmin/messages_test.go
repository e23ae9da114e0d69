package fakeadmin_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake"
)

// TestAdminMessagesSpeakJSON: the admin API's clients are written in any
// language, so a body of the wrong shape is answered with a message in
// the admin API's member names and JSON's words, never a Go type,
// encoding/json's text or a Go package prefix.
func TestAdminMessagesSpeakJSON(t *testing.T) {
	t.Parallel()
	_, base := adminServer(t, func() *fake.Fake { return fake.New() })
	for _, tc := range []struct {
		method, path, body string
		want               string // alternatives split by "|" (Go releases differ)
	}{
		{"POST", "/_fake/faults", `{"status": "500"}`, `member "status" must be a whole number, not string`},
		{"POST", "/_fake/faults", `{"stauts": 500}`, `unknown member "stauts"`},
		{"POST", "/_fake/faults", `[]`, `body must be a JSON object, not array`},
		{"POST", "/_fake/clock/advance", `{"by": 90}`, `member "by" must be a string, not number`},
		{"PATCH", "/_fake/objects/opp-1", `{"fields": ["stage"]}`, `member "fields" must be a JSON object, not array`},
		{"POST", "/_fake/seed", `{"users": {}}`, `seed: member "users" must be an array, not object`},
		{"POST", "/_fake/seed", `{"userz": []}`, `seed: unknown member "userz"`},
		{"POST", "/_fake/seed", `{"users": [{"user_name": 5}]}`, `seed: member "users.user_name" must be a string, not number|seed: member "users[0].user_name" must be a string, not number`},
		{"POST", "/_fake/seed", `{"reports": [{"name": "x", "status": "LIVE"}]}`, `seed: report "x": unknown status "LIVE"`},
		{"POST", "/_fake/seed", `{}{}`, `seed: data after the JSON value`},
	} {
		st, body := call(t, tc.method, base+tc.path, tc.body)
		var e struct {
			Message string `json:"message"`
		}
		json.Unmarshal([]byte(body), &e)
		if st != 400 || !slices.ContainsFunc(strings.Split(tc.want, "|"), func(w string) bool { return strings.Contains(e.Message, w) }) {
			t.Errorf("%s %s %s: %d %s, want 400 saying %q", tc.method, tc.path, tc.body, st, body, tc.want)
		}
		for _, g := range []string{"fake.", "fake:", "struct", "strconv.", "json:", "Go "} {
			if strings.Contains(e.Message, g) {
				t.Errorf("%s %s %s: message %q speaks Go (%q)", tc.method, tc.path, tc.body, e.Message, g)
			}
		}
	}
}
