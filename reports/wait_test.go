package reports_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"

	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/reports"
)

// TestWaitViewRule: an empty or unknown status keeps the wait polling; a
// terminal failure is a *reports.ViewError carrying the final status, and
// the last status comes back beside any error.
func TestWaitViewRule(t *testing.T) {
	c, mt := mocktest.New(t)
	bodies := []string{
		`{"viewId": 7, "viewStatus": ""}`,
		`{"viewId": 7, "viewStatus": "ARCHIVING"}`,
		`{"viewId": 7, "viewStatus": "RUNNING"}`,
		`{"viewId": 7, "viewStatus": "FAILED"}`,
	}
	n := 0
	mt.RegisterResponder("GET", base+"/report/v1/view/7/status", func(*http.Request) (*http.Response, error) {
		b := bodies[min(n, len(bodies)-1)]
		n++
		return httpmock.NewStringResponse(200, b), nil
	})
	var seen []string
	st, err := c.Reports.WaitView(context.Background(), 7, reports.WaitOptions{
		Interval: time.Microsecond, MaxInterval: time.Microsecond,
		Progress: func(v *reports.ViewStatus) { seen = append(seen, string(v.Status)) },
	})
	var verr *reports.ViewError
	if !errors.As(err, &verr) || verr.View.Status != reports.ViewFailed || verr.View.ViewID != 7 || st != verr.View {
		t.Fatalf("WaitView = %+v, %v; want FAILED and a *ViewError", st, err)
	}
	if strings.Join(seen, ",") != ",ARCHIVING,RUNNING,FAILED" {
		t.Errorf("progress saw %q", seen)
	}

	ctx, cancel := context.WithCancel(context.Background())
	n = 2 // RUNNING from now on until FAILED
	st, err = c.Reports.WaitView(ctx, 7, reports.WaitOptions{Progress: func(*reports.ViewStatus) { cancel() }})
	if !errors.Is(err, context.Canceled) || st == nil || st.Status != reports.ViewRunning {
		t.Fatalf("WaitView after cancel = %+v, %v; want RUNNING and context.Canceled", st, err)
	}
	// The error says what was still awaited, not only that ctx ended.
	if want := "partner: reports: view 7 still RUNNING: context canceled"; err.Error() != want {
		t.Errorf("error reads %q, want %q", err, want)
	}
}
