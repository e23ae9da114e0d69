package partner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/reports"
)

// TestPipelineReport is the README's example of a test against the fake,
// word for word (TestReadmeTestFunctionsRun, in internal/repocheck, keeps them the same).
func TestPipelineReport(t *testing.T) {
	t.Parallel()
	// Report views ready at once, and quick retries: the test waits for nothing.
	srv := fake.NewServer(fake.WithDemoData(), fake.WithViewDelay(0))
	defer srv.Close()
	c, err := partner.New(
		partner.WithConnection(srv.Connection()), // the fake's URL, credentials and words
		partner.WithRetryWait(time.Millisecond, 10*time.Millisecond),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())

	// The first report list answers 503; the client retries it.
	srv.InjectFault(fake.Fault{Method: "POST", Path: "/report/v1/list", Status: 503, Times: 1})
	var names []string
	for r, err := range c.Reports.List(t.Context(), reports.ListParams{}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, r.Name)
	}
	if len(names) == 0 {
		t.Fatal("no reports listed")
	}
	if n := srv.CountRequests("POST", "/report/v1/list"); n != 2 {
		t.Errorf("%d list requests, want 2: the 503 and its retry", n)
	}

	var csv strings.Builder
	n, err := c.Reports.ExportCSV(t.Context(), demo.ReportPipeline, &csv, reports.ExportOptions{})
	if err != nil || n == 0 {
		t.Fatalf("exported %d rows: %v", n, err)
	}
}
