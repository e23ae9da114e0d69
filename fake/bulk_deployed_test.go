package fake

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestBulkStatusMisspelledAndDefaults checks the status options of the
// fake: the deployed spelling succcess_count instead of success_count, and
// defaults other than the fake's own.
func TestBulkStatusMisspelledAndDefaults(t *testing.T) {
	e := newBulkEnv(t, WithMisspelledSuccessCount(), WithBulkStatusDefaults(true, 5))
	st, ack := e.load(opps(), "text/csv", oppCSV)
	if st != http.StatusOK {
		t.Fatalf("load: %d %v", st, ack)
	}
	exID := ack["execution_id"].(string)
	e.clock.Advance(DefaultBulkDelay)
	st, body := e.status(DemoOpportunityIntegration, exID, nil)
	if st != http.StatusOK {
		t.Fatalf("status: %d %v", st, body)
	}
	if _, ok := body["success_count"]; ok || body["succcess_count"] != 2.0 {
		t.Errorf("counts = success_count %v, succcess_count %v", body["success_count"], body["succcess_count"])
	}
	if body["include_errors"] != true || body["max_errors"] != 5.0 || len(body["errors"].([]any)) != 2 {
		t.Errorf("defaults: include_errors %v, max_errors %v, errors %v", body["include_errors"], body["max_errors"], body["errors"])
	}
	_, body = e.status(DemoOpportunityIntegration, exID, url.Values{"include_errors": {"false"}})
	if body["include_errors"] != false || body["errors"] != nil {
		t.Errorf("explicit false: %v", body)
	}

	plain := newBulkEnv(t)
	_, ack = plain.load(opps(), "text/csv", oppCSV)
	plain.clock.Advance(DefaultBulkDelay)
	_, body = plain.status(DemoOpportunityIntegration, ack["execution_id"].(string), nil)
	if _, ok := body["succcess_count"]; ok || body["success_count"] != 2.0 || body["include_errors"] != false || body["max_errors"] != 10.0 {
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

// TestBulkFileRoutes: POST /bulk/v1/bulkload/file and
// /bulk/v1/bulkload_opportunity/file take the file in the multipart part
// "file", parse it as the other routes do, and refuse any other body.
func TestBulkFileRoutes(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0))
	xlsx := xlsxBytes(t, [][]any{
		{"sales_details.crm_opportunity_id", "name", "amount"},
		{"F-1", "From Excel", 1234},
		{"F-2", "Bad amount", "n/a"},
	})
	oppXLSX := xlsxBytes(t, [][]any{
		{"sales_details.crm_opportunity_id", "name", "amount"},
		{"F-5", "Opportunity from Excel", 99},
	})
	for _, tc := range []struct {
		path, name string
		data       []byte
		q          url.Values
		format     any // the ack's data_format; nil for opportunities
		success    float64
		key        string
	}{
		{"/bulk/v1/bulkload/file", "opps.xlsx", xlsx, opps(), "XLSX", 1, "F-1"},
		{"/bulk/v1/bulkload/file", "opps.csv", []byte("sales_details.crm_opportunity_id,name\nF-3,CSV file\n"), opps(), "CSV", 1, "F-3"},
		{"/bulk/v1/bulkload_opportunity/file", "opps.xlsx", oppXLSX, opps("has_header_row", "true"), nil, 1, "F-5"},
		{"/bulk/v1/bulkload_opportunity/file", "opps.csv", []byte("F-4,No header,5\n"), opps("has_header_row", "false"), nil, 1, "F-4"},
	} {
		body, ctype := multipartFile(tc.name, tc.data)
		code, ack := e.do("POST", tc.path, tc.q, ctype, body)
		if code != 200 || ack["data_format"] != tc.format || ack["execution_id"] == nil {
			t.Errorf("%s %s: %d %v", tc.path, tc.name, code, ack)
			continue
		}
		_, st := e.status(DemoOpportunityIntegration, ack["execution_id"].(string), nil)
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

	for _, path := range []string{"/bulk/v1/bulkload/file", "/bulk/v1/bulkload_opportunity/file"} {
		code, body := e.do("POST", path, opps(), "text/csv", strings.NewReader("a\n1\n"))
		if code != 400 || !strings.Contains(body["message"].(string), "multipart/form-data") {
			t.Errorf("%s with a CSV body: %d %v", path, code, body)
		}
		var mb bytes.Buffer
		mw := multipart.NewWriter(&mb)
		mw.WriteField("data", "x")
		mw.Close()
		code, body = e.do("POST", path, opps(), mw.FormDataContentType(), &mb)
		if code != 400 || !strings.Contains(body["message"].(string), `no part named "file"`) {
			t.Errorf("%s without a file part: %d %v", path, code, body)
		}
		mbody, ctype := multipartFile("x.csv", []byte("a\n1\n"))
		code, body = e.do("POST", path, url.Values{}, ctype, mbody)
		if code != 400 || !strings.Contains(body["message"].(string), "integration_id") {
			t.Errorf("%s without integration_id: %d %v", path, code, body)
		}
	}
	mbody, ctype := multipartFile("x.csv", []byte("a\n1\n"))
	code, body := e.do("POST", "/bulk/v1/bulkload/file", opps("file_token", "upt_x"), ctype, mbody)
	if code != 400 || !strings.Contains(body["message"].(string), "file_token") {
		t.Errorf("file route with a file_token: %d %v", code, body)
	}
}
