package fake

// The bulk load routes: POST /bulk/v1/bulkload and
// /bulk/v1/bulkload_opportunity, each taking the data as the body or as a
// file attached in a multipart/form-data body (see area_bulk.go for the
// area as a whole).

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ackWire is the bulk load acknowledgement.
type ackWire struct {
	IntegrationID string `json:"integration_id"`
	ExecutionID   string `json:"execution_id"`
	CreatedAt     string `json:"created_at"`
	DataFormat    string `json:"data_format,omitempty"`
}

// parseFormat reads data_format (or content_type): CSV, JSON and, unless
// noXLSX, XLSX, case-insensitive; media types are accepted too.
func parseFormat(s string, noXLSX bool) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "csv", "text/csv":
		return formatCSV, true
	case "json", "application/json":
		return formatJSON, true
	case "xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":
		return formatXLSX, !noXLSX
	}
	return "", false
}

// formatOfFile infers the format from a file name's extension.
func formatOfFile(name string) string {
	f, _ := parseFormat(strings.TrimPrefix(path.Ext(name), "."), false)
	return f
}

// bulkLoadData serves POST /bulk/v1/bulkload: the body is the data (CSV
// or JSON, as data_format says, CSV when it says nothing), a
// multipart/form-data body with the file in the part "file" (also XLSX),
// or nothing when file_token names an uploaded file (also XLSX). The
// acknowledgement echoes the format.
func (f *Fake) bulkLoadData(w http.ResponseWriter, r *http.Request) {
	in, delim, ok := f.loadTarget(w, r)
	if !ok {
		return
	}
	format, ok := loadFormat(w, r, "data_format", isMultipart(r) || r.URL.Query().Get("file_token") != "")
	if !ok {
		return
	}
	var body io.Reader
	if tok := r.URL.Query().Get("file_token"); tok != "" {
		up, msg := f.takeUpload(tok, in.ID)
		if msg != "" {
			refuseLoad(w, r, http.StatusBadRequest, "%s", msg)
			return
		}
		body = io.NewSectionReader(up.data, 0, up.data.size)
	} else if body, ok = loadBody(w, r); !ok {
		return
	}
	ex, ok := f.execute(w, r, in, format, delim, true, body)
	if !ok {
		return
	}
	ack := newAck(ex)
	ack.DataFormat = format
	writeJSON(w, http.StatusOK, ack)
}

// bulkLoadOpportunity serves POST /bulk/v1/bulkload_opportunity, for
// integrations of opportunities: the body is CSV or JSON as content_type
// says (CSV when it says nothing), or a multipart/form-data body with the
// file in the part "file", which may also be XLSX. has_header_row=false
// names the columns by position ("1", "2", ...). The acknowledgement
// carries no format.
func (f *Fake) bulkLoadOpportunity(w http.ResponseWriter, r *http.Request) {
	in, delim, ok := f.loadTarget(w, r)
	if !ok {
		return
	}
	if in.ObjectType != "opportunity" {
		refuseLoad(w, r, http.StatusBadRequest, "integration %q loads %s objects, not opportunities", in.ID, in.ObjectType)
		return
	}
	header := true
	if s := r.URL.Query().Get("has_header_row"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			refuseLoad(w, r, http.StatusBadRequest, "has_header_row must be true or false, not %q", s)
			return
		}
		header = b
	}
	format, ok := loadFormat(w, r, "content_type", isMultipart(r))
	if !ok {
		return
	}
	body, ok := loadBody(w, r)
	if !ok {
		return
	}
	ex, ok := f.execute(w, r, in, format, delim, header, body)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, newAck(ex))
}

// refuseLoad answers a load with an error, after reading (some of) the
// body so that the client sees the answer instead of a reset connection.
func refuseLoad(w http.ResponseWriter, r *http.Request, status int, format string, args ...any) {
	io.Copy(io.Discard, io.LimitReader(r.Body, maxDrain))
	code := "invalid_request"
	if status == http.StatusRequestEntityTooLarge {
		code = "body_too_large"
	}
	writeError(w, status, code, format, args...)
}

// loadTarget reads the query parameters both load routes take alike:
// the integration (integration_id) and the CSV column delimiter
// (column_delimiter, "," when absent). It answers when one is wrong.
func (f *Fake) loadTarget(w http.ResponseWriter, r *http.Request) (Integration, rune, bool) {
	q := r.URL.Query()
	in, status, msg := f.findBulkIntegration(q.Get("integration_id"), http.StatusBadRequest)
	if status != 0 {
		refuseLoad(w, r, status, "%s", msg)
		return Integration{}, 0, false
	}
	delim := ','
	if s := q.Get("column_delimiter"); s != "" {
		d, n := utf8.DecodeRuneInString(s)
		if n != len(s) || d == utf8.RuneError || d == '"' || d == '\r' || d == '\n' {
			refuseLoad(w, r, http.StatusBadRequest, "column_delimiter must be a single character other than a quote or a line break, not %q", s)
			return Integration{}, 0, false
		}
		delim = d
	}
	return in, delim, true
}

// loadFormat reads the format parameter param: the service's default,
// CSV, when the query leaves it out (the file name of an attachment is
// not read), XLSX only when xlsx is set. It answers when the value is
// not one of them.
func loadFormat(w http.ResponseWriter, r *http.Request, param string, xlsx bool) (string, bool) {
	s := r.URL.Query().Get(param)
	if s == "" {
		return formatCSV, true
	}
	format, ok := parseFormat(s, false)
	switch {
	case !ok:
		refuseLoad(w, r, http.StatusBadRequest, "unsupported %s %q", param, s)
	case format == formatXLSX && !xlsx:
		refuseLoad(w, r, http.StatusBadRequest, "%s %q: data in the request body is JSON or CSV; XLSX only as an attached file (multipart/form-data, part \"file\")", param, s)
		ok = false
	}
	return format, ok
}

func isMultipart(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == "multipart/form-data"
}

// loadBody returns the data of a load: the request body, or of a
// multipart/form-data body the part named "file". It answers when a
// multipart body is malformed or has no such part.
func loadBody(w http.ResponseWriter, r *http.Request) (io.Reader, bool) {
	if !isMultipart(r) {
		return r.Body, true
	}
	mr, err := r.MultipartReader()
	if err != nil {
		refuseLoad(w, r, http.StatusBadRequest, "malformed multipart body: %v", err)
		return nil, false
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			refuseLoad(w, r, http.StatusBadRequest, "multipart body has no part named \"file\"")
			return nil, false
		}
		if err != nil {
			refuseLoad(w, r, http.StatusBadRequest, "malformed multipart body: %v", err)
			return nil, false
		}
		if part.FormName() == "file" {
			return part, true
		}
	}
}

// execute runs a load of body into in and records its execution. It
// answers (and returns false) when the body is malformed (400, or 413),
// or when the fake's spool fails (500).
func (f *Fake) execute(w http.ResponseWriter, r *http.Request, in Integration, format string, delim rune, header bool, body io.Reader) (*bulkExecution, bool) {
	now := f.clock.Now()
	f.bulk.mu.Lock()
	delay, discard := f.bulk.delay, f.bulk.discard
	f.bulk.mu.Unlock()
	ex := &bulkExecution{id: newID("exe_", 12), integrationID: in.ID, created: now, done: now.Add(delay)}
	if err := f.runLoad(in, ex, format, delim, header, discard, body); err != nil {
		if sp, ok := errors.AsType[*spoolError](err); ok {
			io.Copy(io.Discard, io.LimitReader(r.Body, maxDrain))
			writeError(w, http.StatusInternalServerError, "internal_error", "%v", sp)
			return nil, false
		}
		if bad, ok := errors.AsType[*badInput](err); ok {
			status := bad.status
			if status == 0 {
				status = http.StatusBadRequest
			}
			refuseLoad(w, r, status, "%s", bad.msg)
			return nil, false
		}
		refuseLoad(w, r, http.StatusBadRequest, "reading the body: %v", err)
		return nil, false
	}
	f.bulk.mu.Lock()
	f.bulk.keep(ex)
	f.bulk.mu.Unlock()
	return ex, true
}

func newAck(ex *bulkExecution) ackWire {
	return ackWire{IntegrationID: ex.integrationID, ExecutionID: ex.id, CreatedAt: wireTime(ex.created)}
}

// Batches of a load: valid rows are written as the second pass reads
// them, every applyBatchRows rows or applyBatchBytes bytes of them, so
// that what a load holds is a batch, not its body.
const (
	applyBatchRows  = 1000
	applyBatchBytes = 4 << 20
	// stagedFieldCost is about the bytes of a field of a staged row
	// besides its name and value: its map entry.
	stagedFieldCost = 64
)

// maxErrorText caps the bytes of an error row's id and message.
const maxErrorText = 1 << 10

// runLoad loads body into in and counts it into ex, unless discard (then
// nothing is written). It reads the body twice: once to check it whole,
// writing nothing, then to check its rows and write the valid ones in
// batches. A file the fake holds (an upload, an XLSX body) is read twice
// as it is; any other body is kept in a spool as the first pass reads it.
// A body refused by the first pass changes nothing. (The second pass
// reads the same bytes, so it refuses nothing; only a read error of the
// spool's file, a failure of the local disk, could stop it midway.)
func (f *Fake) runLoad(in Integration, ex *bulkExecution, format string, delim rune, header, discard bool, body io.Reader) error {
	if discard {
		return f.applyLoad(in, ex, format, delim, header, true, body)
	}
	held, ok := body.(readerAtSize)
	if !ok && format == formatXLSX {
		var err error
		if held, err = readWhole(body, maxXLSXBody); err != nil {
			return err
		}
	}
	if held != nil {
		if err := parseRows(io.NewSectionReader(held, 0, held.Size()), format, delim, header, nil); err != nil {
			return err
		}
		return f.applyLoad(in, ex, format, delim, header, false, io.NewSectionReader(held, 0, held.Size()))
	}
	sp := &spool{limit: f.bulk.spoolMemory, spilled: func() { f.bulk.spills.Add(1) }, dir: f.bulk.spoolDir, total: &f.bulk}
	if sp.limit == 0 {
		sp.limit = spoolMemory
	}
	defer sp.close()
	if err := parseRows(io.TeeReader(body, sp), format, delim, header, nil); err != nil {
		return err
	}
	return f.applyLoad(in, ex, format, delim, header, false, sp.reader())
}

// applyLoad parses body and checks its rows into ex, writing the valid
// rows in batches as they are read, unless discard.
func (f *Fake) applyLoad(in Integration, ex *bulkExecution, format string, delim rune, header, discard bool, body io.Reader) error {
	kinds := f.fieldKinds(in.ObjectType)
	keyCol := in.KeyField
	if !header {
		keyCol = "1"
	}
	var staged []stagedRow
	stagedBytes := 0
	fail := func(key, msg string, rec record) {
		ex.failed++
		if len(ex.errors) < maxKeptErrors {
			e := bulkRowError{ID: clip(key, maxErrorText), Message: clip(msg, maxErrorText), DataRow: rec.dataRow()}
			ex.errors = append(ex.errors, e)
			ex.errBytes += len(e.ID) + len(e.Message) + min(rec.size, maxErrorRow) + 64
		}
	}
	flush := func() {
		written, skipped, refused := f.applyRows(in, staged)
		ex.success += written
		ex.skipped += skipped
		for _, r := range refused {
			row := staged[r.index]
			fail(row.key, r.msg, row.record())
		}
		clear(staged)
		staged, stagedBytes = staged[:0], 0
	}
	err := parseRows(body, format, delim, header, func(rec record) error {
		ex.input++
		key, fields, msg := checkRecord(in, kinds, keyCol, rec, !discard)
		if msg != "" {
			fail(key, msg, rec)
			return nil
		}
		if discard {
			ex.success++
			return nil
		}
		staged = append(staged, stagedRow{key: key, fields: fields})
		// A field costs its map entry besides its name and value.
		if stagedBytes += rec.size + len(rec.cols)*stagedFieldCost; len(staged) >= applyBatchRows || stagedBytes >= applyBatchBytes {
			flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	flush()
	return nil
}
