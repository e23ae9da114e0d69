package bulk_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)

const base = mocktest.BaseURL

// mockClient is mocktest.New with an environment, whose header the wire
// tests check.
func mockClient(t *testing.T, opts ...partner.Option) (*partner.Client, *httpmock.MockTransport) {
	return mocktest.New(t, append([]partner.Option{partner.WithEnvironment("sandbox.example.com"), partner.WithEnvironmentHeader("x-svc-env")}, opts...)...)
}

func jsonResponse(body string) *http.Response {
	r := httpmock.NewStringResponse(200, body)
	r.Header.Set("Content-Type", "application/json")
	return r
}

func TestLoadWire(t *testing.T) {
	c, mt := mockClient(t)
	mt.RegisterResponder("POST", base+"/bulk/v1/bulkload", func(req *http.Request) (*http.Response, error) {
		q := req.URL.Query()
		if q.Get("integration_id") != "int-1" || q.Get("data_format") != "CSV" || q.Get("column_delimiter") != ";" || q.Has("file_token") {
			t.Errorf("query = %v", q)
		}
		if ct := req.Header.Get("Content-Type"); ct != "text/csv" {
			t.Errorf("Content-Type = %q", ct)
		}
		if req.Header.Get("Authorization") != "Bearer "+mocktest.AccessToken {
			t.Errorf("Authorization = %q", req.Header.Get("Authorization"))
		}
		b, _ := io.ReadAll(req.Body)
		if string(b) != "id;name\n1;a\n" {
			t.Errorf("body = %q", b)
		}
		return jsonResponse(`{"integration_id":"int-1","execution_id":"exe-42","created_at":"2024-05-01T10:00:00Z","data_format":"CSV","column_delimiter":";"}`), nil
	})
	ack, err := c.Bulk.Load(context.Background(), bulk.LoadParams{IntegrationID: "int-1", Format: "csv", ColumnDelimiter: ";"}, strings.NewReader("id;name\n1;a\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := bulk.Ack{IntegrationID: "int-1", ExecutionID: "exe-42", CreatedAt: time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC), Format: bulk.CSV}
	if *ack != want {
		t.Errorf("ack = %+v, want %+v", *ack, want)
	}
}

// TestStatusWire decodes a status with three errors, whose data_row comes
// as an object, as a string holding an object, and as plain text.
func TestStatusWire(t *testing.T) {
	c, mt := mockClient(t)
	mt.RegisterResponder("GET", base+"/bulk/v1/status/int%2F1", func(req *http.Request) (*http.Response, error) {
		if req.URL.RawPath != "/bulk/v1/status/int%2F1" {
			t.Errorf("path = %q", req.URL.RawPath)
		}
		q := req.URL.Query()
		if q.Get("execution_id") != "exe-42" || q.Get("include_errors") != "true" || q.Get("max_errors") != "3" {
			t.Errorf("query = %v", q)
		}
		return jsonResponse(`{
			"integration_id": "int/1",
			"execution_id": "exe-42",
			"status": "completed",
			"status_msg": "",
			"input_count": 10,
			"success_count": 6,
			"error_count": 3,
			"skip_count": 1,
			"started_at": "2024-05-01T10:00:00Z",
			"completed_at": "2024-05-01T10:00:07.5Z",
			"include_errors": true,
			"errors": [
				{"id": "", "message": "Missing value of key field", "data_row": {"name": "No key", "amount": "5"}},
				{"id": "CRM-2", "message": "invalid value for field \"amount\"", "data_row": "{\"sales_details.crm_opportunity_id\":\"CRM-2\",\"amount\":\"lots\"}"},
				{"id": "CRM-3", "message": "duplicate", "data_row": "CRM-3,x"}
			]
		}`), nil
	})
	ex, err := c.Bulk.Status(context.Background(), "int/1", "exe-42", bulk.StatusParams{IncludeErrors: new(true), MaxErrors: new(3)})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Status != bulk.StateCompleted || !ex.Done() || ex.InputCount != 10 || ex.SuccessCount != 6 || ex.ErrorCount != 3 || ex.SkipCount != 1 ||
		!ex.IncludeErrors || ex.IntegrationID != "int/1" {
		t.Errorf("execution = %+v", ex)
	}
	if !ex.StartedAt.Equal(time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)) || ex.CompletedAt.Sub(ex.StartedAt) != 7500*time.Millisecond {
		t.Errorf("times = %v %v", ex.StartedAt, ex.CompletedAt)
	}
	if len(ex.Errors) != 3 {
		t.Fatalf("errors = %+v", ex.Errors)
	}
	if e := ex.Errors[0]; e.ID != "" || e.Message != "Missing value of key field" || e.Row["name"] != "No key" || e.RowText != "" {
		t.Errorf("error 0 = %+v", e)
	}
	if e := ex.Errors[1]; e.ID != "CRM-2" || e.Row["amount"] != "lots" || e.RowText != "" {
		t.Errorf("error 1 = %+v", e)
	}
	if e := ex.Errors[2]; e.Row != nil || e.RowText != "CRM-3,x" {
		t.Errorf("error 2 = %+v", e)
	}
}

func TestStatusWireRunning(t *testing.T) {
	c, mt := mockClient(t)
	mt.RegisterResponder("GET", base+"/bulk/v1/status/int-1", func(req *http.Request) (*http.Response, error) {
		if q := req.URL.Query(); q.Has("include_errors") || q.Has("max_errors") {
			t.Errorf("defaults sent: %v", q)
		}
		return jsonResponse(`{"integration_id":"int-1","execution_id":"exe-1","status":"running","input_count":4,"started_at":"2024-05-01T10:00:00Z","completed_at":""}`), nil
	})
	ex, err := c.Bulk.Status(context.Background(), "int-1", "exe-1", bulk.StatusParams{})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Done() || ex.Status != bulk.StateRunning || !ex.CompletedAt.IsZero() || ex.InputCount != 4 {
		t.Errorf("execution = %+v", ex)
	}
}

func TestLoadOpportunitiesWire(t *testing.T) {
	c, mt := mockClient(t)
	calls := 0
	mt.RegisterResponder("POST", base+"/bulk/v1/bulkload_opportunity", func(req *http.Request) (*http.Response, error) {
		calls++
		q := req.URL.Query()
		wantHeader := "true"
		if calls == 2 {
			wantHeader = "false"
		}
		if q.Get("integration_id") != "int-opp" || q.Get("content_type") != "CSV" || q.Get("has_header_row") != wantHeader {
			t.Errorf("call %d: query = %v", calls, q)
		}
		return jsonResponse(`{"integration_id":"int-opp","execution_id":"exe-7","created_at":"2024-05-01T10:00:00Z"}`), nil
	})
	ctx := context.Background()
	ack, err := c.Bulk.LoadOpportunities(ctx, bulk.LoadOpportunitiesParams{IntegrationID: "int-opp"}, strings.NewReader("a\n1\n"))
	if err != nil || ack.ExecutionID != "exe-7" || ack.Format != "" {
		t.Fatalf("ack = %+v, %v", ack, err)
	}
	if _, err := c.Bulk.LoadOpportunities(ctx, bulk.LoadOpportunitiesParams{IntegrationID: "int-opp", NoHeaderRow: true}, strings.NewReader("1\n")); err != nil {
		t.Fatal(err)
	}
}

func TestLoadRowsWire(t *testing.T) {
	c, mt := mockClient(t)
	mt.RegisterResponder("POST", base+"/bulk/v1/bulkload", func(req *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(req.Body)
		want := "[{\"id\":\"A\",\"amount\":1.5}\n,{\"id\":\"B\",\"amount\":0}\n]"
		if string(b) != want || req.URL.Query().Get("data_format") != "JSON" || req.Header.Get("Content-Type") != "application/json" {
			t.Errorf("body %q, query %v", b, req.URL.Query())
		}
		return jsonResponse(`{"integration_id":"int-1","execution_id":"exe-1","created_at":"2024-05-01T10:00:00Z","data_format":"JSON","column_delimiter":","}`), nil
	})
	type row struct {
		ID     string  `json:"id"`
		Amount float64 `json:"amount"`
	}
	if _, err := bulk.LoadRows(context.Background(), c.Bulk, bulk.LoadParams{IntegrationID: "int-1"}, []row{{"A", 1.5}, {"B", 0}}); err != nil {
		t.Fatal(err)
	}
}

// filePart reads the multipart/form-data body of req and returns its one
// part: form name, file name, Content-Type and content.
func filePart(t *testing.T, req *http.Request) (name, fileName, ctype, content string) {
	t.Helper()
	mtype, params, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || mtype != "multipart/form-data" {
		t.Fatalf("Content-Type = %q", req.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(req.Body, params["boundary"])
	part, err := mr.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(part)
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("more than one part: %v", err)
	}
	return part.FormName(), part.FileName(), part.Header.Get("Content-Type"), string(b)
}

// TestLoadAttachmentWire pins the published attachment load: POST
// /bulk/v1/bulkload, multipart/form-data with the file in the part "file",
// and data_format always in the query, from the params or else the file
// name's extension.
func TestLoadAttachmentWire(t *testing.T) {
	for _, tc := range []struct {
		name, fileName, ctype string
		p                     bulk.LoadParams
		query                 string
	}{
		{"name says it", `data "q".json`, "application/json", bulk.LoadParams{IntegrationID: "int-1"}, "data_format=JSON&integration_id=int-1"},
		{"name says xlsx", "DATA.XLSX", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", bulk.LoadParams{IntegrationID: "int-1"}, "data_format=XLSX&integration_id=int-1"},
		{"params say it", "data.txt", "application/json", bulk.LoadParams{IntegrationID: "int-1", Format: "json"}, "data_format=JSON&integration_id=int-1"},
		{"params over name", "data.csv", "application/json", bulk.LoadParams{IntegrationID: "int-1", Format: bulk.JSON}, "data_format=JSON&integration_id=int-1"},
		{"delimiter", "data.csv", "text/csv", bulk.LoadParams{IntegrationID: "int-1", ColumnDelimiter: ";"}, "column_delimiter=%3B&data_format=CSV&integration_id=int-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, mt := mockClient(t)
			mt.RegisterResponder("POST", base+"/bulk/v1/bulkload", func(req *http.Request) (*http.Response, error) {
				name, fileName, ctype, content := filePart(t, req)
				if name != "file" || fileName != tc.fileName || content != `[{"id":"1"}]` || ctype != tc.ctype {
					t.Errorf("part %q %q %q %q", name, fileName, ctype, content)
				}
				if got := req.URL.RawQuery; got != tc.query {
					t.Errorf("query = %s, want %s", got, tc.query)
				}
				return jsonResponse(`{"integration_id":"int-1","execution_id":"exe-1","created_at":"2024-05-01T10:00:00Z","data_format":"JSON"}`), nil
			})
			ack, err := c.Bulk.LoadAttachment(context.Background(), tc.p, tc.fileName, strings.NewReader(`[{"id":"1"}]`))
			if err != nil || ack.ExecutionID != "exe-1" {
				t.Fatalf("ack %+v, %v", ack, err)
			}
		})
	}
}

// TestLoadOpportunitiesAttachmentWire pins the published attachment load
// of opportunities: POST /bulk/v1/bulkload_opportunity, the file in the
// part "file", query integration_id, has_header_row and always
// content_type (XLSX allowed).
func TestLoadOpportunitiesAttachmentWire(t *testing.T) {
	c, mt := mockClient(t)
	var queries []string
	mt.RegisterResponder("POST", base+"/bulk/v1/bulkload_opportunity", func(req *http.Request) (*http.Response, error) {
		name, fileName, ctype, content := filePart(t, req)
		if name != "file" || fileName != "opps.xlsx" || content != "PK-data" ||
			ctype != "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" {
			t.Errorf("part %q %q %q %q", name, fileName, ctype, content)
		}
		queries = append(queries, req.URL.RawQuery)
		return jsonResponse(`{"integration_id":"int-opp","execution_id":"exe-7","created_at":"2024-05-01T10:00:00Z"}`), nil
	})
	ctx := context.Background()
	ack, err := c.Bulk.LoadOpportunitiesAttachment(ctx, bulk.LoadOpportunitiesParams{IntegrationID: "int-opp"}, "opps.xlsx", strings.NewReader("PK-data"))
	if err != nil || ack.ExecutionID != "exe-7" || ack.Format != "" {
		t.Fatalf("ack %+v, %v", ack, err)
	}
	if _, err := c.Bulk.LoadOpportunitiesAttachment(ctx, bulk.LoadOpportunitiesParams{IntegrationID: "int-opp", NoHeaderRow: true, Format: "xlsx", ColumnDelimiter: ";"}, "opps.xlsx", strings.NewReader("PK-data")); err != nil {
		t.Fatal(err)
	}
	want := []string{"content_type=XLSX&has_header_row=true&integration_id=int-opp", "column_delimiter=%3B&content_type=XLSX&has_header_row=false&integration_id=int-opp"}
	if strings.Join(queries, " ") != strings.Join(want, " ") {
		t.Errorf("queries = %q, want %q", queries, want)
	}
	for name, err := range map[string]error{
		"no integration": func() error {
			_, err := c.Bulk.LoadOpportunitiesAttachment(ctx, bulk.LoadOpportunitiesParams{}, "a.csv", strings.NewReader("x"))
			return err
		}(),
		"no file name": func() error {
			_, err := c.Bulk.LoadOpportunitiesAttachment(ctx, bulk.LoadOpportunitiesParams{IntegrationID: "i"}, "", strings.NewReader("x"))
			return err
		}(),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestAttachmentWithoutFormat: an attachment whose format neither the
// params nor the file name says is refused before anything is sent, with
// an error naming the file and what to set.
func TestAttachmentWithoutFormat(t *testing.T) {
	c, mt := mockClient(t)
	ctx := context.Background()
	_, err := c.Bulk.LoadAttachment(ctx, bulk.LoadParams{IntegrationID: "int-1"}, "export.txt", strings.NewReader("a\n1\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "partner: bulk: ") || !strings.Contains(err.Error(), `"export.txt"`) || !strings.Contains(err.Error(), "LoadParams.Format") {
		t.Errorf("LoadAttachment: %v", err)
	}
	_, err = c.Bulk.LoadOpportunitiesAttachment(ctx, bulk.LoadOpportunitiesParams{IntegrationID: "int-1"}, "opps", strings.NewReader("a\n1\n"))
	if err == nil || !strings.Contains(err.Error(), `"opps"`) || !strings.Contains(err.Error(), "LoadOpportunitiesParams.Format") {
		t.Errorf("LoadOpportunitiesAttachment: %v", err)
	}
	_, err = c.Bulk.LoadFile(ctx, bulk.LoadFileParams{IntegrationID: "int-1"}, "export.txt")
	if err == nil || !strings.Contains(err.Error(), `"export.txt"`) || !strings.Contains(err.Error(), "LoadFileParams.Format") {
		t.Errorf("LoadFile: %v", err)
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestUploadWire(t *testing.T) {
	c, mt := mockClient(t)
	signed := "https://storage.example.net/bucket/obj-1?sig=abc&exp=99"
	mt.RegisterResponder("GET", base+"/bulk/v1/bulkload/int-1/upload_url", func(req *http.Request) (*http.Response, error) {
		if req.URL.Query().Get("file_name") != "opps 2024.csv" {
			t.Errorf("query = %v", req.URL.Query())
		}
		return jsonResponse(`{"upload_url":"` + signed + `","upload_token":"tok-9"}`), nil
	})
	mt.RegisterResponder("POST", signed, func(req *http.Request) (*http.Response, error) {
		if req.Header.Get("Authorization") != "" || req.Header.Get("x-svc-env") != "" {
			t.Errorf("credentials sent to the signed URL: %v", req.Header)
		}
		if b, _ := io.ReadAll(req.Body); string(b) != "a\n1\n" {
			t.Errorf("body = %q", b)
		}
		return httpmock.NewStringResponse(200, ""), nil
	})
	mt.RegisterResponder("POST", base+"/bulk/v1/bulkload", func(req *http.Request) (*http.Response, error) {
		if q := req.URL.Query(); q.Get("file_token") != "tok-9" || q.Get("data_format") != "CSV" {
			t.Errorf("query = %v", q)
		}
		if req.Body != nil {
			if b, _ := io.ReadAll(req.Body); len(b) != 0 {
				t.Errorf("body = %q", b)
			}
		}
		return jsonResponse(`{"integration_id":"int-1","execution_id":"exe-1","created_at":"2024-05-01T10:00:00Z","data_format":"CSV","column_delimiter":","}`), nil
	})
	ctx := context.Background()
	tk, err := c.Bulk.UploadURL(ctx, "int-1", "opps 2024.csv")
	if err != nil || tk.UploadURL != signed || tk.UploadToken != "tok-9" {
		t.Fatalf("ticket %+v, %v", tk, err)
	}
	if err := c.Bulk.Upload(ctx, tk, bulk.UploadParams{}, strings.NewReader("a\n1\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: "int-1", Format: bulk.CSV, FileToken: tk.UploadToken}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestLoadNotRetriedOn503(t *testing.T) {
	c, mt := mockClient(t, partner.WithRetryWait(time.Millisecond, time.Millisecond))
	mt.RegisterResponder("POST", base+"/bulk/v1/bulkload", httpmock.NewStringResponder(503, `{"error":"unavailable","message":"try later"}`))
	_, err := c.Bulk.Load(context.Background(), bulk.LoadParams{IntegrationID: "int-1"}, strings.NewReader("a\n1\n"))
	if !partner.IsServerError(err) {
		t.Fatalf("err = %v", err)
	}
	if n := mt.GetCallCountInfo()["POST "+base+"/bulk/v1/bulkload"]; n != 1 {
		t.Errorf("load sent %d times, want 1", n)
	}
}

func TestValidation(t *testing.T) {
	c, mt := mockClient(t)
	ctx := context.Background()
	body := strings.NewReader("a\n")
	for name, err := range map[string]error{
		"no integration": func() error { _, err := c.Bulk.Load(ctx, bulk.LoadParams{}, body); return err }(),
		"bad format": func() error {
			_, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: "i", Format: "XML"}, body)
			return err
		}(),
		"bad delimiter": func() error {
			_, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: "i", ColumnDelimiter: ";;"}, body)
			return err
		}(),
		"no body": func() error { _, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: "i"}, nil); return err }(),
		"rows as CSV": func() error {
			_, err := bulk.LoadRows(ctx, c.Bulk, bulk.LoadParams{IntegrationID: "i", Format: bulk.CSV}, []int{})
			return err
		}(),
		"opp XLSX": func() error {
			_, err := c.Bulk.LoadOpportunities(ctx, bulk.LoadOpportunitiesParams{IntegrationID: "i", Format: bulk.XLSX}, body)
			return err
		}(),
		"no execution": func() error { _, err := c.Bulk.Status(ctx, "i", "", bulk.StatusParams{}); return err }(),
		"negative max": func() error {
			_, err := c.Bulk.Status(ctx, "i", "e", bulk.StatusParams{MaxErrors: new(-1)})
			return err
		}(),
		"relative URL":  c.Bulk.Upload(ctx, &bulk.Ticket{UploadURL: "/upload/x"}, bulk.UploadParams{}, body),
		"upload method": c.Bulk.Upload(ctx, &bulk.Ticket{UploadURL: "https://storage.example.net/x"}, bulk.UploadParams{Method: "PATCH"}, body),
		"upload type":   c.Bulk.Upload(ctx, &bulk.Ticket{UploadURL: "https://storage.example.net/x"}, bulk.UploadParams{ContentType: "text/"}, body),
		"no file name":  func() error { _, err := c.Bulk.UploadURL(ctx, "i", ""); return err }(),
		"unknown file ext": func() error {
			_, err := c.Bulk.LoadFile(ctx, bulk.LoadFileParams{IntegrationID: "i"}, "data.txt")
			return err
		}(),
		"file upload method": func() error {
			_, err := c.Bulk.LoadFile(ctx, bulk.LoadFileParams{IntegrationID: "i", Upload: bulk.UploadParams{Method: "PATCH"}}, "data.csv")
			return err
		}(),
		"file no integration": func() error { _, err := c.Bulk.LoadFile(ctx, bulk.LoadFileParams{}, "data.csv"); return err }(),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), "partner: bulk: ") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Errorf("%d requests sent for invalid calls", n)
	}
}

// TestUploadWireSigned feeds the published ticket example, a cloud
// storage URL signed with Expires, an access id and a Signature: Upload
// sends the method and content type UploadParams choose (PUT here, the
// query untouched, no credentials), and a 403 of the storage host names
// the signature as the likely cause.
func TestUploadWireSigned(t *testing.T) {
	c, mt := mockClient(t)
	mt.RegisterResponder("GET", base+"/bulk/v1/bulkload/int-1/upload_url", func(*http.Request) (*http.Response, error) {
		return jsonResponse(`{
  "upload_url": "https://storage.example.net/server/file_name.extension?Expires=12345567&AccessId=foobar&Signature=barfoo",
  "upload_token": "eYgh4bLaH2qemcas9dTOKEN"
}`), nil
	})
	ctx := context.Background()
	tk, err := c.Bulk.UploadURL(ctx, "int-1", "file_name.csv")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	mt.RegisterResponder("PUT", "https://storage.example.net/server/file_name.extension", func(req *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(req.Body)
		got = append(got, fmt.Sprintf("%s %s %s %q auth=%q", req.Method, req.URL.RawQuery, req.Header.Get("Content-Type"), b, req.Header.Get("Authorization")))
		return httpmock.NewStringResponse(200, ""), nil
	})
	if err := c.Bulk.Upload(ctx, tk, bulk.UploadParams{Method: "put", ContentType: "text/csv"}, strings.NewReader("a\n1\n")); err != nil {
		t.Fatal(err)
	}
	want := `PUT Expires=12345567&AccessId=foobar&Signature=barfoo text/csv "a\n1\n" auth=""`
	if len(got) != 1 || got[0] != want {
		t.Errorf("requests %q, want %q", got, want)
	}

	mt.RegisterResponder("POST", "https://storage.example.net/server/file_name.extension", func(req *http.Request) (*http.Response, error) {
		if req.Header.Get("Content-Type") != "application/octet-stream" {
			t.Errorf("Content-Type = %q", req.Header.Get("Content-Type"))
		}
		return httpmock.NewStringResponse(403, `<Error><Code>SignatureDoesNotMatch</Code></Error>`), nil
	})
	err = c.Bulk.Upload(ctx, tk, bulk.UploadParams{}, strings.NewReader("a\n1\n"))
	var perr *partner.Error
	if !errors.As(err, &perr) || perr.StatusCode != 403 {
		t.Fatalf("err = %v", err)
	}
	msg := err.Error()
	for _, w := range []string{"signature", "method (POST sent)", "content type (application/octet-stream sent)", "expiry", "UploadParams"} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not say %q", msg, w)
		}
	}
	if strings.Count(msg, "partner: ") != 1 || strings.Contains(msg, "barfoo") {
		t.Errorf("error %q: prefix once, no signature value", msg)
	}
}

// TestUploadPutIsRepeated: a PUT upload replaces the stored file, so a
// 503 is followed by a second attempt with the whole file; a POST upload
// is not repeated once the storage host may have received it.
func TestUploadPutIsRepeated(t *testing.T) {
	c, mt := mockClient(t, partner.WithMaxRetries(1))
	const signed = "https://storage.example.net/bucket/obj-2"
	var bodies []string
	answer := func(req *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(req.Body)
		bodies = append(bodies, req.Method+" "+string(b))
		if len(bodies) == 1 {
			return httpmock.NewStringResponse(503, ""), nil
		}
		return httpmock.NewStringResponse(200, ""), nil
	}
	mt.RegisterResponder("PUT", signed, answer)
	mt.RegisterResponder("POST", signed, answer)
	ctx := context.Background()
	if err := c.Bulk.Upload(ctx, &bulk.Ticket{UploadURL: signed}, bulk.UploadParams{Method: "PUT"}, strings.NewReader("a\n1\n")); err != nil {
		t.Fatal(err)
	}
	if want := []string{"PUT a\n1\n", "PUT a\n1\n"}; strings.Join(bodies, "|") != strings.Join(want, "|") {
		t.Errorf("attempts %q, want %q", bodies, want)
	}
	bodies = nil
	err := c.Bulk.Upload(ctx, &bulk.Ticket{UploadURL: signed}, bulk.UploadParams{}, strings.NewReader("a\n1\n"))
	if !partner.IsOutcomeUnknown(err) || len(bodies) != 1 {
		t.Errorf("POST: %d attempts, err %v", len(bodies), err)
	}
}

// TestStatusWireMisspelledSuccessCount feeds the status example of the
// deployed service's description, which spells the success count
// succcess_count (three c's).
func TestStatusWireMisspelledSuccessCount(t *testing.T) {
	for name, tc := range map[string]struct {
		body string
		want int64
	}{
		"three c's only":          {`{"integration_id":"int-1","execution_id":"exe-1","status":"completed","input_count":5,"succcess_count":4,"error_count":1,"skip_count":0}`, 4},
		"both, correct wins":      {`{"integration_id":"int-1","execution_id":"exe-1","status":"completed","input_count":5,"succcess_count":4,"success_count":3,"error_count":2,"skip_count":0}`, 3},
		"both, correct zero wins": {`{"integration_id":"int-1","execution_id":"exe-1","status":"completed","input_count":5,"success_count":0,"succcess_count":5,"error_count":5}`, 0},
		"correct only":            {`{"integration_id":"int-1","execution_id":"exe-1","status":"completed","input_count":5,"success_count":5}`, 5},
	} {
		t.Run(name, func(t *testing.T) {
			c, mt := mockClient(t)
			mt.RegisterResponder("GET", base+"/bulk/v1/status/int-1", httpmock.ResponderFromResponse(jsonResponse(tc.body)))
			ex, err := c.Bulk.Status(context.Background(), "int-1", "exe-1", bulk.StatusParams{})
			if err != nil {
				t.Fatal(err)
			}
			if ex.SuccessCount != tc.want || ex.InputCount != 5 {
				t.Errorf("SuccessCount = %d, InputCount = %d; want %d, 5", ex.SuccessCount, ex.InputCount, tc.want)
			}
		})
	}
}

// TestStatusWireExplicitFalse checks that include_errors=false and
// max_errors=0 are sent when chosen (the service's defaults vary), and
// nothing when left nil.
func TestStatusWireExplicitFalse(t *testing.T) {
	for name, tc := range map[string]struct {
		opts      bulk.StatusParams
		wantQuery string
	}{
		"nil":           {bulk.StatusParams{}, "execution_id=exe-1"},
		"false":         {bulk.StatusParams{IncludeErrors: new(false)}, "execution_id=exe-1&include_errors=false"},
		"true and five": {bulk.StatusParams{IncludeErrors: new(true), MaxErrors: new(5)}, "execution_id=exe-1&include_errors=true&max_errors=5"},
		"zero":          {bulk.StatusParams{MaxErrors: new(0)}, "execution_id=exe-1&max_errors=0"},
	} {
		t.Run(name, func(t *testing.T) {
			c, mt := mockClient(t)
			mt.RegisterResponder("GET", base+"/bulk/v1/status/int-1", func(req *http.Request) (*http.Response, error) {
				if got := req.URL.Query().Encode(); got != tc.wantQuery {
					t.Errorf("query = %s, want %s", got, tc.wantQuery)
				}
				return jsonResponse(`{"integration_id":"int-1","execution_id":"exe-1","status":"running","input_count":1,"max_errors":5,"include_errors":false}`), nil
			})
			if _, err := c.Bulk.Status(context.Background(), "int-1", "exe-1", tc.opts); err != nil {
				t.Fatal(err)
			}
		})
	}
}
