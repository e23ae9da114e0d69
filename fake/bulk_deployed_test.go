package fake

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake/demo"
)

// TestBulkStatusMisspelledAndDefaults checks the status options of the
// fake: the deployed spelling succcess_count instead of success_count, and
// defaults other than the fake's own.
func TestBulkStatusMisspelledAndDefaults(t *testing.T) {
	e := newBulkEnv(t, WithDeployment(Deployment{MisspelledSuccessCount: true}), WithBulkStatusDefaults(true, 5))
	st, ack := e.load(opps(), "text/csv", oppCSV)
	if st != http.StatusOK {
		t.Fatalf("load: %d %v", st, ack)
	}
	exID := ack["execution_id"].(string)
	e.clock.Advance(DefaultBulkDelay)
	st, body := e.status(demo.OpportunityIntegration, exID, nil)
	if st != http.StatusOK {
		t.Fatalf("status: %d %v", st, body)
	}
	if _, ok := body["success_count"]; ok || body["succcess_count"] != 2.0 {
		t.Errorf("counts = success_count %v, succcess_count %v", body["success_count"], body["succcess_count"])
	}
	if body["include_errors"] != true || len(body["errors"].([]any)) != 2 {
		t.Errorf("defaults: include_errors %v, errors %v", body["include_errors"], body["errors"])
	}
	_, body = e.status(demo.OpportunityIntegration, exID, url.Values{"include_errors": {"false"}})
	if body["include_errors"] != false || body["errors"] != nil {
		t.Errorf("explicit false: %v", body)
	}

	plain := newBulkEnv(t)
	_, ack = plain.load(opps(), "text/csv", oppCSV)
	plain.clock.Advance(DefaultBulkDelay)
	_, body = plain.status(demo.OpportunityIntegration, ack["execution_id"].(string), nil)
	if _, ok := body["succcess_count"]; ok || body["success_count"] != 2.0 || body["include_errors"] != false {
		t.Errorf("default fake: %v", body)
	}
}

// multipartFile returns a multipart/form-data body with data in the part
// "file" named name, and its Content-Type.
func multipartFile(name string, data []byte) (*bytes.Buffer, string) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("file", name)
	part.Write(data)
	mw.Close()
	return &body, mw.FormDataContentType()
}

// TestBulkAttachments: POST /bulk/v1/bulkload and
// /bulk/v1/bulkload_opportunity take a file in the multipart part "file",
// in the format the query says, CSV when it says nothing (the file name
// is not read); they refuse a multipart body without that part. The
// .../file paths are not routes of the service: 404.
func TestBulkAttachments(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0))
	// Rows {"F-1", "From Excel", 1234} and {"F-2", "Bad amount", "n/a"},
	// then {"F-5", "Opportunity from Excel", 99}, under a header.
	xlsx := excelizeWorkbook(t, "excelize-attached.xlsx")
	oppXLSX := excelizeWorkbook(t, "excelize-opportunity.xlsx")
	for _, tc := range []struct {
		path, name string
		data       []byte
		q          url.Values
		format     any // the ack's data_format; nil for opportunities
		success    float64
		key        string
	}{
		{"/bulk/v1/bulkload", "opps.xlsx", xlsx, opps("data_format", "xlsx"), "XLSX", 1, "F-1"},
		{"/bulk/v1/bulkload", "opps.csv", []byte("sales_details.crm_opportunity_id,name\nF-3,CSV file\n"), opps("data_format", "CSV"), "CSV", 1, "F-3"},
		{"/bulk/v1/bulkload", "opps.json", []byte("sales_details.crm_opportunity_id,name\nF-6,Named .json and read as CSV\n"), opps(), "CSV", 1, "F-6"},
		{"/bulk/v1/bulkload_opportunity", "opps.xlsx", oppXLSX, opps("has_header_row", "true", "content_type", "XLSX"), nil, 1, "F-5"},
		{"/bulk/v1/bulkload_opportunity", "opps.csv", []byte("F-4,No header,5\n"), opps("has_header_row", "false"), nil, 1, "F-4"},
	} {
		body, ctype := multipartFile(tc.name, tc.data)
		code, ack := e.do("POST", tc.path, tc.q, ctype, body)
		if code != 200 || ack["data_format"] != tc.format || ack["execution_id"] == nil {
			t.Errorf("%s %s: %d %v", tc.path, tc.name, code, ack)
			continue
		}
		_, st := e.status(demo.OpportunityIntegration, ack["execution_id"].(string), nil)
		if st["success_count"] != tc.success {
			t.Errorf("%s %s: status %v", tc.path, tc.name, st)
		}
		found := false
		for _, o := range e.srv.Objects("opportunity") {
			if v, _ := o.Field("sales_details.crm_opportunity_id"); v == tc.key {
				found = true
			}
		}
		if !found {
			t.Errorf("%s %s: no object %s", tc.path, tc.name, tc.key)
		}
	}

	// An XLSX file whose query says nothing is read as CSV, and refused.
	body, ctype := multipartFile("opps.xlsx", xlsx)
	if code, ack := e.do("POST", "/bulk/v1/bulkload", opps(), ctype, body); code != 400 || !strings.Contains(ack["message"].(string), "CSV") {
		t.Errorf("XLSX without data_format: %d %v", code, ack)
	}
	for _, path := range []string{"/bulk/v1/bulkload", "/bulk/v1/bulkload_opportunity"} {
		var mb bytes.Buffer
		mw := multipart.NewWriter(&mb)
		mw.WriteField("data", "x")
		mw.Close()
		code, body := e.do("POST", path, opps(), mw.FormDataContentType(), &mb)
		if code != 400 || !strings.Contains(body["message"].(string), `no part named "file"`) {
			t.Errorf("%s without a file part: %d %v", path, code, body)
		}
	}
	before := len(e.srv.BulkExecutions())
	for _, path := range []string{"/bulk/v1/bulkload/file", "/bulk/v1/bulkload_opportunity/file"} {
		mbody, ctype := multipartFile("x.csv", []byte("sales_details.crm_opportunity_id\nZ-1\n"))
		code, _ := e.raw("POST", path, opps(), ctype, mbody)
		if code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, code)
		}
	}
	if n := len(e.srv.BulkExecutions()); n != before {
		t.Errorf("%d executions after requests to unknown routes, want %d", n, before)
	}
}

// TestBulkAnswersCarryOnlyPublishedMembers: with the default options,
// every member of the bulk answers is one the interface or the published
// descriptions show (the acknowledgements, the status and its errors, the
// upload ticket).
func TestBulkAnswersCarryOnlyPublishedMembers(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0))
	check := func(what string, got map[string]any, allowed ...string) {
		t.Helper()
		for k := range got {
			if !slices.Contains(allowed, k) {
				t.Errorf("%s carries %q, which no published description shows", what, k)
			}
		}
	}
	_, ack := e.load(opps(), "text/csv", oppCSV)
	check("load acknowledgement", ack, "integration_id", "execution_id", "created_at", "data_format", "column_delimiter")
	_, oppAck := e.do("POST", "/bulk/v1/bulkload_opportunity", opps(), "text/csv", strings.NewReader(oppCSV))
	check("opportunity acknowledgement", oppAck, "integration_id", "execution_id", "created_at")
	_, st := e.status(demo.OpportunityIntegration, ack["execution_id"].(string), url.Values{"include_errors": {"true"}})
	check("status", st, "integration_id", "execution_id", "status", "status_msg", "input_count", "success_count",
		"error_count", "skip_count", "started_at", "completed_at", "max_errors", "include_errors", "errors")
	errs, _ := st["errors"].([]any)
	if len(errs) == 0 {
		t.Fatalf("status without errors: %v", st)
	}
	for _, x := range errs {
		check("status error", x.(map[string]any), "id", "message", "data_row")
	}
	_, tk := e.do("GET", "/bulk/v1/bulkload/"+demo.OpportunityIntegration+"/upload_url", url.Values{"file_name": {"a.csv"}}, "", nil)
	check("upload ticket", tk, "upload_url", "upload_token")
}
