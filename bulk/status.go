package bulk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/internal/check"
	"github.com/partnerapi/partner-go/internal/errs"
	"github.com/partnerapi/partner-go/internal/plumbing"
	"github.com/partnerapi/partner-go/internal/poll"
)

// StatusParams choose what a status read returns (its query parameters).
// Each parameter is sent exactly as set, false and 0 included, and left
// out when nil: the service then applies its own default, which differs
// between deployments (include_errors false or true, max_errors 10 or 5),
// so set both when the answer matters.
//
//	bulk.StatusParams{IncludeErrors: new(true), MaxErrors: new(3)}
type StatusParams struct {
	// IncludeErrors asks for the failed records (include_errors=true) or
	// asks not to get them (include_errors=false).
	IncludeErrors *bool `url:"include_errors,omitempty"`
	// MaxErrors caps the failed records returned (max_errors); it must
	// not be negative.
	MaxErrors *int `url:"max_errors,omitempty"`
}

// statusQuery is the query of a status read.
type statusQuery struct {
	ExecutionID string `url:"execution_id"`
	StatusParams
}

// Status reads the status of an execution
// (GET /bulk/v1/status/{integration_id}?execution_id=...).
func (s *Service) Status(ctx context.Context, integrationID, executionID string, p StatusParams) (*Execution, error) {
	if integrationID == "" {
		return nil, errors.New("partner: bulk: integration id is required")
	}
	if executionID == "" {
		return nil, errors.New("partner: bulk: execution id is required")
	}
	if p.MaxErrors != nil && *p.MaxErrors < 0 {
		return nil, errors.New("partner: bulk: max errors must not be negative")
	}
	q := statusQuery{ExecutionID: executionID, StatusParams: p}
	return core.DoNew[Execution](ctx, s.t, &core.Request{
		Op:     "bulk.Status",
		Method: http.MethodGet, Route: core.PathOf("/bulk/v1/status/{integration_id}", integrationID), Query: q,
	})
}

// WaitOptions tune WaitExecution. The zero value reads the status at
// once, then after waits of about 60ms, 95ms, 140ms, 210ms, each half as
// long again as the one before, up to one read every 10s, and sends
// neither include_errors nor max_errors, so whether failed records come
// back is the service's default, which differs between deployments.
type WaitOptions struct {
	// Status is passed to every status read: set IncludeErrors to
	// new(true) to get the failed records with the final status,
	// or to new(false) to be sure not to get them.
	Status StatusParams
	// Interval sets the pace of the status reads (default 1s): the first
	// wait is Interval/16, each next one half as long again, up to
	// MaxInterval (default 10s).
	// Each wait is jittered by ±10%.
	Interval    time.Duration
	MaxInterval time.Duration
	// Progress, when set, is called on the calling goroutine with every
	// status read, the final one included.
	Progress func(*Execution)
}

// ExecutionError is the error of a wait whose execution reached a
// terminal state that is a failure: it completed with a status_msg,
// which the interface sends "when the execution has failed". Records
// that failed in an execution that completed are not an ExecutionError:
// they are counted in Execution.ErrorCount.
type ExecutionError struct {
	// Execution is the final status read.
	Execution *Execution
}

// Error reads "partner: bulk: execution ID STATE: STATUS_MSG".
func (e *ExecutionError) Error() string {
	return fmt.Sprintf("partner: bulk: execution %s %s: %s", e.Execution.ExecutionID, e.Execution.Status, e.Execution.StatusMsg)
}

// WaitExecution reads the status of the execution of a load (Status:
// GET /bulk/v1/status/{integration_id}) until it reaches a known terminal
// state or ctx ends. ack is what the load returned; to wait on an
// execution known only by its ids, pass
// &Ack{IntegrationID: integrationID, ExecutionID: executionID}. An empty
// or unknown status is not terminal: the wait goes on. A completed
// execution is returned with a nil error, unless it failed (see
// ExecutionError).
//
// Whatever the outcome, the first result is the last status read (nil
// when none was), beside the error of a terminal failure
// (*ExecutionError), of a status read, or of the context. A wait that
// ends early sends nothing that changes data: call it again with the
// same ack.
func (s *Service) WaitExecution(ctx context.Context, ack *Ack, opts WaitOptions) (*Execution, error) {
	if ack == nil {
		return nil, errors.New("partner: bulk: an ack (the execution to wait on) is required")
	}
	po := poll.Options{Initial: opts.Interval, Max: opts.MaxInterval}
	if po.Initial <= 0 {
		po.Initial = time.Second
	}
	ctx, span := s.startWait(ctx, ack)
	var state State
	e, err := poll.Wait(ctx, po, poll.Waiter[*Execution]{
		Read: func(ctx context.Context) (*Execution, error) {
			e, err := s.Status(ctx, ack.IntegrationID, ack.ExecutionID, opts.Status)
			noteState(span, &state, e)
			return e, err
		},
		Progress: opts.Progress,
		Settle: func(e *Execution) (bool, error) {
			switch {
			case !e.Done():
				return false, nil
			case e.StatusMsg != "":
				return false, &ExecutionError{Execution: e}
			}
			return true, nil
		},
		Still: func(e *Execution) string {
			return fmt.Sprintf("bulk: execution %s still %s", ack.ExecutionID, poll.StateText(string(e.Status)))
		},
	})
	s.endWait(ctx, span, e, err)
	return e, err
}

// UploadURL asks for a signed URL to upload a file to
// (GET /bulk/v1/bulkload/{integration_id}/upload_url?file_name=...).
// fileName is the file's name with its extension.
func (s *Service) UploadURL(ctx context.Context, integrationID, fileName string) (*Ticket, error) {
	if integrationID == "" {
		return nil, errors.New("partner: bulk: integration id is required")
	}
	if fileName == "" {
		return nil, errors.New("partner: bulk: file name is required")
	}
	return core.DoNew[Ticket](ctx, s.t, &core.Request{
		Op:     "bulk.UploadURL",
		Method: http.MethodGet, Route: core.PathOf("/bulk/v1/bulkload/{integration_id}/upload_url", integrationID),
		Query: url.Values{"file_name": {fileName}},
	})
}

// UploadParams choose how Upload sends a file to a ticket's signed URL.
// The interface says POST; a signed URL of cloud storage is signed for
// one method and may be signed for one content type too, so set both to
// what the service signed the URL for when that differs.
type UploadParams struct {
	// Method is POST (when empty) or PUT.
	Method string
	// ContentType is the Content-Type of the upload:
	// application/octet-stream when empty.
	ContentType string
}

// resolve validates p and returns the method and content type it
// names, with their defaults.
func (p UploadParams) resolve() (method, ctype string, err error) {
	method = strings.ToUpper(p.Method)
	switch method {
	case "":
		method = http.MethodPost
	case http.MethodPost, http.MethodPut:
	default:
		return "", "", fmt.Errorf("partner: bulk: upload method must be POST or PUT, not %q", p.Method)
	}
	ctype = p.ContentType
	if ctype == "" {
		ctype = "application/octet-stream"
	} else if _, _, err := mime.ParseMediaType(ctype); err != nil {
		return "", "", fmt.Errorf("partner: bulk: upload content type %q: %w", ctype, err)
	}
	return method, ctype, nil
}

// Upload sends the file read from r to the ticket's signed URL, with
// POST unless p says otherwise. No Authorization header or environment
// header goes to that URL, which may be on another host. The file is
// streamed; a POST is not repeated once the server may have received it
// (a PUT replaces the stored file and is), and an io.ReadSeeker is
// rewound when the upload must be sent again. An error marked
// partner.IsOutcomeUnknown means the file may be stored at the URL;
// nothing is processed before Load, so start again with a new ticket
// (UploadURL). When the storage host answers 403 the error says why that
// usually happens: the URL's signature covers the method, the content
// type and an expiry.
func (s *Service) Upload(ctx context.Context, t *Ticket, p UploadParams, r io.Reader) error {
	if t == nil || t.UploadURL == "" {
		return errors.New("partner: bulk: ticket has no upload URL")
	}
	u, err := url.Parse(t.UploadURL)
	if err != nil || !check.IsHTTPURL(u) {
		return errors.New("partner: bulk: ticket's upload URL is not an absolute http(s) URL")
	}
	if r == nil {
		return errors.New("partner: bulk: file reader is required")
	}
	method, ctype, err := p.resolve()
	if err != nil {
		return err
	}
	err = s.t.Do(ctx, &core.Request{
		Op:     "bulk.Upload",
		Method: method, URL: t.UploadURL, Body: r, ContentType: ctype,
		Idempotent: method == http.MethodPut,
	}, nil)
	if core.HasStatus(err, http.StatusForbidden) {
		return errs.With(err, fmt.Errorf("the storage host refused the signed URL: its signature covers the method (%s sent), "+
			"the content type (%s sent) and an expiry; set UploadParams to what the URL was signed for, or get a new ticket", method, ctype))
	}
	return err
}

// LoadFileParams are the parameters of LoadFile: those of the load
// (POST /bulk/v1/bulkload) and of the upload before it.
type LoadFileParams struct {
	// IntegrationID names the integration being loaded. Required.
	IntegrationID string
	// Format of the file (data_format): when empty, the one the file's
	// extension names (FormatOf); when neither says it, LoadFile sends
	// nothing and returns an error.
	Format Format
	// ColumnDelimiter is the one-character CSV column delimiter
	// (column_delimiter): "," when empty.
	ColumnDelimiter string
	// Upload says how the file is sent to the signed URL: POST and
	// application/octet-stream when zero.
	Upload UploadParams
}

// LoadFile loads the file at path through a signed upload: UploadURL
// (with the file's base name), Upload (as p.Upload says), then Load with
// the upload token, which triggers processing. An error marked
// partner.IsOutcomeUnknown comes from the upload or from the load; as the
// load may have been received, read the integration's data before
// calling LoadFile again.
func (s *Service) LoadFile(ctx context.Context, p LoadFileParams, path string) (ack *Ack, err error) {
	ctx, span := plumbing.Of(s.t).StartSpan(ctx, "bulk.LoadFile", attribute.String(attrIntegrationID, p.IntegrationID))
	defer func() { plumbing.EndSpan(span, err) }()
	return s.loadFile(ctx, p, path)
}

func (s *Service) loadFile(ctx context.Context, p LoadFileParams, path string) (*Ack, error) {
	lp := LoadParams{IntegrationID: p.IntegrationID, Format: p.Format, ColumnDelimiter: p.ColumnDelimiter}
	_, format, err := lp.query(FormatOf(path))
	if err != nil {
		return nil, err
	}
	if format == "" {
		return nil, unknownFormat(filepath.Base(path), "LoadFileParams.Format")
	}
	if _, _, err := p.Upload.resolve(); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("partner: bulk: %w", err) // names the path
	}
	defer f.Close()
	t, err := s.UploadURL(ctx, p.IntegrationID, filepath.Base(path))
	if err != nil {
		return nil, err
	}
	if err := s.Upload(ctx, t, p.Upload, f); err != nil {
		return nil, err
	}
	lp.Format, lp.FileToken = format, t.UploadToken
	return s.Load(ctx, lp, nil)
}
