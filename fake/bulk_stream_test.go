package fake

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake/demo"
)

// TestBulkLoadWritesInBatches: a load writes its valid rows in batches as
// it reads them, so a body found malformed after its first batch leaves
// that batch written (and records no execution), while one malformed
// within its first batch changes nothing.
func TestBulkLoadWritesInBatches(t *testing.T) {
	e := newMemEnv(t)
	defer e.f.Close()
	before := len(e.f.Objects("opportunity"))
	broken := func(rows int) io.Reader {
		return io.MultiReader(&csvRows{n: rows, from: before * 1000}, strings.NewReader("K-x,\"unterminated\n"))
	}
	e.want(e.send("POST", loadPath(), "text/csv", broken(applyBatchRows-1)), 400, "malformed CSV")
	if n := len(e.f.Objects("opportunity")); n != before {
		t.Errorf("a body malformed in its first batch wrote %d objects", n-before)
	}
	e.want(e.send("POST", loadPath(), "text/csv", broken(applyBatchRows+10)), 400, "malformed CSV")
	if n := len(e.f.Objects("opportunity")); n != before+applyBatchRows {
		t.Errorf("a body malformed after its first batch wrote %d objects, want the batch, %d", n-before, applyBatchRows)
	}
	if n := len(e.f.BulkExecutions()); n != 0 {
		t.Errorf("%d executions after refused loads", n)
	}
}

// TestBulkErrorRowsBounded: an execution keeps at most maxKeptErrors
// error rows, each capped in bytes and columns; past maxKeptErrorBytes
// the oldest executions' rows are forgotten, their counts kept; past
// maxExecutions the oldest execution is.
func TestBulkErrorRowsBounded(t *testing.T) {
	e := newMemEnv(t)
	defer e.f.Close()
	e.want(e.send("POST", loadPath(), "text/csv", &csvRows{n: maxKeptErrors + 5, noKey: true, extra: 500}), 200, "execution_id")
	ex := e.f.bulk.executions[e.f.bulk.order[0]]
	if len(ex.errors) != maxKeptErrors || ex.failed != maxKeptErrors+5 {
		t.Fatalf("%d error rows of %d failed, want %d", len(ex.errors), ex.failed, maxKeptErrors)
	}
	for _, er := range ex.errors {
		if len(er.DataRow) > maxErrorColumns || len(fmt.Sprint(er.DataRow)) > 2*maxErrorRow {
			t.Fatalf("an error row of %d columns, %d bytes", len(er.DataRow), len(fmt.Sprint(er.DataRow)))
		}
	}

	// The store forgets old error rows and executions, oldest first.
	b := &bulkStore{executions: map[string]*bulkExecution{}}
	for i := range maxExecutions + 10 {
		ex := &bulkExecution{id: fmt.Sprint(i), failed: 1}
		if i < 100 {
			ex.errors, ex.errBytes = make([]bulkRowError, 1), maxKeptErrorBytes/50
		}
		b.keep(ex)
	}
	if len(b.executions) != maxExecutions || b.executions["9"] != nil || b.executions["10"] == nil {
		t.Errorf("%d executions kept, want the newest %d", len(b.executions), maxExecutions)
	}
	if b.errBytes > maxKeptErrorBytes || len(b.erring) != 50 || b.executions["40"].errors != nil || b.executions["60"].errors == nil {
		t.Errorf("%d bytes of error rows in %d executions, want the newest 50 executions' rows", b.errBytes, len(b.erring))
	}
}

// TestBulkRecordCaps: a JSON record, an XLSX row, the shared strings and
// the zip's entries each have a cap; a load within them is accepted.
func TestBulkRecordCaps(t *testing.T) {
	e := newMemEnv(t)
	defer e.f.Close()
	record := func(n int) io.Reader {
		return strings.NewReader(`[{"sales_details":{"crm_opportunity_id":"J-1"},"name":"` + strings.Repeat("a", n) + `"}]`)
	}
	e.want(e.send("POST", loadPath("data_format", "JSON"), "application/json", record(maxJSONRecord-100)), 200, "execution_id")
	e.want(e.send("POST", loadPath("data_format", "JSON"), "application/json", record(maxJSONRecord)), 400, "record 1 (byte 1) is longer than 1048576 bytes")

	cell := `<c t="inlineStr"><is><t>` + strings.Repeat("b", 30_000) + `</t></is></c>`
	for _, tc := range []struct {
		name, want string
		book       []byte
	}{
		{"long row", "row 2 holds more than 1048576 bytes of text",
			craftedXLSX(t, sheetText(`<row r="2"><c t="inlineStr"><is><t>K-1</t></is></c>`+strings.Repeat(cell, 36)+`</row>`), sharedText())},
		{"shared strings", "the shared strings hold more than 8388608 bytes",
			craftedXLSX(t, sheetText(header), repeat(xmlHead+`<sst xmlns="`+nsMain+`">`, `<si><t>`+strings.Repeat("s", 120_000)+`</t></si>`, 80, "</sst>"))},
		{"zip entries", "more than 10000 entries", manyEntries(t, maxXLSXEntries)},
	} {
		ctype, body := paddedFile(tc.book, 0)
		q := "/bulk/v1/bulkload_opportunity?" + opps("has_header_row", "false", "content_type", "XLSX").Encode()
		if s := e.send("POST", q, ctype, body); s.status != 400 || !strings.Contains(string(s.head), tc.want) {
			t.Errorf("%s: %d %.300s, want 400 saying %q", tc.name, s.status, s.head, tc.want)
		}
	}
}

// TestUploadTotal: the files the fake holds stay within Limits.UploadBytes;
// an upload past it is refused with 413 however small, and a loaded file
// makes room again.
func TestUploadTotal(t *testing.T) {
	e := newMemEnv(t, WithLimits(Limits{UploadBytes: 1 << 20}))
	defer e.f.Close()
	e.f.SetURL("http://127.0.0.1:1")
	ticket := func() (url, token string) {
		s := e.send("GET", "/bulk/v1/bulkload/"+demo.OpportunityIntegration+"/upload_url?file_name=a.csv", "", nil)
		return "/upload/" + between(string(s.head), "/upload/", `"`), between(string(s.head), `"upload_token":"`, `"`)
	}
	csv := "sales_details.crm_opportunity_id,name\nU-1," + strings.Repeat("n", 1<<20-43) + "\n"
	url, token := ticket()
	e.want(e.send("POST", url, "text/csv", strings.NewReader(csv)), 200, "")
	url2, _ := ticket()
	e.want(e.send("POST", url2, "text/csv", strings.NewReader("x")), 413, "its limit")
	e.want(e.send("POST", loadPath("file_token", token), "", nil), 200, "execution_id")
	e.want(e.send("POST", url2, "text/csv", strings.NewReader("x")), 200, "")
}
