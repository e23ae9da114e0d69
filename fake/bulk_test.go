package fake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/fake/demo"
)

// bulkEnv is a fake on a manual clock with the demo data, and a token.
type bulkEnv struct {
	t     *testing.T
	srv   *Server
	clock *ManualClock
	token string
}

func newBulkEnv(t *testing.T, opts ...Option) *bulkEnv {
	t.Helper()
	clock := NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	srv := NewServer(append([]Option{WithClock(clock), WithDemoData()}, opts...)...)
	t.Cleanup(srv.Close)
	e := &bulkEnv{t: t, srv: srv, clock: clock}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	body := `{"grant_type":"client_credentials","client_id":"` + DefaultClientID + `","client_secret":"` + DefaultClientSecret + `"}`
	resp, err := http.Post(srv.URL+"/oauth/token", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("no token: %v", err)
	}
	e.token = tok.AccessToken
	return e
}

// do sends a request and returns the status and the decoded JSON body.
func (e *bulkEnv) do(method, path string, q url.Values, ctype string, body io.Reader) (int, map[string]any) {
	e.t.Helper()
	code, raw := e.raw(method, path, q, ctype, body)
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			e.t.Fatalf("%s %s: body %q is not JSON: %v", method, path, raw, err)
		}
	}
	return code, out
}

// raw sends a request and returns the status and the body.
func (e *bulkEnv) raw(method, path string, q url.Values, ctype string, body io.Reader) (int, []byte) {
	e.t.Helper()
	u := e.srv.URL + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if !strings.HasPrefix(path, "/upload/") {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

func (e *bulkEnv) load(q url.Values, ctype, body string) (int, map[string]any) {
	e.t.Helper()
	return e.do("POST", "/bulk/v1/bulkload", q, ctype, strings.NewReader(body))
}

func (e *bulkEnv) status(integ, exID string, extra url.Values) (int, map[string]any) {
	e.t.Helper()
	q := url.Values{"execution_id": {exID}}
	maps.Copy(q, extra)
	return e.do("GET", "/bulk/v1/status/"+integ, q, "", nil)
}

func opps(extra ...string) url.Values {
	q := url.Values{"integration_id": {demo.OpportunityIntegration}}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	return q
}

const oppCSV = "sales_details.crm_opportunity_id,name,amount,close_date\n" +
	"CRM-1,Alpha,100,2026-03-01\n" +
	",No key,5,2026-03-01\n" +
	"CRM-2,Beta,lots,2026-03-01\n" +
	"CRM-3,\"Gamma, \"\"quoted\"\"\",300.5,2026-04-01T10:00:00Z\n"

func TestBulkExecutionLifecycle(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(5*time.Second))
	code, ack := e.load(opps(), "text/csv", oppCSV)
	if code != 200 {
		t.Fatalf("load: %d %v", code, ack)
	}
	if ack["integration_id"] != demo.OpportunityIntegration || ack["data_format"] != "CSV" || ack["execution_id"] == "" {
		t.Errorf("ack = %v", ack)
	}
	if _, ok := ack["column_delimiter"]; ok { // no published acknowledgement has it
		t.Errorf("ack = %v", ack)
	}
	if ack["created_at"] != "2026-01-02T03:04:05.000Z" { // as published: milliseconds
		t.Errorf("created_at = %v", ack["created_at"])
	}
	exID := ack["execution_id"].(string)

	code, st := e.status(demo.OpportunityIntegration, exID, url.Values{"include_errors": {"true"}})
	if code != 200 || st["status"] != "running" || st["input_count"] != 4.0 || st["completed_at"] != nil {
		t.Fatalf("while running: %d %v", code, st)
	}
	e.clock.Advance(5 * time.Second)
	code, st = e.status(demo.OpportunityIntegration, exID, nil)
	if code != 200 || st["status"] != "completed" {
		t.Fatalf("after the delay: %d %v", code, st)
	}
	if st["input_count"] != 4.0 || st["success_count"] != 2.0 || st["error_count"] != 2.0 || st["skip_count"] != 0.0 {
		t.Errorf("counts = %v", st)
	}
	if st["started_at"] != "2026-01-02T03:04:05.000Z" || st["completed_at"] != "2026-01-02T03:04:10.000Z" {
		t.Errorf("times = %v %v", st["started_at"], st["completed_at"])
	}
	if _, ok := st["errors"]; ok || st["include_errors"] != false || st["max_errors"] != nil { // no published status has max_errors
		t.Errorf("errors without include_errors: %v", st)
	}

	_, st = e.status(demo.OpportunityIntegration, exID, url.Values{"include_errors": {"true"}})
	errs, _ := st["errors"].([]any)
	if len(errs) != 2 {
		t.Fatalf("errors = %v", st["errors"])
	}
	first, second := errs[0].(map[string]any), errs[1].(map[string]any)
	if first["id"] != "" || first["message"] != `Missing value of key field "sales_details.crm_opportunity_id"` {
		t.Errorf("first error = %v", first)
	}
	if row, _ := first["data_row"].(map[string]any); row["name"] != "No key" || row["amount"] != "5" {
		t.Errorf("data_row = %v", first["data_row"])
	}
	if second["id"] != "CRM-2" || !strings.Contains(second["message"].(string), `"amount"`) {
		t.Errorf("second error = %v", second)
	}
	_, st = e.status(demo.OpportunityIntegration, exID, url.Values{"include_errors": {"true"}, "max_errors": {"1"}})
	if errs, _ := st["errors"].([]any); len(errs) != 1 {
		t.Errorf("max_errors=1 gave %v", st["errors"])
	}

	// The rows are objects now, found by their key field.
	var gamma Object
	n := 0
	for _, o := range e.srv.Objects("opportunity") {
		if v, _ := o.Field("sales_details.crm_opportunity_id"); v == "CRM-3" {
			gamma = o
			n++
		}
	}
	if n != 1 || gamma.Fields["name"] != `Gamma, "quoted"` || gamma.Fields["amount"] != 300.5 || gamma.IntegrationID != demo.OpportunityIntegration {
		t.Errorf("CRM-3 = %+v (%d found)", gamma, n)
	}

	// The same file again: the two stored rows are skipped.
	_, ack = e.load(opps(), "text/csv", oppCSV)
	e.clock.Advance(5 * time.Second)
	_, st = e.status(demo.OpportunityIntegration, ack["execution_id"].(string), nil)
	if st["success_count"] != 0.0 || st["skip_count"] != 2.0 || st["error_count"] != 2.0 {
		t.Errorf("reload counts = %v", st)
	}
	// A changed row updates the same object.
	_, ack = e.load(opps(), "text/csv", "sales_details.crm_opportunity_id,stage\nCRM-3,won\n")
	e.clock.Advance(5 * time.Second)
	_, st = e.status(demo.OpportunityIntegration, ack["execution_id"].(string), nil)
	if o, _ := e.srv.Object(gamma.ID); st["success_count"] != 1.0 || o.Fields["stage"] != "won" || o.Fields["name"] != `Gamma, "quoted"` {
		t.Errorf("update: %v, object %+v", st, o)
	}
	if got := len(e.srv.BulkExecutions()); got != 3 {
		t.Errorf("%d executions, want 3", got)
	}
}

func TestBulkUpsertFindsObjectsAddedElsewhere(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0))
	id := e.srv.AddObject(Object{Type: "opportunity", Fields: map[string]any{
		"sales_details": map[string]any{"crm_opportunity_id": "EXT-9"}, "name": "Old"}})
	// The index is built now; later changes reach it through the observer.
	e.load(opps(), "text/csv", "sales_details.crm_opportunity_id,name\nEXT-9,New\n")
	e.srv.UpdateObject(id, map[string]any{"sales_details.crm_opportunity_id": "EXT-10"})
	e.load(opps(), "text/csv", "sales_details.crm_opportunity_id,name\nEXT-10,Newer\n")
	o, _ := e.srv.Object(id)
	if o.Fields["name"] != "Newer" {
		t.Errorf("object = %+v", o)
	}
	if n := len(e.srv.Objects("opportunity")); n != 4 { // three demo ones and this one
		t.Errorf("%d opportunities, want 4", n)
	}
}

func TestBulkJSONAndDelimiter(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0))
	body := `[{"sales_details":{"crm_opportunity_id":"J-1"},"name":"Json","amount":12},
	          {"sales_details.crm_opportunity_id":42,"probability":"0.5"},
	          {"name":"keyless"}]`
	code, ack := e.load(opps("data_format", "json"), "application/json", body)
	if code != 200 || ack["data_format"] != "JSON" {
		t.Fatalf("load: %d %v", code, ack)
	}
	_, st := e.status(demo.OpportunityIntegration, ack["execution_id"].(string), url.Values{"include_errors": {"true"}})
	if st["success_count"] != 2.0 || st["error_count"] != 1.0 {
		t.Errorf("status = %v", st)
	}
	if errs := st["errors"].([]any); errs[0].(map[string]any)["data_row"].(map[string]any)["name"] != "keyless" {
		t.Errorf("errors = %v", errs)
	}
	code, ack = e.load(opps("column_delimiter", ";"), "text/csv", "sales_details.crm_opportunity_id;name\nS-1;a,b\n")
	if code != 200 {
		t.Fatalf("load ;: %d %v", code, ack)
	}
	code, ack = e.load(opps("column_delimiter", "\t"), "text/csv", "sales_details.crm_opportunity_id\tname\nT-1\tx\n")
	if code != 200 {
		t.Fatalf("load tab: %d %v", code, ack)
	}
	found := map[string]bool{}
	for _, o := range e.srv.Objects("opportunity") {
		v, _ := o.Field("sales_details.crm_opportunity_id")
		s, _ := v.(string)
		found[s] = true
		if s == "S-1" && o.Fields["name"] != "a,b" {
			t.Errorf("S-1 = %+v", o)
		}
		if s == "42" && o.Fields["probability"] != 0.5 {
			t.Errorf("42 = %+v", o)
		}
	}
	for _, k := range []string{"J-1", "42", "S-1", "T-1"} {
		if !found[k] {
			t.Errorf("no object with key %s", k)
		}
	}
}

func TestBulkBadInput(t *testing.T) {
	e := newBulkEnv(t)
	before := len(e.srv.Objects(""))
	for _, tc := range []struct {
		name, ctype, body string
		q                 url.Values
		status            int
		want              string
	}{
		{"no integration", "text/csv", "a\n1\n", url.Values{}, 400, "integration_id is required"},
		{"malformed integration", "text/csv", "a\n1\n", url.Values{"integration_id": {"bad id!"}}, 400, "invalid integration id"},
		{"unknown integration", "text/csv", "a\n1\n", url.Values{"integration_id": {"int-nope"}}, 400, "not found"},
		{"unknown format", "", "x", opps("data_format", "xml"), 400, "data_format"},
		{"two-char delimiter", "", "x", opps("column_delimiter", ";;"), 400, "column_delimiter"},
		{"quote delimiter", "", "x", opps("column_delimiter", `"`), 400, "column_delimiter"},
		{"empty CSV", "text/csv", "", opps(), 400, "empty"},
		{"unterminated quote", "text/csv", "sales_details.crm_opportunity_id,name\nA-1,ok\nA-2,\"broken\n", opps(), 400, "line 3"},
		{"field count", "text/csv", "sales_details.crm_opportunity_id,name\nA-1,ok\nA-2,x,y\n", opps(), 400, "line 3 has 3 fields"},
		{"duplicate column", "text/csv", "name,name\nx,y\n", opps(), 400, `"name" appears twice`},
		{"JSON not array", "", `{"a":1}`, opps("data_format", "JSON"), 400, "array of objects"},
		{"JSON record not object", "", `[{"a":1}, 7]`, opps("data_format", "JSON"), 400, "record 2"},
		{"JSON syntax", "", `[{"a":1}, {"b":]`, opps("data_format", "JSON"), 400, "at byte"},
		{"JSON truncated", "", `[{"a":1}`, opps("data_format", "JSON"), 400, "unexpected end"},
		{"JSON ends after a record", "", `[{"a":1}, {"a":2}`, opps("data_format", "JSON"), 400, "(after record 2): unexpected end of body"},
		{"JSON ends after a comma", "", "[{\"a\":1},\n ", opps("data_format", "JSON"), 400, "(after record 1): unexpected end of body"},
		{"JSON ends in a record", "", `[{"a":1}, {"a":`, opps("data_format", "JSON"), 400, "(record 2): unexpected end of body"},
		{"JSON trailing data", "", `[] []`, opps("data_format", "JSON"), 400, "data after the array"},
		{"XLSX body", "", "not a zip", opps("data_format", "XLSX"), 400, "XLSX only as an attached file"},
		{"XLSX garbage attached", "multipart/form-data; boundary=xx", "--xx\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.xlsx\"\r\n\r\nnot a zip\r\n--xx--\r\n", opps("data_format", "XLSX"), 400, "malformed XLSX"},
		{"unknown file_token", "", "", opps("file_token", "upt_nope"), 400, "unknown file_token"},
		{"multipart without file", "multipart/form-data; boundary=xx", "--xx\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nv\r\n--xx--\r\n", opps(), 400, `no part named "file"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := e.load(tc.q, tc.ctype, tc.body)
			msg, _ := body["message"].(string)
			if code != tc.status || !strings.Contains(msg, tc.want) {
				t.Errorf("got %d %q, want %d with %q", code, msg, tc.status, tc.want)
			}
		})
	}
	if n := len(e.srv.BulkExecutions()); n != 0 {
		t.Errorf("%d executions after refused loads", n)
	}
	if n := len(e.srv.Objects("")); n != before {
		t.Errorf("refused loads changed the objects: %d, want %d", n, before)
	}
}

func TestBulkStatusErrors(t *testing.T) {
	e := newBulkEnv(t)
	_, ack := e.load(opps(), "text/csv", oppCSV)
	exID := ack["execution_id"].(string)
	for _, tc := range []struct {
		name, integ, exID string
		extra             url.Values
		status            int
	}{
		{"unknown integration", "int-nope", exID, nil, 404},
		{"malformed integration", "bad%20id", exID, nil, 400},
		{"missing execution", demo.OpportunityIntegration, "", nil, 400},
		{"malformed execution", demo.OpportunityIntegration, "exe/../x", nil, 400},
		{"unknown execution", demo.OpportunityIntegration, "exe_000", nil, 404},
		{"execution of another integration", demo.AccountIntegration, exID, nil, 404},
		{"bad include_errors", demo.OpportunityIntegration, exID, url.Values{"include_errors": {"maybe"}}, 400},
		{"bad max_errors", demo.OpportunityIntegration, exID, url.Values{"max_errors": {"-1"}}, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, body := e.status(tc.integ, tc.exID, tc.extra); code != tc.status || body["message"] == "" {
				t.Errorf("got %d %v, want %d", code, body, tc.status)
			}
		})
	}
}

func TestBulkSignedUpload(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0))
	ticket := func(name string) (string, string) {
		code, tk := e.do("GET", "/bulk/v1/bulkload/"+demo.OpportunityIntegration+"/upload_url", url.Values{"file_name": {name}}, "", nil)
		if code != 200 {
			t.Fatalf("upload_url: %d %v", code, tk)
		}
		u, _ := url.Parse(tk["upload_url"].(string))
		if !strings.HasPrefix(tk["upload_url"].(string), e.srv.URL+"/upload/") || strings.Contains(u.Path, tk["upload_token"].(string)) {
			t.Fatalf("ticket = %v", tk)
		}
		return u.Path, tk["upload_token"].(string)
	}
	path, tok := ticket("opps.csv")
	if code, _ := e.do("POST", path, nil, "text/csv", strings.NewReader("sales_details.crm_opportunity_id,name\nU-1,up\n")); code != 200 {
		t.Fatalf("upload: %d", code)
	}
	if code, body := e.do("POST", path, nil, "text/csv", strings.NewReader("x")); code != 409 {
		t.Errorf("second upload: %d %v", code, body)
	}
	code, ack := e.load(opps("file_token", tok), "", "")
	if code != 200 || ack["data_format"] != "CSV" {
		t.Fatalf("load with token: %d %v", code, ack)
	}
	if code, body := e.load(opps("file_token", tok), "", ""); code != 400 || !strings.Contains(body["message"].(string), "already used") {
		t.Errorf("token reused: %d %v", code, body)
	}
	uploads := 0
	for _, l := range e.srv.Requests() {
		if strings.Contains(l.Query, tok) || strings.Contains(l.Path, tok) {
			t.Errorf("request log holds the upload token: %+v", l)
		}
		// The upload URL's id lets whoever holds it upload: masked too.
		if strings.HasPrefix(l.Path, "/upload/") {
			uploads++
			if l.Path != "/upload/***" || strings.Contains(l.Path, strings.TrimPrefix(path, "/upload/")) {
				t.Errorf("request log holds the upload URL's id: %+v", l)
			}
		}
	}
	if uploads != 2 {
		t.Errorf("%d uploads in the request log, want 2", uploads)
	}

	// Expiry, a token with no file, and a token of another integration.
	path, tok = ticket("late.json")
	e.clock.Advance(16 * time.Minute)
	if code, _ := e.do("POST", path, nil, "", strings.NewReader("[]")); code != 403 {
		t.Errorf("upload to an expired URL: %d", code)
	}
	if code, body := e.load(opps("file_token", tok), "", ""); code != 400 || !strings.Contains(body["message"].(string), "expired") {
		t.Errorf("expired token: %d %v", code, body)
	}
	_, tok = ticket("empty.csv")
	if code, body := e.load(opps("file_token", tok), "", ""); code != 400 || !strings.Contains(body["message"].(string), "no file was uploaded") {
		t.Errorf("token without file: %d %v", code, body)
	}
	path, tok = ticket("x.csv")
	e.do("POST", path, nil, "", strings.NewReader("account_info.external_account_id\nA\n"))
	q := url.Values{"integration_id": {demo.AccountIntegration}, "file_token": {tok}}
	if code, body := e.load(q, "", ""); code != 400 || !strings.Contains(body["message"].(string), "another integration") {
		t.Errorf("token of another integration: %d %v", code, body)
	}
	if code, _ := e.do("POST", "/upload/0123", nil, "", strings.NewReader("x")); code != 404 {
		t.Errorf("unknown upload URL: %d", code)
	}

	for _, tc := range []struct {
		integ, name string
		status      int
	}{
		{"int-nope", "a.csv", 404}, {"bad%20id", "a.csv", 400},
		{demo.OpportunityIntegration, "", 400}, {demo.OpportunityIntegration, "a.txt", 400},
	} {
		code, _ := e.do("GET", "/bulk/v1/bulkload/"+tc.integ+"/upload_url", url.Values{"file_name": {tc.name}}, "", nil)
		if code != tc.status {
			t.Errorf("upload_url %s %q: %d, want %d", tc.integ, tc.name, code, tc.status)
		}
	}
}

// excelizeWorkbook returns a workbook of testdata written by excelize, a
// real spreadsheet library. The files are made, and checked to be what
// excelize writes, by TestFakeWorkbooksWrittenByExcelize in
// cmd/partnerctl, which names the rows each holds.
func excelizeWorkbook(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestBulkMultipartXLSX(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0))
	// Written by excelize's SetSheetRow: a header, then
	// {"X-1", "From Excel", 1234} and {"X-2", "Bad amount", "n/a"}.
	data := excelizeWorkbook(t, "excelize-rows.xlsx")
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("note", "ignored")
	part, _ := mw.CreateFormFile("file", "opps.xlsx")
	part.Write(data)
	mw.Close()
	code, ack := e.do("POST", "/bulk/v1/bulkload", opps("data_format", "XLSX"), mw.FormDataContentType(), &body)
	if code != 200 || ack["data_format"] != "XLSX" {
		t.Fatalf("load: %d %v", code, ack)
	}
	_, st := e.status(demo.OpportunityIntegration, ack["execution_id"].(string), url.Values{"include_errors": {"true"}})
	if st["input_count"] != 2.0 || st["success_count"] != 1.0 || st["error_count"] != 1.0 {
		t.Errorf("status = %v", st)
	}
}

func TestBulkLoadOpportunity(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0))
	q := opps("has_header_row", "false", "content_type", "csv")
	code, ack := e.do("POST", "/bulk/v1/bulkload_opportunity", q, "text/csv", strings.NewReader("P-1,Positional,7\nP-2,Second,8\n"))
	if code != 200 {
		t.Fatalf("load: %d %v", code, ack)
	}
	if _, ok := ack["data_format"]; ok || ack["execution_id"] == "" {
		t.Errorf("ack = %v", ack)
	}
	_, st := e.status(demo.OpportunityIntegration, ack["execution_id"].(string), nil)
	if st["success_count"] != 2.0 {
		t.Errorf("status = %v", st)
	}
	ok := false
	for _, o := range e.srv.Objects("opportunity") {
		if v, _ := o.Field("sales_details.crm_opportunity_id"); v == "P-1" {
			ok = o.Fields["2"] == "Positional"
		}
	}
	if !ok {
		t.Error("no object P-1 with column 2")
	}
	for _, tc := range []struct {
		q    url.Values
		want string
	}{
		{url.Values{"integration_id": {demo.AccountIntegration}}, "not opportunities"},
		{opps("has_header_row", "sometimes"), "has_header_row"},
		{opps("content_type", "XLSX"), "content_type"},
	} {
		code, body := e.do("POST", "/bulk/v1/bulkload_opportunity", tc.q, "text/csv", strings.NewReader("a\n"))
		if code != 400 || !strings.Contains(body["message"].(string), tc.want) {
			t.Errorf("%v: %d %v", tc.q, code, body)
		}
	}
}

func TestBulkDiscard(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0), WithBulkDiscard())
	before := len(e.srv.Objects(""))
	_, ack := e.load(opps(), "text/csv", oppCSV)
	_, st := e.status(demo.OpportunityIntegration, ack["execution_id"].(string), nil)
	if st["success_count"] != 2.0 || st["error_count"] != 2.0 || len(e.srv.Objects("")) != before {
		t.Errorf("status %v, %d objects", st, len(e.srv.Objects("")))
	}
}

func TestBulkNeedsToken(t *testing.T) {
	srv := NewServer(WithDemoData())
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/bulk/v1/bulkload?integration_id="+demo.OpportunityIntegration, "text/csv", strings.NewReader("a\n"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("status %d, want 401", resp.StatusCode)
	}
}

func FuzzBulkParse(f *testing.F) {
	f.Add("a,b\n1,2\n", false)
	f.Add(`[{"a":{"b":1}},{"c":[1,2]}]`, true)
	f.Add("a\n\"x\"\"y\"\n", false)
	f.Fuzz(func(t *testing.T, body string, isJSON bool) {
		format := formatCSV
		if isJSON {
			format = formatJSON
		}
		in := Integration{ID: "i", ObjectType: "opportunity", KeyField: "a"}
		kinds := defaultFieldKinds["opportunity"]
		parseRows(strings.NewReader(body), format, ',', true, func(rec record) error {
			if len(rec.cols) < len(rec.vals) {
				t.Fatalf("record with more values than columns: %+v", rec)
			}
			checkRecord(in, kinds, "a", rec, true)
			rec.dataRow()
			return nil
		})
	})
}

// TestBulkSetFieldKind: a field kind declared by a test is checked on the
// rows of a load like the built-in ones, and named in the error.
func TestBulkSetFieldKind(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0))
	e.srv.SetBulkFieldKind("account", "account_info.founded", "date")
	e.srv.SetBulkFieldKind("account", "account_info.listed", "bool")
	csv := "account_info.external_account_id,name,account_info.founded,account_info.listed\n" +
		"ACC-1,Good,1999-05-01,true\n" +
		"ACC-2,Bad date,last spring,false\n" +
		"ACC-3,Bad bool,2001-01-01,perhaps\n"
	code, ack := e.load(url.Values{"integration_id": {demo.AccountIntegration}}, "text/csv", csv)
	if code != 200 {
		t.Fatalf("load: %d %v", code, ack)
	}
	_, st := e.status(demo.AccountIntegration, ack["execution_id"].(string), url.Values{"include_errors": {"true"}})
	if st["success_count"] != 1.0 || st["error_count"] != 2.0 {
		t.Fatalf("status %v, want 1 success and 2 errors", st)
	}
	errs, _ := st["errors"].([]any)
	for i, want := range map[int]string{0: "account_info.founded", 1: "account_info.listed"} {
		if i >= len(errs) {
			t.Fatalf("errors %v", errs)
		}
		if msg, _ := errs[i].(map[string]any)["message"].(string); !strings.Contains(msg, want) {
			t.Errorf("error %d %q does not name %s", i, msg, want)
		}
	}
	for _, o := range e.srv.Objects("account") {
		if v, _ := o.Field("account_info.external_account_id"); v == "ACC-1" {
			if d, _ := o.Field("account_info.founded"); d != "1999-05-01" {
				t.Errorf("founded stored as %v", d)
			}
			return
		}
	}
	t.Error("ACC-1 was not stored")
}

// TestBulkMissingKeyNamesField: a row without a key value is refused with
// the deployed service's words followed by the key field's name, and its
// column when the columns are named by position.
func TestBulkMissingKeyNamesField(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0))
	_, ack := e.load(url.Values{"integration_id": {demo.AccountIntegration}}, "text/csv", "id,name\nACC-9,Keyed on the wrong column\n")
	_, st := e.status(demo.AccountIntegration, ack["execution_id"].(string), url.Values{"include_errors": {"true"}})
	errs, _ := st["errors"].([]any)
	if len(errs) != 1 || errs[0].(map[string]any)["message"] != `Missing value of key field "account_info.external_account_id"` {
		t.Errorf("errors = %v", st["errors"])
	}

	_, ack = e.do("POST", "/bulk/v1/bulkload_opportunity", opps("has_header_row", "false"), "text/csv", strings.NewReader(",No key\n"))
	_, st = e.status(demo.OpportunityIntegration, ack["execution_id"].(string), url.Values{"include_errors": {"true"}})
	errs, _ = st["errors"].([]any)
	if len(errs) != 1 || errs[0].(map[string]any)["message"] != `Missing value of key field "sales_details.crm_opportunity_id" (column 1)` {
		t.Errorf("errors = %v", st["errors"])
	}
}

// TestBulkSignedUploadMethod: the upload URL answers 403 to a request its
// signature does not cover: another method than POST by default; with
// WithSignedUploads, another method or content type than the signed ones.
func TestBulkSignedUploadMethod(t *testing.T) {
	for _, tc := range []struct {
		name          string
		opts          []Option
		method, ctype string
		want          int
	}{
		{"default POST", nil, "POST", "text/csv", 200},
		{"default refuses PUT", nil, "PUT", "text/csv", 403},
		{"signed PUT", []Option{WithDeployment(Deployment{UploadMethod: "put", UploadContentType: "text/csv"})}, "PUT", "text/csv", 200},
		{"signed PUT refuses POST", []Option{WithDeployment(Deployment{UploadMethod: "PUT", UploadContentType: "text/csv"})}, "POST", "text/csv", 403},
		{"signed type refuses another", []Option{WithDeployment(Deployment{UploadMethod: "PUT", UploadContentType: "text/csv"})}, "PUT", "application/octet-stream", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newBulkEnv(t, tc.opts...)
			_, tk := e.do("GET", "/bulk/v1/bulkload/"+demo.OpportunityIntegration+"/upload_url", url.Values{"file_name": {"a.csv"}}, "", nil)
			u, _ := url.Parse(tk["upload_url"].(string))
			code, body := e.do(tc.method, u.Path, nil, tc.ctype, strings.NewReader("sales_details.crm_opportunity_id\nS-1\n"))
			if code != tc.want {
				t.Fatalf("%s %s: %d %v, want %d", tc.method, tc.ctype, code, body, tc.want)
			}
			if code == 403 && !strings.Contains(body["message"].(string), "signature") {
				t.Errorf("403 message %q does not name the signature", body["message"])
			}
			q := opps("file_token", tk["upload_token"].(string), "data_format", "CSV")
			if code, ack := e.load(q, "", ""); (code == 200) != (tc.want == 200) {
				t.Errorf("load of the token: %d %v", code, ack)
			}
		})
	}
}

// TestBulkXLSXStreamWritten loads a workbook written the way the command
// line exports a report (a stream writer, typed cells: text, integers,
// decimals, booleans, an empty cell) and checks every value the fake read.
func TestBulkXLSXStreamWritten(t *testing.T) {
	e := newBulkEnv(t, WithBulkDelay(0))
	// Written by excelize's stream writer: a header, then
	// {"S-1", "Streamed, \"quoted\" & <escaped>", int64(1234), true} and
	// {"S-2", "Décimal", 12.5, nil}.
	data := excelizeWorkbook(t, "excelize-stream.xlsx")
	code, ack := loadXLSX(t, e, data)
	if code != 200 {
		t.Fatalf("load: %d %v", code, ack)
	}
	got := map[string]map[string]any{}
	for _, o := range e.srv.Objects("opportunity") {
		if k, _ := o.Field("sales_details.crm_opportunity_id"); k == "S-1" || k == "S-2" {
			got[k.(string)] = o.Fields
		}
	}
	s1, s2 := got["S-1"], got["S-2"]
	if s1 == nil || s2 == nil {
		t.Fatalf("objects = %v", got)
	}
	if s1["name"] != `Streamed, "quoted" & <escaped>` || s1["note"] != "TRUE" || s2["name"] != "Décimal" {
		t.Errorf("S-1 = %v, S-2 = %v", s1, s2)
	}
	if a1, a2 := fmt.Sprint(s1["amount"]), fmt.Sprint(s2["amount"]); a1 != "1234" || a2 != "12.5" {
		t.Errorf("amounts = %s, %s", a1, a2)
	}
	if _, ok := s2["note"]; ok {
		t.Errorf("S-2 has a note: %v", s2)
	}
}
