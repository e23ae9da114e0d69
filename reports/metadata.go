package reports

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/partnerapi/partner-go/core"
)

// This file holds the operations of the deployed service that the
// interface text lacks: report metadata, the report's data schema and a
// view's metadata. Their 200 answers are not documented: each is kept
// whole (Raw), and only members whose meaning is safe to assume are typed.

// ErrNoColumn is returned by Metadata.ColumnID when no column has the name.
var ErrNoColumn = errors.New("partner: reports: no column with that name")

// Metadata is the answer of the report metadata operation or of the data
// schema operation. The deployed service does not document its shape, so
// it is kept whole in Raw; Columns and ColumnID read the columns when the
// answer lists them (a `columns` array of objects with `id`, `name` and
// `type`, which is what the fake sends).
type Metadata struct {
	// Raw is the answer as the service sent it.
	Raw json.RawMessage
}

// Column is a report column as metadata describes it.
type Column struct {
	// ID identifies the column in filters (FieldFilter.ColID). The
	// deployed service names columns by position: "0", "1", ...; a
	// numeric id in the answer is read as its decimal string, and a
	// column listed without an id gets its position.
	ID string
	// Name is the column's name, the key of its values in rows.
	Name string
	// Type is the column's type, which is also the type of a field
	// filter on it ("" when the answer has none).
	Type FieldType
}

// Columns returns the columns the metadata lists: the `columns` member of
// the answer, or the answer itself when it is an array. It returns nil,
// nil when there is no such member.
func (m *Metadata) Columns() ([]Column, error) {
	raw := bytes.TrimSpace(m.Raw)
	if len(raw) > 0 && raw[0] == '{' {
		var obj struct {
			Columns json.RawMessage `json:"columns"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("partner: reports: metadata: %w", err)
		}
		raw = obj.Columns
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var wire []struct {
		ID    json.RawMessage `json:"id"`
		ColID json.RawMessage `json:"colId"`
		Name  string          `json:"name"`
		Type  FieldType       `json:"type"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, fmt.Errorf("partner: reports: metadata columns: %w", err)
	}
	cols := make([]Column, len(wire))
	for i, w := range wire {
		id := w.ID
		if len(id) == 0 || string(id) == "null" {
			id = w.ColID
		}
		cols[i] = Column{ID: idString(id), Name: w.Name, Type: w.Type}
		if cols[i].ID == "" {
			cols[i].ID = strconv.Itoa(i)
		}
	}
	return cols, nil
}

// idString reads a column id written as a JSON string or number.
func idString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// ColumnID returns the id of the column named name (compared exactly,
// then without regard to case), for a field filter:
//
//	md, err := c.Reports.Metadata(ctx, reportID)
//	...
//	stage, err := md.ColumnID("Stage") // "1" on the deployed service
//	f := reports.And(reports.Text(stage).EqualTo("won"))
//
// It returns an error wrapping ErrNoColumn when no column has the name,
// and an error when two columns have it.
func (m *Metadata) ColumnID(name string) (string, error) {
	cols, err := m.Columns()
	if err != nil {
		return "", err
	}
	for _, exact := range []bool{true, false} {
		found := -1
		for i, c := range cols {
			if c.Name == name || !exact && strings.EqualFold(c.Name, name) {
				if found >= 0 {
					return "", fmt.Errorf("partner: reports: two columns are named %q (ids %q and %q)", name, cols[found].ID, c.ID)
				}
				found = i
			}
		}
		if found >= 0 {
			return cols[found].ID, nil
		}
	}
	return "", fmt.Errorf("%w: %q", ErrNoColumn, name)
}

// Metadata reads a report's metadata (POST /report/v1/{reportId}/metadata).
// The answer's shape is not documented; see Metadata.
func (s *Service) Metadata(ctx context.Context, reportID int64) (*Metadata, error) {
	return s.metadata(ctx, "reports.Metadata", "/report/v1/{reportId}/metadata", reportID)
}

// DataSchema reads the schema of a report's data
// (POST /report/v1/{reportId}/data-schema). The answer's shape is not
// documented; it is kept whole the same way as Metadata's.
func (s *Service) DataSchema(ctx context.Context, reportID int64) (*Metadata, error) {
	return s.metadata(ctx, "reports.DataSchema", "/report/v1/{reportId}/data-schema", reportID)
}

func (s *Service) metadata(ctx context.Context, op, path string, id int64) (*Metadata, error) {
	var raw json.RawMessage
	err := s.t.Do(ctx, &core.Request{Op: op, Method: http.MethodPost, Route: core.PathOf(path, id), JSON: struct{}{}, Idempotent: true}, &raw)
	if err != nil {
		return nil, err
	}
	return &Metadata{Raw: raw}, nil
}

// ViewMetadata is a prepared view's metadata (GET /report/v1/view/{viewId}). The
// deployed service does not document the answer's shape: it is kept whole
// in Raw, and the typed fields are filled only from members of the
// expected name and type (those the fake sends: viewId, reportId,
// viewStatus, createdAt, rowCount; and id), left zero otherwise.
type ViewMetadata struct {
	// Raw is the answer as the service sent it.
	Raw json.RawMessage
	// ID is the view's id: member viewId, else member id (a number), else
	// the id that was asked about.
	ID int64
	// ReportID is the report the view was prepared from (reportId).
	ReportID int64
	// Status is the view's state (viewStatus, a string).
	Status ViewState
	// CreatedAt is when the view was prepared (createdAt, RFC 3339).
	CreatedAt time.Time
	// RowCount is the number of rows the view holds (rowCount).
	RowCount int64
}

// ViewMetadata reads a view's metadata (GET /report/v1/view/{viewId}).
func (s *Service) ViewMetadata(ctx context.Context, viewID int64) (*ViewMetadata, error) {
	var raw json.RawMessage
	err := s.t.Do(ctx, &core.Request{Op: "reports.ViewMetadata", Method: http.MethodGet, Route: core.PathOf("/report/v1/view/{viewId}", viewID)}, &raw)
	if err != nil {
		return nil, err
	}
	v := &ViewMetadata{Raw: raw, ID: viewID}
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return v, nil // not an object: only Raw and the id asked about
	}
	get := func(name string, dst any) { _ = json.Unmarshal(members[name], dst) } // a mismatch leaves dst zero
	for _, name := range []string{"viewId", "id"} {
		var id int64
		if get(name, &id); id != 0 {
			v.ID = id
			break
		}
	}
	get("reportId", &v.ReportID)
	get("viewStatus", &v.Status)
	get("createdAt", &v.CreatedAt)
	get("rowCount", &v.RowCount)
	return v, nil
}
