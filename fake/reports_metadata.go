package fake

import (
	"bufio"
	"io"
	"net/http"
	"strconv"
)

// Routes of the reports area that the deployed service has beside the
// interface text: report metadata, the report's data schema, and a view's
// metadata. The deployed service does not document their 200 answers; the
// shapes below are the fake's own:
//
//   - POST /report/v1/{reportId}/metadata: {"reportId", "reportName",
//     "reportStatus", "version", "columns": [{"id", "name", "type"}]}
//   - POST /report/v1/{reportId}/data-schema: {"reportId", "version",
//     "columns": [{"id", "name", "type"}]}
//   - GET /report/v1/view/{viewId}: {"viewId", "reportId", "viewStatus",
//     "createdAt", "rowCount", "version"}
//
// A column's id is its position as a decimal string ("0", "1", ...), as
// the deployed service names columns in filters. The request body of the
// two POSTs is optional; when present it must be a JSON object.

type metaColumnJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
}

type reportMetadataJSON struct {
	ReportID     int64            `json:"reportId"`
	ReportName   string           `json:"reportName,omitempty"`
	ReportStatus string           `json:"reportStatus,omitempty"`
	Version      int64            `json:"version"`
	Columns      []metaColumnJSON `json:"columns"`
}

// registerReportMetadata registers the metadata routes.
func (f *Fake) registerReportMetadata() {
	f.handle("POST /report/v1/{reportId}/metadata", scopeReports, func(w http.ResponseWriter, r *http.Request) {
		f.handleReportMetadata(w, r, true)
	})
	f.handle("POST /report/v1/{reportId}/data-schema", scopeReports, func(w http.ResponseWriter, r *http.Request) {
		f.handleReportMetadata(w, r, false)
	})
	f.handle("GET /report/v1/view/{viewId}", scopeReports, f.handleViewMetadata)
}

func (f *Fake) handleReportMetadata(w http.ResponseWriter, r *http.Request, full bool) {
	id, ok := pathID(w, r, "reportId")
	if !ok {
		return
	}
	if !optionalObject(w, r) {
		return
	}
	def, version, ok := f.reportDefOr404(w, id)
	if !ok {
		return
	}
	out := reportMetadataJSON{ReportID: id, Version: version, Columns: make([]metaColumnJSON, len(def.Columns))}
	if full {
		out.ReportName, out.ReportStatus = def.Name, def.Status
	}
	for i, c := range def.Columns { // AddReport filled in names and types
		out.Columns[i] = metaColumnJSON{ID: strconv.Itoa(i), Name: c.Name, Type: c.Type}
	}
	writeJSON(w, http.StatusOK, out)
}

// handleViewMetadata serves GET /report/v1/view/{viewId}: the view's
// status answer plus its row count (the fake's own shape).
func (f *Fake) handleViewMetadata(w http.ResponseWriter, r *http.Request) {
	f.writeView(w, r, true)
}

// optionalObject reads a request body that may be empty or else must be a
// JSON object; on anything else it answers 400.
func optionalObject(w http.ResponseWriter, r *http.Request) bool {
	br := bufio.NewReader(r.Body)
	for {
		c, err := br.ReadByte()
		if err != nil {
			return true // empty, or only white space
		}
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			br.UnreadByte()
			break
		}
	}
	r.Body = io.NopCloser(br)
	var body map[string]any
	return decodeJSON(w, r, &body)
}
