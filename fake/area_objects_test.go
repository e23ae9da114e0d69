package fake_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake"
)

// objectsRaw sends a raw request with a token of a client limited to scopes
// (every scope when none) and returns status and decoded body.
func objectsRaw(t *testing.T, srv *fake.Server, token, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(raw, &m)
	return resp.StatusCode, m
}

func objectsToken(t *testing.T, srv *fake.Server, id, secret string) string {
	t.Helper()
	resp, err := http.Post(srv.URL+"/oauth/token", "application/json",
		strings.NewReader(`{"grant_type":"client_credentials","client_id":"`+id+`","client_secret":"`+secret+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	json.NewDecoder(resp.Body).Decode(&tok)
	if tok.AccessToken == "" {
		t.Fatalf("no token for %s (status %d)", id, resp.StatusCode)
	}
	return tok.AccessToken
}

func TestObjectsRoutesBadInput(t *testing.T) {
	srv := fake.NewServer(fake.WithClient("all", "s1"), fake.WithClient("bulk-only", "s2", "bulk"), fake.WithScopeChecks())
	defer srv.Close()
	tok := objectsToken(t, srv, "all", "s1")
	id := srv.AddObject(fake.Object{ID: "o1", Type: "opportunity"})
	audit := "/app/v1/object/" + id + "/audit"
	ext := "/app/v1/object/" + id + "/external_id"

	for _, tc := range []struct {
		name, token, method, path, body string
		status                          int
		msg                             string
	}{
		{"no token", "", "PATCH", audit, `{}`, 401, "Authorization"},
		{"bad token", "nope", "GET", ext, ``, 401, "unknown access token"},
		{"scope", objectsToken(t, srv, "bulk-only", "s2"), "GET", ext, ``, 403, "objects"},
		{"malformed", tok, "PATCH", audit, `{"field_name":`, 400, "malformed JSON"},
		{"empty", tok, "PATCH", audit, ``, 400, "empty"},
		{"missing all", tok, "PATCH", audit, `{}`, 400, "field_name is required; status_code is required; message is required"},
		{"bad enum", tok, "PATCH", audit, `{"field_name":"partner_portal.integration_status","status_code":"DONE","message":"m"}`, 400, "status_code must be one of"},
		{"bad field", tok, "PATCH", audit, `{"field_name":"other","status_code":"LINKED","message":"m"}`, 400, "field_name must be"},
		{"wrong type", tok, "PATCH", audit, `{"field_name":"partner_portal.integration_status","status_code":7,"message":"m"}`, 400, "status_code"},
		{"misspelled member", tok, "PATCH", audit, `{"field_name":"partner_portal.integration_status","statuscode":"LINKED","status_code":"LINKED","message":"m"}`, 400, `unknown member "statuscode" (the published member is "status_code")`},
		{"ext misspelled member", tok, "PATCH", ext, `{"external_id":"e","fieldname":"a.b"}`, 400, `unknown member "fieldname" (the published member is "field_name")`},
		{"unknown object", tok, "PATCH", "/app/v1/object/zz/audit", `{"field_name":"partner_portal.integration_status","status_code":"LINKED","message":"m"}`, 404, "not found"},
		{"ext missing id", tok, "PATCH", ext, `{"field_name":"a.b"}`, 400, "external_id is required"},
		{"ext bad field", tok, "PATCH", ext, `{"external_id":"e","field_name":"a..b"}`, 400, "dotted"},
		{"ext unknown object", tok, "GET", "/app/v1/object/zz/external_id", ``, 404, "not found"},
	} {
		status, body := objectsRaw(t, srv, tc.token, tc.method, tc.path, tc.body)
		msg, _ := body["message"].(string)
		if status != tc.status || !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: %d %v, want %d with %q", tc.name, status, body, tc.status, tc.msg)
		}
	}
	if o, _ := srv.Object(id); len(o.Fields) != 0 {
		t.Errorf("bad requests changed the object: %v", o.Fields)
	}
	if a := srv.Audits(id); len(a) != 0 {
		t.Errorf("bad requests were recorded: %v", a)
	}
}

func TestAuditSpecExample(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	tok := objectsToken(t, srv, fake.DefaultClientID, fake.DefaultClientSecret)
	srv.AddObject(fake.Object{ID: "0065g00000XyZ", Type: "opportunity"})
	status, body := objectsRaw(t, srv, tok, "PATCH", "/app/v1/object/0065g00000XyZ/audit",
		`{"field_name":"partner_portal.integration_status","integration_id":"","external_id":"","status_code":"CREATE_FAILED","message":"Missing required field"}`)
	if status != 200 || body["object_id"] != "0065g00000XyZ" || body["field_name"] != "partner_portal.integration_status" || body["status_code"] != "CREATE_FAILED" {
		t.Fatalf("%d %v", status, body)
	}
}
