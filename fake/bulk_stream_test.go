package fake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake/demo"
)

// TestBulkLoadRefusedChangesNothing: a body found malformed after many
// batches of valid rows (new keys and changes to stored objects) is
// refused with 400 and leaves the object store as it was, with no
// execution recorded: as a body, an attached file (spooled in memory or
// on disk), an uploaded file and an XLSX workbook.
func TestBulkLoadRefusedChangesNothing(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // the spool's files, checked below
	const rows = 5 * applyBatchRows // K-1 and K-2 among them, changed
	brokenCSV := func() io.Reader {
		return io.MultiReader(&csvRows{n: rows}, strings.NewReader("K-x,\"unterminated\n"))
	}
	var js strings.Builder
	js.WriteString("[")
	for i := range rows {
		fmt.Fprintf(&js, `{"sales_details":{"crm_opportunity_id":"K-%d"},"name":"Deal %d"},`, i+1, i+1)
	}
	js.WriteString(`{"sales_details":{"crm_opportunity_id":"K-x"},"na`)
	var sheet strings.Builder
	sheet.WriteString(header)
	for i := range rows {
		fmt.Fprintf(&sheet, `<row r="%d"><c r="A%[1]d" t="inlineStr"><is><t>K-%d</t></is></c><c r="B%[1]d" t="inlineStr"><is><t>Deal</t></is></c></row>`, i+2, i+1)
	}
	sheet.WriteString(`<row r="9999"><c t="inlineStr"><is><t>K-x</t></is></c></row <`)
	book := craftedXLSX(t, sheetText(sheet.String()), sharedText())

	for _, tc := range []struct {
		name        string
		spool       int64 // the spool's memory, 0 for the default
		send        func(e *memEnv) *sink
		want        string
		wantSpilled bool
	}{
		{"CSV body", 0, func(e *memEnv) *sink { return e.send("POST", loadPath(), "text/csv", brokenCSV()) }, "malformed CSV", false},
		{"CSV body spooled on disk", 64 << 10, func(e *memEnv) *sink { return e.send("POST", loadPath(), "text/csv", brokenCSV()) }, "malformed CSV", true},
		{"JSON body", 0, func(e *memEnv) *sink {
			return e.send("POST", loadPath("data_format", "JSON"), "application/json", strings.NewReader(js.String()))
		}, "malformed JSON", false},
		{"JSON body spooled on disk", 64 << 10, func(e *memEnv) *sink {
			return e.send("POST", loadPath("data_format", "JSON"), "application/json", strings.NewReader(js.String()))
		}, "malformed JSON", true},
		{"attached CSV", 0, func(e *memEnv) *sink {
			ctype, body := attached(brokenCSV())
			return e.send("POST", "/bulk/v1/bulkload_opportunity?"+opps().Encode(), ctype, body)
		}, "malformed CSV", false},
		{"uploaded CSV", 0, func(e *memEnv) *sink {
			e.f.SetURL("http://127.0.0.1:1")
			s := e.send("GET", "/bulk/v1/bulkload/"+demo.OpportunityIntegration+"/upload_url?file_name=a.csv", "", nil)
			e.want(e.send("POST", "/upload/"+between(string(s.head), "/upload/", `"`), "text/csv", brokenCSV()), 200, "")
			return e.send("POST", loadPath("file_token", between(string(s.head), `"upload_token":"`, `"`)), "", nil)
		}, "malformed CSV", false},
		{"attached XLSX", 0, func(e *memEnv) *sink {
			ctype, body := attached(bytes.NewReader(book))
			return e.send("POST", "/bulk/v1/bulkload_opportunity?"+opps("content_type", "XLSX").Encode(), ctype, body)
		}, "malformed XLSX", false},
	} {
		e := newMemEnv(t)
		e.f.bulk.spoolMemory = tc.spool
		e.want(e.send("POST", loadPath(), "text/csv", strings.NewReader("sales_details.crm_opportunity_id,name\nK-1,Old\nK-2,Old\n")), 200, "execution_id")
		before := e.f.Objects("opportunity")
		e.want(tc.send(e), 400, tc.want)
		if after := e.f.Objects("opportunity"); !reflect.DeepEqual(after, before) {
			t.Errorf("%s: a refused load changed the object store: %d objects, was %d", tc.name, len(after), len(before))
		}
		if n := len(e.f.BulkExecutions()); n != 1 {
			t.Errorf("%s: %d executions after a refused load, want the first load's only", tc.name, n)
		}
		if spilled := e.f.bulk.spills.Load() > 0; spilled != tc.wantSpilled {
			t.Errorf("%s: spooled on disk %v, want %v", tc.name, spilled, tc.wantSpilled)
		}
		if left, _ := os.ReadDir(os.TempDir()); len(left) != 0 {
			t.Errorf("%s: the spool left %d files in %s", tc.name, len(left), os.TempDir())
		}
		e.f.Close()
	}
}

// TestBulkLoadSpoolsToDisk: a body larger than the spool's memory is kept
// in a temporary file, loaded whole, and the file is removed; a smaller
// one stays in memory.
func TestBulkLoadSpoolsToDisk(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	e := newMemEnv(t)
	defer e.f.Close()
	e.f.bulk.spoolMemory = 64 << 10
	before := len(e.f.Objects("opportunity"))

	e.want(e.send("POST", loadPath(), "text/csv", &csvRows{n: 10}), 200, "execution_id")
	if n := e.f.bulk.spills.Load(); n != 0 {
		t.Errorf("a body of 10 rows spooled on disk (%d files)", n)
	}
	const rows = 5 * applyBatchRows // about 100 KB
	e.want(e.send("POST", loadPath(), "text/csv", &csvRows{n: rows, from: 100}), 200, "execution_id")
	if n := e.f.bulk.spills.Load(); n != 1 {
		t.Errorf("a body of %d rows spooled on disk %d times, want once", rows, n)
	}
	if n := len(e.f.Objects("opportunity")) - before; n != 10+rows {
		t.Errorf("%d objects written, want %d", n, 10+rows)
	}
	exs := e.f.BulkExecutions()
	if last := exs[len(exs)-1]; last.InputCount != rows || last.SuccessCount != rows || last.ErrorCount != 0 {
		t.Errorf("execution %+v, want %d rows written", last, rows)
	}
	if left, _ := os.ReadDir(os.TempDir()); len(left) != 0 {
		t.Errorf("the spool left %d files in %s", len(left), os.TempDir())
	}

	// A spool that cannot make its file is the fake's failure: 500, and
	// nothing written.
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	n := len(e.f.Objects("opportunity"))
	e.want(e.send("POST", loadPath(), "text/csv", &csvRows{n: rows, from: 100_000}), 500, "the fake's spool of the body")
	if m := len(e.f.Objects("opportunity")); m != n {
		t.Errorf("a load the spool failed wrote %d objects", m-n)
	}
}

// attached is a multipart/form-data body with the part "file" holding
// data.
func attached(data io.Reader) (string, io.Reader) {
	const boundary = "stream-test-boundary"
	head := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\n"
	return "multipart/form-data; boundary=" + boundary,
		io.MultiReader(strings.NewReader(head), data, strings.NewReader("\r\n--"+boundary+"--\r\n"))
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

	// Executions with few error rows each: erring lets go of the
	// forgotten ones with them.
	b = &bulkStore{executions: map[string]*bulkExecution{}}
	for i := range maxExecutions + 10 {
		b.keep(&bulkExecution{id: fmt.Sprint(i), failed: 1, errors: make([]bulkRowError, 1), errBytes: 100})
	}
	if len(b.erring) != maxExecutions || b.errBytes != 100*maxExecutions {
		t.Errorf("%d executions with %d bytes of error rows held, want the %d remembered", len(b.erring), b.errBytes, maxExecutions)
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
	// Flattened: the key and maxRecordFields-1 members, nested one level,
	// are within the caps; one more member, or names that repeat a long
	// member name past 1 MiB, are not (the caps are checked on the
	// decoded record, and the loads past them refused).
	for _, tc := range []struct {
		record []byte
		within bool
		want   string
	}{
		{longKeyRecord("J-2", 1, 0, maxRecordFields-1), true, ""},
		{longKeyRecord("J-2", 1, 0, maxRecordFields), false, "JSON record 1 (byte 1) has more than 16384 fields, nested members counted by dotted name (the fake's limit)"},
		{longKeyRecord("J-3", 1000, 0, 1000), true, ""},
		{longKeyRecord("J-3", 1100, 0, 1000), false, "JSON record 1 (byte 1) holds more than 1048576 bytes of field names and values"},
	} {
		var obj map[string]any
		if err := json.Unmarshal(tc.record, &obj); err != nil {
			t.Fatal(err)
		}
		if c := countFlat(obj); c.over() == tc.within {
			t.Errorf("a record of %d fields, %d bytes flattened: over the caps %v", c.fields, c.bytes, c.over())
		}
		if !tc.within {
			e.want(e.send("POST", loadPath("data_format", "JSON"), "application/json", bytes.NewReader(jsonArray(tc.record))), 400, tc.want)
		}
	}

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
	e.want(e.send("POST", url2, "text/csv", strings.NewReader("x")), 413, `"error":"body_too_large"`)
	e.want(e.send("POST", loadPath("file_token", token), "", nil), 200, "execution_id")
	e.want(e.send("POST", url2, "text/csv", strings.NewReader("x")), 200, "")
}

// TestSpoolReadsBack: the spool gives back what was written to it, in
// memory across chunks and on disk past its limit.
func TestSpoolReadsBack(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, size := range []int{0, 100, chunkSize, chunkSize + 7, 2*chunkSize + 3, 3 << 20, 3<<20 + 1} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i * 7 / 3)
		}
		sp := &spool{limit: 3 << 20}
		for q := data; len(q) > 0; {
			k := min(len(q), 65_537)
			if _, err := sp.Write(q[:k]); err != nil {
				t.Fatal(err)
			}
			q = q[k:]
		}
		got, err := io.ReadAll(sp.reader())
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%d bytes: read back %d bytes (%v), not what was written", size, len(got), err)
		}
		if onDisk := sp.file != nil; onDisk != (size > 3<<20) {
			t.Errorf("%d bytes: on disk %v", size, onDisk)
		}
		if err := sp.close(); err != nil {
			t.Error(err)
		}
	}
	if left, _ := os.ReadDir(os.TempDir()); len(left) != 0 {
		t.Errorf("the spool left %d files", len(left))
	}
}
