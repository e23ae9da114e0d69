package fake

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/fakeserver/fakehttp"
)

func TestUsersCheckAttribute(t *testing.T) {
	srv, tok := scimTestServer(t, WithDemoData())
	srv.SetUserAttributes("Bob@Example.com", 7, "role", "viewer", "editor")
	srv.SetUserAttributes("nobody-else@example.com", 1, "role")
	if _, err := srv.AddUser(User{UserName: "carol@example.com"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, body string
		status     int
		want       string // response body (201) or error code and message part
	}{
		{"spec example", `{"email":"bob@example.com","namespace":7,"filter_value":{"attribute":"role","value":["editor","admin","editor"]}}`,
			201, `{"email":"bob@example.com","namespace":7,"filter_value":{"data":{"attribute":"role","value":["editor"]}}}`},
		{"other namespace", `{"email":"bob@example.com","namespace":8,"filter_value":{"attribute":"role","value":["editor"]}}`,
			201, `{"email":"bob@example.com","namespace":8,"filter_value":{"data":{"attribute":"role","value":[]}}}`},
		{"attribute names are exact", `{"email":"bob@example.com","namespace":7,"filter_value":{"attribute":"Role","value":["editor"]}}`,
			201, `{"email":"bob@example.com","namespace":7,"filter_value":{"data":{"attribute":"Role","value":[]}}}`},
		{"no values asked", `{"email":"BOB@example.com","namespace":7,"filter_value":{"attribute":"role"}}`,
			201, `{"email":"BOB@example.com","namespace":7,"filter_value":{"data":{"attribute":"role","value":[]}}}`},
		{"demo data", `{"email":"` + demo.UserEmail1 + `","namespace":1,"filter_value":{"attribute":"role","value":["partner_admin","viewer"]}}`,
			201, `{"email":"` + demo.UserEmail1 + `","namespace":1,"filter_value":{"data":{"attribute":"role","value":["partner_admin"]}}}`},
		{"SCIM user without attributes", `{"email":"carol@example.com","namespace":1,"filter_value":{"attribute":"role","value":["x"]}}`,
			201, `{"email":"carol@example.com","namespace":1,"filter_value":{"data":{"attribute":"role","value":[]}}}`},
		{"unknown email", `{"email":"zed@example.com","namespace":1,"filter_value":{"attribute":"role","value":["x"]}}`, 404, "not_found: zed@example.com"},
		{"missing email", `{"namespace":1,"filter_value":{"attribute":"role","value":["x"]}}`, 400, "invalid_request: email is required"},
		{"missing filter_value", `{"email":"bob@example.com","namespace":1}`, 400, "invalid_request: filter_value is required"},
		{"missing attribute", `{"email":"bob@example.com","namespace":1,"filter_value":{"value":["x"]}}`, 400, "invalid_request: filter_value.attribute is required"},
		{"namespace not a number", `{"email":"bob@example.com","namespace":"one","filter_value":{"attribute":"role"}}`, 400, `invalid_request: member "namespace" must be a whole number, not string`},
		{"malformed", `{"email":`, 400, "invalid_request: malformed JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := scimTestCall(t, srv, tok, "POST", "/users/v1/check-attribute", tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			if status == http.StatusCreated {
				if got := strings.TrimSpace(string(body)); got != tc.want {
					t.Errorf("body\n%s\nwant\n%s", got, tc.want)
				}
				return
			}
			var e fakehttp.APIError
			json.Unmarshal(body, &e)
			code, msg, _ := strings.Cut(tc.want, ": ")
			if e.Error != code || !strings.Contains(e.Message, msg) {
				t.Errorf("error %s, want %s", body, tc.want)
			}
		})
	}
	if got, ok := srv.userAttributes("BOB@example.com", 7, "role"); !ok || strings.Join(got, ",") != "viewer,editor" {
		t.Errorf("userAttributes = %v, %v", got, ok)
	}
}
