package partner_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/paging"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/reports"
	"github.com/partnerapi/partner-go/scim"
)

func reliabilityClient(t *testing.T, srv *fake.Server, opts ...partner.Option) *partner.Client {
	t.Helper()
	c, err := partner.New(append([]partner.Option{partner.WithBaseURL(srv.URL),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret),
		partner.WithRetryWait(time.Millisecond, 5*time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// TestAmbiguousWrites: against the fake, a non-idempotent write whose
// answer is lost after the service processed it fails with an error that
// IsOutcomeUnknown reports, and the lookup its doc names finds the result;
// a retried unsubscribe whose first attempt removed the subscriber
// succeeds; prepare_export is retried like a read.
func TestAmbiguousWrites(t *testing.T) {
	t.Parallel()
	srv := fake.NewServer(fake.WithDemoData(), fake.WithFullSCIMFilter(), mocktest.ContractCheck(t))
	defer srv.Close()
	c := reliabilityClient(t, srv)
	ctx := context.Background()

	// SCIM create: the user is stored, the answer is lost.
	srv.InjectFault(fake.Fault{Method: "POST", Path: "/api/scim/v2/Users", Times: 1, DropAfter: true})
	_, err := c.SCIM.Create(ctx, &scim.User{UserName: "lost.answer@example.com"})
	if err == nil || !partner.IsOutcomeUnknown(err) {
		t.Fatalf("create with a lost answer: %v, want outcome unknown", err)
	}
	if u, err := c.SCIM.FindByUserName(ctx, "lost.answer@example.com"); err != nil || u.ID == "" {
		t.Fatalf("the lookup the doc names: %+v, %v", u, err)
	}
	// A refused create is not ambiguous.
	_, err = c.SCIM.Create(ctx, &scim.User{UserName: "lost.answer@example.com"})
	if !partner.IsConflict(err) || partner.IsOutcomeUnknown(err) {
		t.Fatalf("duplicate create: %v, want a 409 not marked", err)
	}

	// Subscribe: a 500 may have registered it.
	sub := events.SubscribeParams{Name: "s", Events: []events.Kind{events.KindObjectUpdate}, CallbackURL: "http://127.0.0.1:9/hook"}
	srv.InjectFault(fake.Fault{Method: "POST", Path: "/event/v1/subscriber", Times: 1, Status: 500})
	if _, err := c.Events.Subscribe(ctx, sub); !partner.IsServerError(err) || !partner.IsOutcomeUnknown(err) {
		t.Fatalf("subscribe answered 500: %v, want outcome unknown", err)
	}
	{
		id, err := c.Events.Subscribe(ctx, sub)
		if err != nil {
			t.Fatal(err)
		}
		// Unsubscribe: the first attempt removes it, its answer is lost.
		srv.InjectFault(fake.Fault{Method: "DELETE", Path: "/event/v1/subscriber/*", Times: 1, DropAfter: true})
		if err := c.Events.Unsubscribe(ctx, id); err != nil {
			t.Fatalf("unsubscribe whose first answer was lost: %v, want nil", err)
		}
		subs, _ := paging.Collect(c.Events.Subscribers(ctx))
		for _, s := range subs {
			if s.ID == id {
				t.Fatalf("subscriber %s still there", id)
			}
		}
		if err := c.Events.Unsubscribe(ctx, id); !partner.IsNotFound(err) {
			t.Fatalf("unsubscribe of an id already gone: %v, want 404", err)
		}
	}

	// Bulk load: the load is processed, the answer is lost; the doc says
	// to read the integration's data before loading again.
	csv := "sales_details.crm_opportunity_id,name,stage,amount\nAMB-1,Ambiguous deal,proposal,100\n"
	srv.InjectFault(fake.Fault{Method: "POST", Path: "/bulk/v1/bulkload", Times: 1, DropAfter: true})
	if _, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, strings.NewReader(csv)); !partner.IsOutcomeUnknown(err) {
		t.Fatalf("load with a lost answer: %v, want outcome unknown", err)
	}
	found := 0
	for _, o := range srv.Objects("opportunity") {
		if o.Fields["name"] == "Ambiguous deal" {
			found++
		}
	}
	if found != 1 {
		t.Fatalf("the load behind the ambiguous error wrote %d objects, want 1", found)
	}
	// A signed upload answered 500: the doc says to start again with a
	// new ticket, and the load of that one goes through.
	tk, err := c.Bulk.UploadURL(ctx, demo.OpportunityIntegration, "deals.csv")
	if err != nil {
		t.Fatal(err)
	}
	srv.InjectFault(fake.Fault{Method: "POST", Path: "/upload/*", Times: 1, Status: 500})
	if err := c.Bulk.Upload(ctx, tk, bulk.UploadParams{}, strings.NewReader(csv)); !partner.IsOutcomeUnknown(err) {
		t.Fatalf("upload answered 500: %v, want outcome unknown", err)
	}
	if tk, err = c.Bulk.UploadURL(ctx, demo.OpportunityIntegration, "deals.csv"); err != nil {
		t.Fatal(err)
	}
	if err := c.Bulk.Upload(ctx, tk, bulk.UploadParams{}, strings.NewReader(csv)); err != nil {
		t.Fatalf("upload with a new ticket: %v", err)
	}
	if _, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration, Format: bulk.CSV, FileToken: tk.UploadToken}, nil); err != nil {
		t.Fatalf("load of the new ticket: %v", err)
	}

	// prepare_export: a 500 is retried.
	srv.InjectFault(fake.Fault{Method: "POST", Path: "/report/v1/view/*/prepare_export", Times: 1, Status: 500})
	if id, err := c.Reports.PrepareExport(ctx, demo.ReportPartners); err != nil || id == 0 {
		t.Fatalf("prepare_export after a 500: %d, %v", id, err)
	}
}

// TestPlainHTTPCallbackRefused: a webhook callback in plain http to a host
// that is not a loopback address is refused before anything is sent,
// unless the client allows insecure HTTP.
func TestPlainHTTPCallbackRefused(t *testing.T) {
	t.Parallel()
	srv := fake.NewServer(mocktest.ContractCheck(t))
	defer srv.Close()
	ctx := context.Background()
	sub := events.SubscribeParams{Name: "s", Events: []events.Kind{events.KindObjectUpdate}, CallbackURL: "http://hooks.example.test/in"}
	c := reliabilityClient(t, srv)
	if _, err := c.Events.Subscribe(ctx, sub); err == nil || srv.CountRequests("POST", "/event/v1/subscriber") != 0 {
		t.Fatalf("plain http callback: %v, want refused before sending", err)
	}
	sub.CallbackURL = "https://hooks.example.test/in"
	if _, err := c.Events.Subscribe(ctx, sub); err != nil {
		t.Fatalf("https callback: %v", err)
	}
	c = reliabilityClient(t, srv, partner.WithInsecureHTTP())
	sub.CallbackURL = "http://hooks.example.test/in"
	if _, err := c.Events.Subscribe(ctx, sub); err != nil {
		t.Fatalf("plain http callback with WithInsecureHTTP: %v", err)
	}
}

// TestRetryOptions: WithRetryBudget bounds the retries of all calls of a
// client while the service fails; WithRetryBudget(0) removes the bound;
// WithMaxRetryAfter ends the retries at once on a longer Retry-After.
func TestRetryOptions(t *testing.T) {
	t.Parallel()
	srv := fake.NewServer(fake.WithDemoData(), mocktest.ContractCheck(t))
	defer srv.Close()
	ctx := context.Background()
	c := reliabilityClient(t, srv, partner.WithRetryBudget(20), partner.WithMaxRetries(10))
	if _, err := c.SCIM.Get(ctx, "nobody"); !partner.IsNotFound(err) { // the token, outside the outage
		t.Fatal(err)
	}
	srv.InjectFault(fake.Fault{Method: "GET", Path: "/api/scim/v2/Users/*", Status: 503})
	_, err := c.SCIM.Get(ctx, "u1")
	if !errors.Is(err, partner.ErrRetryBudgetExhausted) || !partner.IsServerError(err) {
		t.Fatalf("first call in an outage: %v, want the 503 with ErrRetryBudgetExhausted", err)
	}
	before := srv.CountRequests("GET", "/api/scim/v2/Users/*")
	_, err = c.SCIM.Get(ctx, "u1")
	if !errors.Is(err, partner.ErrRetryBudgetExhausted) || srv.CountRequests("GET", "/api/scim/v2/Users/*") != before+1 {
		t.Fatalf("second call: %v, want one attempt and ErrRetryBudgetExhausted", err)
	}

	c = reliabilityClient(t, srv, partner.WithRetryBudget(0), partner.WithMaxRetries(6))
	before = srv.CountRequests("GET", "/api/scim/v2/Users/*")
	if _, err := c.SCIM.Get(ctx, "u1"); errors.Is(err, partner.ErrRetryBudgetExhausted) || srv.CountRequests("GET", "/api/scim/v2/Users/*") != before+7 {
		t.Fatalf("no budget: %v after %d attempts, want 7", err, srv.CountRequests("GET", "/api/scim/v2/Users/*")-before)
	}
	srv.ClearFaults()

	srv.InjectFault(fake.Fault{Method: "GET", Path: "/api/scim/v2/Users/*", Status: 429, RetryAfter: "120"})
	// At once: one attempt, and the retries end on the cap before any
	// wait (a wait comes only before a retry), as the debug log says.
	var logs bytes.Buffer
	c = reliabilityClient(t, srv, partner.WithMaxRetryAfter(time.Minute),
		partner.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	before = srv.CountRequests("GET", "/api/scim/v2/Users/*")
	_, err = c.SCIM.Get(ctx, "u1")
	var perr *partner.Error
	if !errors.As(err, &perr) || perr.StatusCode != 429 || perr.RetryAfter != 2*time.Minute ||
		srv.CountRequests("GET", "/api/scim/v2/Users/*") != before+1 || !strings.Contains(logs.String(), "not retrying: Retry-After beyond the cap") {
		t.Fatalf("Retry-After 120 over a 60s cap: %v after %d attempts, want the 429 after 1 and no retry; log:\n%s",
			err, srv.CountRequests("GET", "/api/scim/v2/Users/*")-before, logs.String())
	}
}

// TestTruncatedAnswers: against the fake's Truncate fault (a 2xx cut off
// mid-body), a read is repeated and succeeds, an export's data page too,
// and a create is sent once and fails marked outcome unknown.
func TestTruncatedAnswers(t *testing.T) {
	t.Parallel()
	clock := fake.NewManualClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	srv := fake.NewServer(fake.WithDemoData(), fake.WithClock(clock), mocktest.ContractCheck(t))
	defer srv.Close()
	c := reliabilityClient(t, srv)
	ctx := context.Background()
	u, err := c.SCIM.Create(ctx, &scim.User{UserName: "cut.answer@example.com"})
	if err != nil {
		t.Fatal(err)
	}

	srv.InjectFault(fake.Fault{Method: "GET", Path: "/api/scim/v2/Users/*", Times: 1, Truncate: true})
	before := srv.CountRequests("GET", "/api/scim/v2/Users/*")
	if got, err := c.SCIM.Get(ctx, u.ID); err != nil || got.UserName != u.UserName || srv.CountRequests("GET", "/api/scim/v2/Users/*") != before+2 {
		t.Fatalf("read cut once: %+v %v, want the user after 2 requests", got, err)
	}

	id := srv.AddReport(fake.Report{ID: 31, Name: "Cut", Columns: []fake.Column{{ID: "0", Name: "Zone"}}, Rows: [][]any{{"EMEA"}, {"APAC"}}})
	// On page 0, which holds the rows, rather than on whichever of the
	// export's requests (page 0, a probe, page 1) comes first.
	srv.InjectFault(fake.Fault{Method: "POST", Path: "/report/v1/view/*/data", PageSize: reports.DefaultExportPageSize, Times: 1, Truncate: true})
	var csv strings.Builder
	// The view is ready once the fake's clock has moved past its states.
	wait := reports.WaitOptions{Interval: time.Millisecond, Progress: func(st *reports.ViewStatus) {
		if st.Status != reports.ViewSuccess {
			clock.Advance(fake.ViewPendingFor + fake.ViewRunningFor)
		}
	}}
	if n, err := c.Reports.ExportCSV(ctx, id, &csv, reports.ExportOptions{Wait: wait}); err != nil || n != 2 || csv.String() != "Zone\nEMEA\nAPAC\n" {
		t.Fatalf("export with a page cut once: %d rows %q, %v", n, csv.String(), err)
	}
	if len(srv.Faults()) != 0 {
		t.Fatal("the export's page 0 was not cut")
	}

	srv.InjectFault(fake.Fault{Method: "POST", Path: "/api/scim/v2/Users", Times: 1, Truncate: true})
	before = srv.CountRequests("POST", "/api/scim/v2/Users")
	_, err = c.SCIM.Create(ctx, &scim.User{UserName: "cut.create@example.com"})
	if !partner.IsOutcomeUnknown(err) || !strings.Contains(err.Error(), "reading response") || srv.CountRequests("POST", "/api/scim/v2/Users") != before+1 {
		t.Fatalf("create cut: %v after %d requests, want outcome unknown after 1", err, srv.CountRequests("POST", "/api/scim/v2/Users")-before)
	}
}
