package contract_test

import (
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/internal/testkit/contract"
)

// sdkAgent is a User-Agent of the SDK's form.
const sdkAgent = "partner-go/test"

// serve sends one request through the Middleware, for a fake with
// options on, around a handler that answers status, contentType and body,
// and returns the violations. The reference checker must agree
// (contract.Differential).
func serve(t *testing.T, options []string, method, target, reqBody string, status int, contentType, body string) []*contract.Violation {
	t.Helper()
	return serveWith(t, options, nil, method, target, reqBody, status, contentType, body)
}

// serveWith is serve with the answer's header besides its Content-Type.
func serveWith(t *testing.T, options []string, header http.Header, method, target, reqBody string, status int, contentType, body string) []*contract.Violation {
	t.Helper()
	c, err := contract.Load(options...)
	if err != nil {
		t.Fatal(err)
	}
	var got []*contract.Violation
	h := c.Middleware(func(v *contract.Violation) { got = append(got, v) })(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		maps.Copy(w.Header(), header)
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	h = contract.Differential(t, options...)(h)
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
			got := serve(t, nil, tc.method, tc.target, tc.body, tc.status, tc.contentType, tc.answer)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("violations %v, want none", got)
			case tc.want != "" && (len(got) != 1 || got[0].Key != tc.want):
				t.Errorf("violations %v, want one of %s", got, tc.want)
			}
		})
	}
}

// TestViolationsInNameOrder: an answer with several members the contract
// does not publish, in two objects, gets one violation that names them in
// the order of their names, the same on every run (the check walks a
// decoded object in the map's order until a member fails).
func TestViolationsInNameOrder(t *testing.T) {
	t.Parallel()
	const answer = `{"zz": 1, "events": [{"name": "object.create", "description": "x", "zeta": 1, "alpha": 2, "mid": 3}], "aa": 2}`
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	var got []*contract.Violation
	h := c.Middleware(func(v *contract.Violation) { got = append(got, v) })(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	}))
	var first string
	for i := range 10 {
		got = nil
		req := httptest.NewRequest("GET", "/event/v1/metadata/event", nil)
		req.Header.Set("User-Agent", sdkAgent)
		req.Header.Set("Authorization", "Bearer t")
		h.ServeHTTP(httptest.NewRecorder(), req)
		if len(got) != 1 {
			t.Fatalf("violations %v, want one", got)
		}
		msg := got[0].Error()
		if i == 0 {
			first = msg
			last := -1
			for _, m := range []string{`"aa"`, `"alpha"`, `"mid"`, `"zeta"`, `"zz"`} {
				at := strings.Index(msg, m)
				if at < last {
					t.Fatalf("%s: %s is missing or out of the order aa, alpha, mid, zeta, zz", msg, m)
				}
				last = at
			}
		}
		if msg != first {
			t.Fatalf("run %d says\n%s\nrun 1 said\n%s", i+1, msg, first)
		}
	}
}

// TestMembersOfFakeOptions: a member that only an option of the fake adds
// is accepted when the check is told that option is on, and refused
// otherwise (another option on, or none); the published answer passes
// either way.
func TestMembersOfFakeOptions(t *testing.T) {
	const (
		view   = "/report/v1/view/453/status"
		detail = "WithViewStatusDetail"
		full   = "WithSCIMFullResources"
		scimCT = "application/json"
	)
	users := `{"schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"], "totalResults": 0, "startIndex": 1, "itemsPerPage": 0, "Resources": []}`
	// A read carries no name, displayName or emails (used on create).
	read := `{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "id": "u1", "userName": "a@example.com", "active": true,
		"displayName": "A", "meta": {"resourceType": "User"}}`
	for _, tc := range []struct {
		name        string
		options     []string
		target, ct  string
		answer      string
		wantKey     string // the violation's key, "" for none
		wantMention string
	}{
		{"published view status", nil, view, "application/json", `{"viewStatus": "RUNNING"}`, "", ""},
		{"published view status, option on", []string{detail}, view, "application/json", `{"viewStatus": "RUNNING"}`, "", ""},
		{"view detail, no option", nil, view, "application/json", `{"viewStatus": "RUNNING", "viewId": 453}`, "checkReportViewStatus", "viewId"},
		{"view detail, another option", []string{full}, view, "application/json", `{"viewStatus": "RUNNING", "viewId": 453}`, "checkReportViewStatus", "viewId"},
		{"view detail, its option", []string{detail}, view, "application/json", `{"viewStatus": "RUNNING", "viewId": 453}`, "", ""},
		{"itemsPerPage, no option", nil, "/api/scim/v2/Users", scimCT, users, "searchViaGet", "itemsPerPage"},
		{"itemsPerPage, its option", []string{detail, full}, "/api/scim/v2/Users", scimCT, users, "", ""},
		{"read with displayName, another option", []string{detail}, "/api/scim/v2/Users/u1", scimCT, read, "getUser", "displayName"},
		{"read with displayName, its option", []string{full}, "/api/scim/v2/Users/u1", scimCT, read, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := serve(t, tc.options, "GET", tc.target, "", 200, tc.ct, tc.answer)
			switch {
			case tc.wantKey == "" && len(got) > 0:
				t.Errorf("violations %v, want none", got)
			case tc.wantKey != "" && (len(got) != 1 || got[0].Key != tc.wantKey || !strings.Contains(got[0].Error(), tc.wantMention)):
				t.Errorf("violations %v, want one of %s naming %s", got, tc.wantKey, tc.wantMention)
			}
		})
	}
	if _, err := contract.Load("WithViewStatusDetial"); err == nil || !strings.Contains(err.Error(), "WithViewStatusDetial") {
		t.Errorf("an option the contract does not mark: %v", err)
	}
}

// TestRoutesAndStatusesOfFakeOptions: an operation or a status marked
// with an option's name is in the contract only when that option is on.
func TestRoutesAndStatusesOfFakeOptions(t *testing.T) {
	const doc = `
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /a:
    get:
      operationId: a
      responses:
        "200": {description: ok}
        "409": {description: only with WithB, x-fake-extension: WithB}
  /b:
    get:
      operationId: b
      x-fake-extension: WithB
      responses:
        "200": {description: ok}
`
	jsonDoc, err := contract.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	exchange := func(options []string, target string, status int) error {
		c, err := contract.New(jsonDoc, options...)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := contract.NewReference(jsonDoc, options...)
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("GET", target, nil)
		contract.Agree(t, c, ref, req, nil, true, status, http.Header{}, nil)
		x, v := c.CheckRequest(req, nil)
		if v != nil {
			return v
		}
		if v := x.CheckResponse(status, http.Header{}, nil); v != nil {
			return v
		}
		return nil
	}
	for _, tc := range []struct {
		options []string
		target  string
		status  int
		ok      bool
	}{
		{nil, "/a", 200, true},
		{nil, "/a", 409, false},
		{[]string{"WithB"}, "/a", 409, true},
		{nil, "/b", 200, false},
		{[]string{"WithB"}, "/b", 200, true},
	} {
		if err := exchange(tc.options, tc.target, tc.status); (err == nil) != tc.ok {
			t.Errorf("options %v, GET %s answered %d: %v, want ok %v", tc.options, tc.target, tc.status, err, tc.ok)
		}
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
	h = contract.Differential(t)(h)
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

// TestBodiesPastTheCap: a body larger than the Middleware keeps is
// served as usual; a request's parameters are still checked, and an
// answer past the cap is not checked.
func TestBodiesPastTheCap(t *testing.T) {
	big := strings.Repeat("x", 9<<20)
	if got := serve(t, nil, "POST", "/bulk/v1/bulkload", `"`+big+`"`, 200, "application/json", `{}`); len(got) != 1 || got[0].Key != "bulkload" {
		t.Errorf("large load without integration_id, accepted: %v, want one violation of bulkload", got)
	}
	if got := serve(t, nil, "GET", "/event/v1/metadata/event", "", 200, "application/json", `{"events": [], "next": "`+big+`"}`); len(got) != 0 {
		t.Errorf("large answer: %v, want it unchecked", got)
	}
}
