package contract_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestPublishedExamplesPass feeds the check the answers the published
// descriptions show (the gateway export's examples and the connector's,
// identifiers made neutral), each to the request it answers: the
// contract must accept what the deployed service is documented to send.
// The gateway export's schema reads answer `{}`, which the contract
// accepts beside the `schema` member the connector reads.
func TestPublishedExamplesPass(t *testing.T) {
	for _, tc := range publishedExamples() {
		t.Run(tc.source, func(t *testing.T) {
			ct := "application/json"
			if tc.answer == "" {
				ct = ""
			}
			var header http.Header
			if tc.method == "POST" && tc.target == "/event/v1/subscriber" {
				// The examples show bodies only; the connector's webhook
				// triggers unsubscribe through the answer's Location.
				header = http.Header{"Location": {"/event/v1/subscriber/string"}}
			}
			if got := serveWith(t, nil, header, tc.method, tc.target, tc.body, tc.status, ct, tc.answer); len(got) > 0 {
				t.Errorf("%v", got)
			}
		})
	}
}

// published is an exchange the published descriptions show: a request
// and the answer to it.
type published struct {
	source               string
	method, target, body string
	status               int
	answer               string
}

// publishedExamples are the exchanges the published descriptions show.
func publishedExamples() []published {
	const (
		scimUser = `{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
			"userName": "scim_user@test.com", "meta": {"resourceType": "User"}, "id": "person-1", "active": true,
			"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"department": "Sales"}}`
		scimCreate = `{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
			"userName": "scim_user@test.com", "name": {"givenName": "scim user", "familyName": "scim family"},
			"emails": [{"primary": true, "value": "scim_user@test.com", "type": "work"}], "displayName": "scim_user_display_name",
			"meta": {"resourceType": "User"}, "active": true,
			"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"department": "Sales"}}`
		rows       = `{"version": 5, "endOfList": false, "results": [{"CRM ID": 1234, "Country": "US", "Region": "North"}, {"CRM ID": 1564, "Country": "US", "Region": "South"}]}`
		page       = `{"page": {"number": 0, "size": 100}}`
		filters    = `{"op": "AND", "group": [{"op": "OR", "group": [], "fieldFilters": [{"type": "TEXT", "colId": "0", "filter": {"op": "EQUAL_TO", "negate": false, "values": ["CREATE_FAILED"]}}]}], "fieldFilters": [{"type": "TEXT", "colId": "1", "filter": {"op": "EQUAL_TO", "negate": true, "values": ["FAILED"]}}]}`
		subscriber = `{"subscriber_id": "string", "name": "string", "objectids": ["string"], "integration_id": "string", "filters": "string", "subscriber_type": "webhook"}`
		status     = `{"integration_id": "INT-1", "execution_id": "a64690c2450", "status": "completed", "input_count": 200, "error_count": 3, "%s": 197, "skip_count": 0,
			"started_at": "2020-05-07T14:06:57.572Z", "completed_at": "2020-05-07T14:07:10.572Z", "include_errors": true, "errors": [
			{"id": "aw00079", "message": "invalid value in field 'close_date'", "data_row": {"opportunity_id": "aw00079", "close_date": "20-jan-2020", "amount": 250000}},
			{"id": "", "message": "Missing value of key field", "data_row": {"opportunity_id": "", "close_date": "2020-10-20", "amount": 75000}}]}`
	)
	return []published{
		{"authentication post-token", "POST", "/oauth/token", `{"grant_type": "client_credentials", "client_id": "c", "client_secret": "s"}`, 200,
			`{"access_token": "2YotnFZFEjr1zCsicMWpAA", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "FZFEicMWpA"}`},
		{"authentication post-token 400", "POST", "/oauth/token", `{"grant_type": "client_credentials"}`, 400, `{"error": "invalid_request"}`},
		{"scim createUser", "POST", "/api/scim/v2/Users", scimCreate, 201, scimCreate[:len(scimCreate)-1] + `, "id": "person-1"}`},
		{"scim searchViaGet", "GET", "/api/scim/v2/Users?filter=userName%20eq%20%22a%22", "", 200,
			`{"Resources": [` + scimUser + `], "schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"], "startIndex": 0, "totalResults": 0}`},
		{"scim getUser", "GET", "/api/scim/v2/Users/person-1", "", 200, scimUser},
		{"scim updateUser", "PUT", "/api/scim/v2/Users/person-1", scimUser, 200, scimUser},
		{"users check-attribute", "POST", "/users/v1/check-attribute", `{"email": "string", "namespace": 0, "filter_value": {"attribute": "string", "value": ["string"]}}`, 201,
			`{"email": "string", "namespace": 0, "filter_value": {"data": {"attribute": "string", "value": ["string"]}}}`},
		{"report getReports", "POST", "/report/v1/list", page, 200,
			`{"endOfList": false, "results": [{"id": 1729, "name": "Report - All Opportunities", "description": "All opportunites report", "reportStatus": "DRAFT",
			"createdBy": {"id": "person-1", "name": "Admin"}, "modifiedBy": {"id": "person-1", "name": "Admin"},
			"createdAt": "2021-05-10T14:25:04.96388Z", "modifiedAt": "2021-05-10T14:25:04.96388Z"}]}`},
		{"report getReportData", "POST", "/report/v1/1729/data", `{"filters": ` + filters + `, "page": {"number": 0, "size": 100}}`, 200, rows},
		{"report getReportViewData", "POST", "/report/v1/view/453/data", page, 200, rows},
		{"report prepareExport", "POST", "/report/v1/view/1729/prepare_export", `{}`, 200, `{"viewId": 453}`},
		{"report checkReportViewStatus", "GET", "/report/v1/view/453/status", "", 200, `{"viewStatus": "RUNNING"}`},
		{"report getChartData", "POST", "/report/v1/1729/chart-data", `{"filters": ` + filters + `, "chartIds": [1, 2, 3, 4]}`, 200,
			`{"reportVersion": 5, "reportName": "report name", "charts": [{"id": 1, "version": 10, "name": "chart name",
			"results": [{"Object name": "Obj name", "count": 12, "Object Id": "obj-7007"}]}]}`},
		{"object update_external_id", "PATCH", "/app/v1/object/obj-1/external_id", `{"field_name": "sales_details.crm_opportunity_id", "external_id": "000owa24575"}`, 200,
			`{"object_id": "obj-1", "external_id": "000owa24575", "field_name": "sales_details.crm_opportunity_id"}`},
		{"object get_external_id", "GET", "/app/v1/object/obj-1/external_id", "", 200,
			`{"object_id": "obj-1", "external_ids": [{"external_id": "000owa24575", "field_name": "sales_details.crm_opportunity_id"},
			{"external_id": "pc-a1w09875", "field_name": "partner_portal.referral_id"}]}`},
		{"object audit_object", "PATCH", "/app/v1/object/obj-1/audit",
			`{"field_name": "partner_portal.integration_status", "integration_id": "INT-1", "external_id": "000owa24575", "status_code": "CREATE_FAILED", "message": "Created."}`, 200,
			`{"object_id": "obj-1.", "field_name": "partner_portal.integration_status", "status_code": "LINKED"}`},
		{"bulk bulkload", "POST", "/bulk/v1/bulkload?integration_id=INT-1&data_format=JSON", `[{"a": "1"}]`, 200,
			`{"integration_id": "INT-1", "execution_id": "a64690c2450", "created_at": "2020-05-18T14:06:57.572Z", "data_format": "JSON"}`},
		{"bulk bulkload_opportunities", "POST", "/bulk/v1/bulkload_opportunity?integration_id=INT-1&content_type=JSON", `[{"a": "1"}]`, 200,
			`{"integration_id": "INT-1", "execution_id": "a64690c2450", "created_at": "2020-05-18T14:06:57.572Z"}`},
		{"bulk status", "GET", "/bulk/v1/status/INT-1?execution_id=a64690c2450&include_errors=true", "", 200, sprintf(status, "success_count")},
		{"connector bulkload_status_response", "GET", "/bulk/v1/status/INT-1?execution_id=a64690c2450", "", 200, sprintf(status, "succcess_count")},
		{"bulk upload_url", "GET", "/bulk/v1/bulkload/INT-1/upload_url?file_name=f.csv", "", 200,
			`{"upload_url": "https://storage.example.com/server/file_name.extension?Expires=12345567&AccessId=foobar&Signature=barfoo", "upload_token": "eYgh4bLaH2qemcas9dTOKEN"}`},
		{"events ListSubscribers", "GET", "/event/v1/subscriber", "", 200, `{"items": [` + subscriber + `]}`},
		{"events ReadSubscriber", "GET", "/event/v1/subscriber/s-1", "", 200, subscriber},
		{"connector event_subscribe_info", "GET", "/event/v1/subscriber/s-1", "", 200,
			`{"subscriber_id": "s", "name": "n", "objectids": [], "event": ["object.update"], "filters": "", "integraion_id": "i", "subscriber_type": "webhook"}`},
		{"events WebhookRegistration", "POST", "/event/v1/subscriber",
			`{"subscriber_type": "webhook", "event": ["object.update"], "name": "n", "filters": "(stage in [\"closed\"]) AND (sales_details.partner = \"P1\")", "webhook_settings": {"callback_url": "https://example.com/hook"}}`, 200,
			`{"subscriber_id": "string"}`},
		{"events GetEventList", "GET", "/event/v1/metadata/event", "", 200, `{"events": [{"name": "string", "description": "string"}]}`},
		{"events GetIntegrationList", "GET", "/event/v1/metadata/integration", "", 200,
			`{"integrations": [{"integration_id": "string", "integration_type": "string", "description": "string", "name": "string"}]}`},
		{"connector GetObjectEventSchema", "GET", "/event/v1/metadata/integration/INT-1", "", 200, `{"schema": {"type": "object"}}`},
		{"connector GetEventSchema", "GET", "/event/v1/metadata/event/object.update", "", 200, `{"schema": {"type": "object"}}`},
		{"events GetEventSchema", "GET", "/event/v1/metadata/event/object.update", "", 200, `{}`},
		{"events GetObjectEventSchema", "GET", "/event/v1/metadata/integration/INT-1", "", 200, `{}`},
		{"connector Subscribe (event as a string)", "POST", "/event/v1/subscriber",
			`{"subscriber_type": "webhook", "event": "object.update", "name": "n", "object_ids": ["o-1"], "webhook_settings": {"callback_url": "https://example.com/hook"}}`, 200,
			`{"subscriber_id": "string"}`},
		{"connector referral subscribe (event as a string)", "POST", "/event/v1/subscriber",
			`{"subscriber_type": "webhook", "event": "object.partner_portal_referral_submit", "name": "n", "integration_id": "INT-1", "webhook_settings": {"callback_url": "https://example.com/hook"}}`, 200,
			`{"subscriber_id": "string"}`},
		{"connector GetReportList (no body)", "POST", "/report/v1/list", "", 200, `{"endOfList": true, "results": []}`},
		{"authentication delete-token", "DELETE", "/oauth/token", "", 200, ""},
		{"events DeleteSubscriber", "DELETE", "/event/v1/subscriber/s-1", "", 200, ""},
	}
}

func sprintf(format, member string) string { return fmt.Sprintf(format, member) }

// TestWriteBodiesAreClosed: a write body that names a member its
// published description does not (the subscriber read's "objectids" in a
// registration, whose member is "object_ids") breaks the contract when
// it is accepted, beside the same body as published, which passes.
func TestWriteBodiesAreClosed(t *testing.T) {
	const hook = `"subscriber_type": "webhook", "event": ["object.update"], "name": "n", "webhook_settings": {"callback_url": "https://example.com/hook"}`
	for _, tc := range []struct {
		name, method, target, body, want string
	}{
		{"subscribe as published", "POST", "/event/v1/subscriber", `{"object_ids": ["o"], ` + hook + `}`, ""},
		{"subscribe objectids", "POST", "/event/v1/subscriber", `{"objectids": ["o"], ` + hook + `}`, "objectids"},
		{"subscribe callbackurl", "POST", "/event/v1/subscriber", `{"subscriber_type": "webhook", "event": ["e"], "name": "n", "webhook_settings": {"callbackurl": "x", "callback_url": "x"}}`, "callbackurl"},
		{"audit as published", "PATCH", "/app/v1/object/o/audit", `{"field_name": "f", "status_code": "LINKED", "message": "m"}`, ""},
		{"audit statuscode", "PATCH", "/app/v1/object/o/audit", `{"field_name": "f", "status_code": "LINKED", "statuscode": "LINKED", "message": "m"}`, "statuscode"},
		{"external id fieldname", "PATCH", "/app/v1/object/o/external_id", `{"external_id": "e", "fieldname": "a.b"}`, "fieldname"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := serve(t, nil, tc.method, tc.target, tc.body, 200, "application/json", `{}`)
			var req []string
			for _, v := range got {
				if v.Side == "request" {
					req = append(req, v.Error())
				}
			}
			switch {
			case tc.want == "" && len(req) > 0:
				t.Errorf("violations %v, want none", req)
			case tc.want != "" && (len(req) != 1 || !strings.Contains(req[0], tc.want)):
				t.Errorf("violations %v, want one naming %s", req, tc.want)
			}
		})
	}
}
