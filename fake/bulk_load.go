package fake

// The bulk load routes: POST /bulk/v1/bulkload and
// /bulk/v1/bulkload_opportunity, each also as a multipart file upload on
// .../file (see area_bulk.go for the area as a whole).

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ackWire is the bulk load acknowledgement.
type ackWire struct {
	IntegrationID   string `json:"integration_id"`
	ExecutionID     string `json:"execution_id"`
	CreatedAt       string `json:"created_at"`
	DataFormat      string `json:"data_format,omitempty"`
	ColumnDelimiter string `json:"column_delimiter,omitempty"`
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

// bulkLoad serves the four load routes. opp: the opportunity form
// (content_type, has_header_row, no file_token). file: the .../file form,
// whose body must be multipart/form-data with the file in the part
// "file" (a file_token is refused there); opportunities may then be XLSX.
// The format is data_format (content_type) when given, else the file
// name's extension, else CSV.
func (f *Fake) bulkLoad(w http.ResponseWriter, r *http.Request, opp, file bool) {
	q := r.URL.Query()
	refuse := func(status int, format string, args ...any) {
		io.Copy(io.Discard, io.LimitReader(r.Body, maxDrain))
		writeError(w, status, "invalid_request", format, args...)
	}
	in, status, msg := f.findBulkIntegration(q.Get("integration_id"), http.StatusBadRequest)
	if status != 0 {
		refuse(status, "%s", msg)
		return
	}
	if opp && in.ObjectType != "opportunity" {
		refuse(http.StatusBadRequest, "integration %q loads %s objects, not opportunities", in.ID, in.ObjectType)
		return
	}
	formatParam, header := "data_format", true
	if opp {
		formatParam = "content_type"
		if s := q.Get("has_header_row"); s != "" {
			b, err := strconv.ParseBool(s)
			if err != nil {
				refuse(http.StatusBadRequest, "has_header_row must be true or false, not %q", s)
				return
			}
			header = b
		}
	}
	noXLSX := opp && !file // the opportunity JSON/CSV form takes no XLSX
	format := ""
	if s := q.Get(formatParam); s != "" {
		var ok bool
		if format, ok = parseFormat(s, noXLSX); !ok {
			refuse(http.StatusBadRequest, "unsupported %s %q", formatParam, s)
			return
		}
	}
	delim := ','
	if s := q.Get("column_delimiter"); s != "" {
		d, n := utf8.DecodeRuneInString(s)
		if n != len(s) || d == utf8.RuneError || d == '"' || d == '\r' || d == '\n' {
			refuse(http.StatusBadRequest, "column_delimiter must be a single character other than a quote or a line break, not %q", s)
			return
		}
		delim = d
	}

	var body io.Reader = r.Body
	fileName := ""
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if file && q.Get("file_token") != "" {
		refuse(http.StatusBadRequest, "file_token is not taken by %s: load an uploaded file with POST /bulk/v1/bulkload", r.URL.Path)
		return
	}
	if file && mt != "multipart/form-data" {
		refuse(http.StatusBadRequest, "%s takes a multipart/form-data body with the file in the part \"file\", not %q", r.URL.Path, r.Header.Get("Content-Type"))
		return
	}
	if tok := q.Get("file_token"); tok != "" && !opp {
		up, msg := f.takeUpload(tok, in.ID)
		if msg != "" {
			refuse(http.StatusBadRequest, "%s", msg)
			return
		}
		body, fileName = bytes.NewReader(up.data), up.fileName
	} else if mt == "multipart/form-data" {
		mr, err := r.MultipartReader()
		if err != nil {
			refuse(http.StatusBadRequest, "malformed multipart body: %v", err)
			return
		}
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				refuse(http.StatusBadRequest, "multipart body has no part named \"file\"")
				return
			}
			if err != nil {
				refuse(http.StatusBadRequest, "malformed multipart body: %v", err)
				return
			}
			if part.FormName() == "file" {
				body, fileName = part, part.FileName()
				break
			}
		}
	}
	if format == "" {
		format = formatCSV
		if ff := formatOfFile(fileName); ff != "" && !(noXLSX && ff == formatXLSX) {
			format = ff
		}
	}

	now := f.clock.Now()
	f.bulk.mu.Lock()
	delay, discard := f.bulk.delay, f.bulk.discard
	f.bulk.mu.Unlock()
	ex := &bulkExecution{id: newID("exe_", 12), integrationID: in.ID, created: now, done: now.Add(delay)}
	if err := f.runLoad(in, ex, format, delim, header, discard, body); err != nil {
		var bad *badInput
		if errors.As(err, &bad) {
			status := bad.status
			if status == 0 {
				status = http.StatusBadRequest
			}
			refuse(status, "%s", bad.msg)
			return
		}
		refuse(http.StatusBadRequest, "reading the body: %v", err)
		return
	}
	f.bulk.mu.Lock()
	f.bulk.executions[ex.id] = ex
	f.bulk.order = append(f.bulk.order, ex.id)
	f.bulk.mu.Unlock()

	ack := ackWire{IntegrationID: in.ID, ExecutionID: ex.id, CreatedAt: now.UTC().Format(time.RFC3339Nano)}
	if !opp {
		ack.DataFormat, ack.ColumnDelimiter = format, string(delim)
	}
	writeJSON(w, http.StatusOK, ack)
}

// runLoad parses body and checks its rows into ex, then writes the valid
// rows unless discard. Nothing is written when the body is malformed.
func (f *Fake) runLoad(in Integration, ex *bulkExecution, format string, delim rune, header, discard bool, body io.Reader) error {
	kinds := f.fieldKinds(in.ObjectType)
	keyCol := in.KeyField
	if !header {
		keyCol = "1"
	}
	var staged []stagedRow
	err := parseRows(body, format, delim, header, func(rec record) error {
		ex.input++
		key, fields, msg := checkRecord(in, kinds, keyCol, rec, !discard)
		if msg != "" {
			ex.failed++
			if len(ex.errors) < maxKeptErrors {
				ex.errors = append(ex.errors, bulkRowError{ID: key, Message: msg, DataRow: rec.dataRow()})
			}
			return nil
		}
		if discard {
			ex.success++
			return nil
		}
		staged = append(staged, stagedRow{key: key, fields: fields})
		return nil
	})
	if err != nil {
		return err
	}
	written, skipped := f.applyRows(in, staged)
	ex.success += written
	ex.skipped += skipped
	return nil
}
