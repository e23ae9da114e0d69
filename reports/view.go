package reports

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/partnerapi/partner-go/internal/poll"
	"github.com/partnerapi/partner-go/internal/transport"
)

// ViewStatus is the state of a prepared view (viewStatus). A view moves
// from PENDING through RUNNING to SUCCESS or FAILED; views older than 24
// hours are DELETED and their data is gone.
type ViewStatus string

// View statuses.
const (
	ViewPending ViewStatus = "PENDING"
	ViewRunning ViewStatus = "RUNNING"
	ViewSuccess ViewStatus = "SUCCESS"
	ViewFailed  ViewStatus = "FAILED"
	ViewDeleted ViewStatus = "DELETED"
)

// Errors of WaitForView, matched with errors.Is.
var (
	ErrViewFailed  = errors.New("partner: reports: view failed")
	ErrViewDeleted = errors.New("partner: reports: view deleted")
)

// PrepareExport starts the background job that snapshots a report into a
// view, in one transaction (POST /report/v1/view/{reportId}/prepare_export),
// and returns the view's ID. Wait for it with WaitForView.
func (s *Service) PrepareExport(ctx context.Context, reportID int64) (int64, error) {
	var out struct {
		ViewID int64 `json:"viewId"`
	}
	err := s.t.Do(ctx, &transport.Request{
		Method: "POST", Path: transport.Pathf("/report/v1/view/%d/prepare_export", reportID),
		JSON: struct{}{},
	}, &out)
	if err != nil {
		return 0, err
	}
	return out.ViewID, nil
}

// ViewState is the answer of the view status operation.
type ViewState struct {
	ViewID int64      `json:"viewId"`
	Status ViewStatus `json:"viewStatus"`
}

// ViewStatus reads the state of a view (GET /report/v1/view/{viewId}/status).
func (s *Service) ViewStatus(ctx context.Context, viewID int64) (ViewState, error) {
	var out ViewState
	err := s.t.Do(ctx, &transport.Request{Method: "GET", Path: transport.Pathf("/report/v1/view/%d/status", viewID)}, &out)
	return out, err
}

// WaitOptions tune WaitForView.
type WaitOptions struct {
	// Interval is the wait between two status checks once polling has
	// settled (default 250ms); the first waits are shorter (Interval/16,
	// doubling), later ones grow by half up to MaxInterval (default 5s).
	Interval    time.Duration
	MaxInterval time.Duration
	// Progress, when set, is called with the status after every check.
	Progress func(ViewStatus)
}

// WaitForView polls a view's status (ViewStatus: GET
// /report/v1/view/{viewId}/status) with backoff until it is SUCCESS
// (nil error), FAILED (ErrViewFailed) or DELETED (ErrViewDeleted), or ctx
// is done. A status the SDK does not know is treated as still running.
func (s *Service) WaitForView(ctx context.Context, viewID int64, opts WaitOptions) (ViewStatus, error) {
	if opts.Interval <= 0 {
		opts.Interval = 250 * time.Millisecond
	}
	if opts.MaxInterval <= 0 {
		opts.MaxInterval = 5 * time.Second
	}
	var last ViewStatus
	err := poll.Until(ctx, poll.Options{Initial: opts.Interval, Max: opts.MaxInterval, Multiplier: 1.5},
		func(ctx context.Context) (bool, error) {
			st, err := s.ViewStatus(ctx, viewID)
			if err != nil {
				return false, err
			}
			last = st.Status
			if opts.Progress != nil {
				opts.Progress(last)
			}
			switch last {
			case ViewSuccess:
				return true, nil
			case ViewFailed:
				return false, fmt.Errorf("%w: view %d", ErrViewFailed, viewID)
			case ViewDeleted:
				return false, fmt.Errorf("%w: view %d", ErrViewDeleted, viewID)
			}
			return false, nil
		})
	return last, err
}
