package partner_test

import (
	"context"
	"net/http"
	"testing"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/reports"
)

// TestCaptureDuringExport: one context with a Capture drives an
// export, whose page requests are sent at once; the Capture is written
// one request at a time (go test -race fails otherwise) and holds the
// answer of one of them.
func TestCaptureDuringExport(t *testing.T) {
	c, srv := mocktest.FakeClient(t, mocktest.NoWaits())
	rows := make([][]any, 400)
	for i := range rows {
		rows[i] = []any{"row"}
	}
	id := srv.AddReport(fake.Report{Name: "r", Columns: []fake.Column{{ID: "n", Name: "n"}}, Rows: rows})
	var info partner.ResponseInfo
	ctx := partner.WithCallOptions(context.Background(), partner.CallOptions{Capture: &info})
	n := 0
	for _, err := range c.Reports.Export(ctx, id, reports.ExportOptions{PageSize: 10, Concurrency: 8}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != len(rows) {
		t.Fatalf("%d rows, want %d", n, len(rows))
	}
	if info.StatusCode != http.StatusOK || info.Attempts < 1 || info.RequestID == "" {
		t.Errorf("Capture %+v, want a request's 200 answer", info)
	}
}
