package bulk_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/jarcoal/httpmock"

	"github.com/partnerapi/partner-go/bulk"
)

// TestLoadFileWire: LoadFile asks for a ticket with the file's base name,
// uploads the file as LoadFileParams.Upload says, then loads it by its
// token with the params' format (over the file name's extension) and
// delimiter, and no body.
func TestLoadFileWire(t *testing.T) {
	c, mt := mockClient(t)
	path := filepath.Join(t.TempDir(), "export.txt")
	if err := os.WriteFile(path, []byte(`[{"id":"1"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	record := func(req *http.Request) {
		var b []byte
		if req.Body != nil {
			b, _ = io.ReadAll(req.Body)
		}
		got = append(got, fmt.Sprintf("%s %s?%s %s %q", req.Method, req.URL.Path, req.URL.RawQuery, req.Header.Get("Content-Type"), b))
	}
	mt.RegisterResponder("GET", base+"/bulk/v1/bulkload/int-1/upload_url", func(req *http.Request) (*http.Response, error) {
		record(req)
		return jsonResponse(`{"upload_url":"https://storage.example.net/up/1?Signature=s","upload_token":"tok-1"}`), nil
	})
	mt.RegisterResponder("PUT", "https://storage.example.net/up/1", func(req *http.Request) (*http.Response, error) {
		record(req)
		return httpmock.NewStringResponse(200, ""), nil
	})
	mt.RegisterResponder("POST", base+"/bulk/v1/bulkload", func(req *http.Request) (*http.Response, error) {
		record(req)
		return jsonResponse(`{"integration_id":"int-1","execution_id":"exe-9","created_at":"2024-05-01T10:00:00Z","data_format":"JSON","column_delimiter":";"}`), nil
	})
	ack, err := c.Bulk.LoadFile(context.Background(), bulk.LoadFileParams{
		IntegrationID: "int-1", Format: "json", ColumnDelimiter: ";",
		Upload: bulk.UploadParams{Method: "PUT", ContentType: "application/json"},
	}, path)
	if err != nil || ack.ExecutionID != "exe-9" || ack.Format != bulk.JSON {
		t.Fatalf("LoadFile = %+v, %v", ack, err)
	}
	want := []string{
		`GET /bulk/v1/bulkload/int-1/upload_url?file_name=export.txt  ""`,
		`PUT /up/1?Signature=s application/json "[{\"id\":\"1\"}]"`,
		`POST /bulk/v1/bulkload?column_delimiter=%3B&data_format=JSON&file_token=tok-1&integration_id=int-1  ""`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("requests\n%q\nwant\n%q", got, want)
	}
}
