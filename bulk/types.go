package bulk

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// Format is the format of loaded data (the Format field of every load's
// params): on the wire, the data_format query parameter, or content_type
// for opportunities. The service reads it
// case-insensitively.
type Format string

// Formats of loaded data.
const (
	CSV  Format = "CSV"
	JSON Format = "JSON"
	// XLSX is an Office Open XML workbook; its first sheet is loaded.
	// Only attached or uploaded files may be XLSX.
	XLSX Format = "XLSX"
)

// validate normalises f to upper case and checks it is known.
func (f Format) validate() (Format, error) {
	u := Format(strings.ToUpper(string(f)))
	switch u {
	case "", CSV, JSON, XLSX:
		return u, nil
	}
	return "", fmt.Errorf("partner: bulk: unknown data format %q (want CSV, JSON or XLSX)", string(f))
}

// mediaType is the Content-Type of a body in format f.
func (f Format) mediaType() string {
	switch f {
	case JSON:
		return "application/json"
	case XLSX:
		return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	}
	return "text/csv"
}

// FormatOf infers the format of a file from its extension (.csv, .json,
// .xlsx, in any case); it returns "" for any other name.
func FormatOf(fileName string) Format {
	switch strings.ToLower(filepath.Ext(fileName)) {
	case ".csv":
		return CSV
	case ".json":
		return JSON
	case ".xlsx":
		return XLSX
	}
	return ""
}

func checkDelimiter(d string) error {
	if d == "" {
		return nil
	}
	r, n := utf8.DecodeRuneInString(d)
	if n != len(d) || r == utf8.RuneError || r == '"' || r == '\r' || r == '\n' {
		return fmt.Errorf("partner: bulk: column delimiter must be one character other than a quote or a line break, not %q", d)
	}
	return nil
}

// Ack is the acknowledgement of a load: the execution that processes it,
// which WaitExecution waits on. Format echoes the load's data_format;
// loads of opportunities leave it empty. The published acknowledgements
// carry no column delimiter: the load's is the one its params set.
type Ack struct {
	IntegrationID string    `json:"integration_id"`
	ExecutionID   string    `json:"execution_id"`
	CreatedAt     time.Time `json:"created_at"`
	Format        Format    `json:"data_format,omitempty"`
}

// State is the state of an execution.
type State string

// States of an execution. The service may send others; they are kept.
const (
	StateRunning   State = "running"
	StateCompleted State = "completed"
)

// Earlier names of the states.
const (
	// Deprecated: Use StateRunning, named like the other packages' states.
	Running = StateRunning
	// Deprecated: Use StateCompleted, named like the other packages' states.
	Completed = StateCompleted
)

// Execution is the status of a bulk execution
// (GET /bulk/v1/status/{integration_id}).
type Execution struct {
	IntegrationID string
	ExecutionID   string
	Status        State
	// StatusMsg says why an execution failed.
	StatusMsg string
	// InputCount is the number of records received; the other counts
	// add up to it once the execution has completed.
	InputCount int64
	// SuccessCount is the number of records created or updated.
	SuccessCount int64
	// ErrorCount is the number of records refused (see Errors).
	ErrorCount int64
	// SkipCount is the number of records skipped: accepted, with nothing
	// to write (the fake: the stored object already held their values).
	SkipCount int64
	// StartedAt and CompletedAt are zero when the service sent none.
	StartedAt   time.Time
	CompletedAt time.Time
	// IncludeErrors echoes the request, or the service's default when
	// the request left it out. The published status carries no
	// max_errors: the cap is the one StatusParams.MaxErrors set, or the
	// service's default.
	IncludeErrors bool
	// Errors lists failed records when the status was read with
	// IncludeErrors, at most max_errors of them.
	Errors []RowError
}

// Done reports whether the execution reached a known terminal state
// (StateCompleted). A running, empty or unknown status is not done:
// WaitExecution keeps polling through it.
func (e *Execution) Done() bool { return e.Status == StateCompleted }

// UnmarshalJSON reads the wire form, where absent or empty timestamps are
// left zero and counts may be written as JSON numbers of any form. The
// success count is read from success_count or, when that is absent, from
// succcess_count, the spelling (three c's) of one of the deployed
// service's published descriptions.
func (e *Execution) UnmarshalJSON(b []byte) error {
	var w struct {
		IntegrationID string     `json:"integration_id"`
		ExecutionID   string     `json:"execution_id"`
		Status        State      `json:"status"`
		StatusMsg     string     `json:"status_msg"`
		InputCount    float64    `json:"input_count"`
		SuccessCount  *float64   `json:"success_count"`
		Succcess      *float64   `json:"succcess_count"` // sic: a deployed spelling
		ErrorCount    float64    `json:"error_count"`
		SkipCount     float64    `json:"skip_count"`
		StartedAt     string     `json:"started_at"`
		CompletedAt   string     `json:"completed_at"`
		IncludeErrors bool       `json:"include_errors"`
		Errors        []RowError `json:"errors"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Execution{
		IntegrationID: w.IntegrationID, ExecutionID: w.ExecutionID, Status: w.Status, StatusMsg: w.StatusMsg,
		InputCount: int64(w.InputCount),
		ErrorCount: int64(w.ErrorCount), SkipCount: int64(w.SkipCount),
		IncludeErrors: w.IncludeErrors, Errors: w.Errors,
	}
	switch {
	case w.SuccessCount != nil:
		e.SuccessCount = int64(*w.SuccessCount)
	case w.Succcess != nil:
		e.SuccessCount = int64(*w.Succcess)
	}
	var err error
	if e.StartedAt, err = parseTime("started_at", w.StartedAt); err != nil {
		return err
	}
	e.CompletedAt, err = parseTime("completed_at", w.CompletedAt)
	return err
}

func parseTime(name, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bulk: %s: %w", name, err)
	}
	return t, nil
}

// RowError is a record the execution could not load.
type RowError struct {
	// ID identifies the failed record; it may be empty (a record without
	// a key value).
	ID      string
	Message string
	// Row is the failing record, column name to value.
	Row map[string]any
	// RowText is data_row when the service sent it as a string that is
	// not a JSON object (the interface declares a string).
	RowText string
}

// UnmarshalJSON accepts data_row as an object or as a string, which is
// decoded as an object when it holds one.
func (e *RowError) UnmarshalJSON(b []byte) error {
	var w struct {
		ID      string          `json:"id"`
		Message string          `json:"message"`
		DataRow json.RawMessage `json:"data_row"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = RowError{ID: w.ID, Message: w.Message}
	if len(w.DataRow) == 0 || string(w.DataRow) == "null" {
		return nil
	}
	if w.DataRow[0] == '"' {
		if err := json.Unmarshal(w.DataRow, &e.RowText); err != nil {
			return err
		}
		if json.Unmarshal([]byte(e.RowText), &e.Row) == nil && e.Row != nil {
			e.RowText = ""
		}
		return nil
	}
	return json.Unmarshal(w.DataRow, &e.Row)
}

// Ticket is a signed upload URL and the token that later names the
// uploaded file (GET /bulk/v1/bulkload/{integration_id}/upload_url).
type Ticket struct {
	// UploadURL receives the file with POST (see UploadParams). It may
	// be on another host: no credentials are sent to it.
	UploadURL string `json:"upload_url"`
	// UploadToken is passed as LoadParams.FileToken to load the file.
	UploadToken string `json:"upload_token"`
}
