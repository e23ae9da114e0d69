package contract_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/internal/contract"
)

// sdkAgent is a User-Agent of the SDK's form.
const sdkAgent = "partner-go/test"

// serve sends one request through the Middleware around a handler that
// answers status, contentType and body, and returns the violations.
func serve(t *testing.T, mode contract.Mode, method, target, reqBody string, status int, contentType, body string) []*contract.Violation {
	t.Helper()
	c, err := contract.Load(mode)
	if err != nil {
		t.Fatal(err)
	}
	var got []*contract.Violation
	h := c.Middleware(func(v *contract.Violation) { got = append(got, v) })(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	req := httptest.NewRequest(method, target, strings.NewReader(reqBody))
	req.Header.Set("User-Agent", sdkAgent)
	req.Header.Set("Authorization", "Bearer t")
	if reqBody != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	h.ServeHTTP(httptest.NewRecorder(), req)
	return got
}

// TestContractCatchesInventions feeds the check exchanges that invent a
// route, a member, a status or a parameter value, each beside the same
// exchange as published, which must pass (so that a check that never
// fails cannot pass this test).
func TestContractCatchesInventions(t *testing.T) {
	const (
		jsonCT  = "application/json"
		kinds   = `{"events": [{"name": "object.create", "description": "An object was created."}]}`
		audit   = `{"field_name": "partner_portal.integration_status", "status_code": "LINKED", "message": "ok"}`
		auditOK = `{"object_id": "o-1", "field_name": "partner_portal.integration_status", "status_code": "LINKED"}`
	)
	for _, tc := range []struct {
		name                 string
		method, target, body string
		status               int
		contentType, answer  string
		want                 string // the violation's key, "" for none
	}{
		{"published kinds", "GET", "/event/v1/metadata/event", "", 200, jsonCT, kinds, ""},
		{"invented member", "GET", "/event/v1/metadata/event", "", 200, jsonCT,
			`{"events": [{"name": "object.create", "description": "x", "id": "7"}]}`, "GetEventList"},
		{"invented top-level member", "GET", "/event/v1/metadata/event", "", 200, jsonCT,
			`{"events": [], "next": "p2"}`, "GetEventList"},
		{"answer that is not JSON", "GET", "/event/v1/metadata/event", "", 200, "text/plain", "events", "GetEventList"},
		{"published audit", "PATCH", "/app/v1/object/o-1/audit", audit, 200, jsonCT, auditOK, ""},
		{"documented 404", "PATCH", "/app/v1/object/o-1/audit", audit, 404, jsonCT, `{"error": "not_found"}`, ""},
		{"invented status", "PATCH", "/app/v1/object/o-1/audit", audit, 409, jsonCT, `{"error": "conflict"}`, "audit_object"},
		{"invented success status", "PATCH", "/app/v1/object/o-1/audit", audit, 201, jsonCT, auditOK, "audit_object"},
		{"published view status", "GET", "/report/v1/view/453/status", "", 200, jsonCT, `{"viewStatus": "RUNNING"}`, ""},
		{"view status with an invented member", "GET", "/report/v1/view/453/status", "", 200, jsonCT,
			`{"viewStatus": "RUNNING", "progress": 50}`, "checkReportViewStatus"},
		{"view status with a member of a fake option", "GET", "/report/v1/view/453/status", "", 200, jsonCT,
			`{"viewStatus": "RUNNING", "viewId": 453}`, ""},
		{"view status without it", "GET", "/report/v1/view/453/status", "", 200, jsonCT, `{"status": "RUNNING"}`, "checkReportViewStatus"},
		{"invented route", "POST", "/bulk/v1/bulkload/file?integration_id=i", "", 200, jsonCT, `{}`, "POST /bulk/v1/bulkload/file"},
		{"invented connector route", "POST", "/event/v1/subscriber/object_integration_event", "", 200, jsonCT, `{}`,
			"POST /event/v1/subscriber/object_integration_event"},
		{"invented method", "DELETE", "/report/v1/list", "", 200, jsonCT, `{}`, "DELETE /report/v1/list"},
		{"missing required query, accepted", "GET", "/bulk/v1/status/i", "", 200, jsonCT, `{"status": "running"}`, "status"},
		{"missing required query, refused", "GET", "/bulk/v1/status/i", "", 400, jsonCT, `{"error": "invalid_request"}`, ""},
		{"parameter of the wrong type, accepted", "GET", "/bulk/v1/status/i?execution_id=e&include_errors=maybe", "", 200, jsonCT,
			`{"status": "running"}`, "status"},
		{"status outside its enum", "GET", "/bulk/v1/status/i?execution_id=e", "", 200, jsonCT, `{"status": "done"}`, "status"},
		{"transient status on any operation", "GET", "/bulk/v1/status/i?execution_id=e", "", 503, jsonCT, `{"error": "busy"}`, ""},
		{"audit body outside the enum, accepted", "PATCH", "/app/v1/object/o-1/audit",
			`{"field_name": "f", "status_code": "DONE", "message": "m"}`, 200, jsonCT, auditOK, "audit_object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := serve(t, contract.Lenient, tc.method, tc.target, tc.body, tc.status, tc.contentType, tc.answer)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("violations %v, want none", got)
			case tc.want != "" && (len(got) != 1 || got[0].Key != tc.want):
				t.Errorf("violations %v, want one of %s", got, tc.want)
			}
		})
	}
}

// TestStrictRefusesMembersOfFakeOptions: the strict check, for a fake
// without options, refuses the members that only an option adds, and
// accepts the published answer.
func TestStrictRefusesMembersOfFakeOptions(t *testing.T) {
	const target = "/report/v1/view/453/status"
	if got := serve(t, contract.Strict, "GET", target, "", 200, "application/json", `{"viewStatus": "RUNNING"}`); len(got) > 0 {
		t.Errorf("published answer: %v", got)
	}
	got := serve(t, contract.Strict, "GET", target, "", 200, "application/json", `{"viewStatus": "RUNNING", "viewId": 453}`)
	if len(got) != 1 || got[0].Key != "checkReportViewStatus" || !strings.Contains(got[0].Error(), "viewId") {
		t.Errorf("member of a fake option: %v", got)
	}
	users := `{"schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"], "totalResults": 0, "startIndex": 1, "itemsPerPage": 0, "Resources": []}`
	if got := serve(t, contract.Strict, "GET", "/api/scim/v2/Users", "", 200, "application/scim+json", users); len(got) != 1 {
		t.Errorf("itemsPerPage: %v", got)
	}
	if got := serve(t, contract.Lenient, "GET", "/api/scim/v2/Users", "", 200, "application/scim+json", users); len(got) != 0 {
		t.Errorf("itemsPerPage, lenient: %v", got)
	}
	// A read carries no name, displayName or emails (used on create).
	read := `{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "id": "u1", "userName": "a@example.com", "active": true,
		"displayName": "A", "meta": {"resourceType": "User"}}`
	if got := serve(t, contract.Strict, "GET", "/api/scim/v2/Users/u1", "", 200, "application/scim+json", read); len(got) != 1 ||
		got[0].Key != "getUser" || !strings.Contains(got[0].Error(), "displayName") {
		t.Errorf("read with displayName: %v", got)
	}
	if got := serve(t, contract.Lenient, "GET", "/api/scim/v2/Users/u1", "", 200, "application/scim+json", read); len(got) != 0 {
		t.Errorf("read with displayName, lenient: %v", got)
	}
}

// TestTestRequestsToNoOperationPass: a test's own request (not the SDK's
// User-Agent) to a path the contract lacks is let through, since tests
// probe the fake's refusals; the SDK's is a violation.
func TestTestRequestsToNoOperationPass(t *testing.T) {
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	var got []*contract.Violation
	h := c.Middleware(func(v *contract.Violation) { got = append(got, v) })(http.NotFoundHandler())
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/nope", nil))
	if len(got) != 0 {
		t.Errorf("test request: %v", got)
	}
	req := httptest.NewRequest("GET", "/nope", nil)
	req.Header.Set("User-Agent", sdkAgent)
	h.ServeHTTP(httptest.NewRecorder(), req)
	if len(got) != 1 || got[0].Key != "GET /nope" {
		t.Errorf("SDK request: %v", got)
	}
}
