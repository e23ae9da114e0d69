package reports

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/internal/plumbing"
	"github.com/partnerapi/partner-go/internal/poll"
)

// ViewState is the state of a prepared view (viewStatus). A view moves
// from PENDING through RUNNING to SUCCESS or FAILED; views older than 24
// hours are DELETED and their data is gone. The service may send other
// states; they are kept.
type ViewState string

// View states.
const (
	ViewPending ViewState = "PENDING"
	ViewRunning ViewState = "RUNNING"
	ViewSuccess ViewState = "SUCCESS"
	ViewFailed  ViewState = "FAILED"
	ViewDeleted ViewState = "DELETED"
)

// ViewError is the error of a wait whose view reached a terminal state
// that is a failure: FAILED, or DELETED (its data is gone).
type ViewError struct {
	// View is the final status read.
	View *ViewStatus
}

// Error reads "partner: reports: view ID STATE", e.g. "partner: reports:
// view 7 FAILED".
func (e *ViewError) Error() string {
	return fmt.Sprintf("partner: reports: view %d %s", e.View.ViewID, e.View.Status)
}

// PrepareExport starts the background job that snapshots a report into a
// view, in one transaction (POST /report/v1/view/{reportId}/prepare_export),
// and returns the view's ID. Wait for it with WaitView.
//
// It is retried like a read (network errors, 429, 5xx): a repeat only
// makes another snapshot, and a view nobody reads expires by itself.
func (s *Service) PrepareExport(ctx context.Context, reportID int64) (int64, error) {
	var out struct {
		ViewID int64 `json:"viewId"`
	}
	err := s.t.Do(ctx, &core.Request{
		Op:     "reports.PrepareExport",
		Method: http.MethodPost, Route: core.PathOf("/report/v1/view/{reportId}/prepare_export", reportID),
		JSON: struct{}{}, Idempotent: true,
	}, &out)
	if err != nil {
		return 0, err
	}
	return out.ViewID, nil
}

// ViewStatus is the state of a view, as the view status operation reads
// it.
type ViewStatus struct {
	// ViewID is the view that was asked about.
	ViewID int64 `json:"viewId"`
	// Status is the view's state (member viewStatus).
	Status ViewState `json:"viewStatus"`
}

// ViewStatus reads the state of a view (GET /report/v1/view/{viewId}/status).
// The answer carries only viewStatus (the published example is
// {"viewStatus": "RUNNING"}): the result's ViewID is viewID, whatever the
// body holds.
func (s *Service) ViewStatus(ctx context.Context, viewID int64) (*ViewStatus, error) {
	var out struct {
		Status ViewState `json:"viewStatus"`
	}
	err := s.t.Do(ctx, &core.Request{Op: "reports.ViewStatus", Method: http.MethodGet, Route: core.PathOf("/report/v1/view/{viewId}/status", viewID)}, &out)
	if err != nil {
		return nil, err
	}
	return &ViewStatus{ViewID: viewID, Status: out.Status}, nil
}

// WaitOptions tune WaitView, and the wait of Export and ExportCSV. The
// zero value reads the status at once, then after waits of about 16ms,
// 23ms, 35ms, 53ms, 79ms, each half as long again as the one before, up
// to one read every 5s.
type WaitOptions struct {
	// Interval sets the pace of the status reads (default 250ms): the
	// first wait is Interval/16, each next one half as long again, up to
	// MaxInterval (default 5s).
	// Each wait is jittered by ±10%.
	Interval    time.Duration
	MaxInterval time.Duration
	// Progress, when set, is called on the calling goroutine with every
	// status read, the final one included.
	Progress func(*ViewStatus)
}

// WaitView reads a view's status (ViewStatus: GET
// /report/v1/view/{viewId}/status) until it reaches a known terminal
// state or ctx ends. An empty or unknown status is not terminal: the wait
// goes on. SUCCESS returns a nil error; FAILED and DELETED return a
// *ViewError.
//
// Whatever the outcome, the first result is the last status read (nil
// when none was), beside the error of a terminal failure (*ViewError), of
// a status read, or of the context.
func (s *Service) WaitView(ctx context.Context, viewID int64, opts WaitOptions) (*ViewStatus, error) {
	if opts.Interval <= 0 {
		opts.Interval = 250 * time.Millisecond
	}
	if opts.MaxInterval <= 0 {
		opts.MaxInterval = 5 * time.Second
	}
	ctx, span := plumbing.Of(s.t).StartSpan(ctx, "reports.WaitView", attribute.Int64(attrViewID, viewID))
	var state ViewState
	v, err := poll.Wait(ctx, poll.Options{Initial: opts.Interval, Max: opts.MaxInterval}, poll.Waiter[*ViewStatus]{
		Read: func(ctx context.Context) (*ViewStatus, error) {
			v, err := s.ViewStatus(ctx, viewID)
			noteViewState(span, &state, v)
			return v, err
		},
		Progress: opts.Progress,
		Settle: func(v *ViewStatus) (bool, error) {
			switch v.Status {
			case ViewSuccess:
				return true, nil
			case ViewFailed, ViewDeleted:
				return false, &ViewError{View: v}
			}
			return false, nil
		},
		Still: func(v *ViewStatus) string {
			return fmt.Sprintf("reports: view %d still %s", viewID, poll.StateText(string(v.Status)))
		},
	})
	endViewWait(span, v, err)
	return v, err
}
