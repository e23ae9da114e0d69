package partner_test

// Cross-area workflows: the SDK against fake.NewServer(fake.WithDemoData()),
// several areas in one run, the way an integration job uses them. Time in
// the fake is a ManualClock moved by the Wait helpers' progress callbacks,
// so that nothing sleeps and nothing depends on the machine's speed.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/objects"
	"github.com/partnerapi/partner-go/reports"
	"github.com/partnerapi/partner-go/scim"
	"github.com/partnerapi/partner-go/users"
)

// workflowEnv is the demo fake on a manual clock and a client of it.
type workflowEnv struct {
	srv   *fake.Server
	clock *fake.ManualClock
	c     *partner.Client
}

func newWorkflowEnv(t *testing.T) *workflowEnv {
	t.Helper()
	clock := fake.NewManualClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	c, srv := mocktest.FakeClient(t, []fake.Option{fake.WithDemoData(), fake.WithClock(clock), fake.WithFullSCIMFilter()})
	t.Cleanup(func() { c.Close(context.Background()) })
	return &workflowEnv{srv: srv, clock: clock, c: c}
}

// bulkWait waits for an execution, moving the fake's clock past the
// execution's processing time whenever a status read says it still runs.
func (e *workflowEnv) bulkWait() bulk.WaitOptions {
	return bulk.WaitOptions{
		Status:   bulk.StatusParams{IncludeErrors: new(true)},
		Interval: time.Millisecond,
		Progress: func(ex *bulk.Execution) {
			if !ex.Done() {
				e.clock.Advance(fake.DefaultBulkDelay)
			}
		},
	}
}

// viewWait waits for a view, moving the fake's clock on while it is not
// ready.
func (e *workflowEnv) viewWait() reports.WaitOptions {
	return reports.WaitOptions{
		Interval: time.Millisecond,
		Progress: func(st *reports.ViewStatus) {
			if st.Status != reports.ViewSuccess {
				e.clock.Advance(fake.ViewPendingFor + fake.ViewRunningFor)
			}
		},
	}
}

// pipeline reads the demo pipeline report in real time: its version and
// its rows as "Opportunity/Stage/Amount".
func pipeline(t *testing.T, c *partner.Client) (int64, []string) {
	t.Helper()
	var version int64 = -1
	var rows []string
	for p, err := range c.Reports.DataPages(context.Background(), demo.ReportPipeline, reports.DataParams{}) {
		if err != nil {
			t.Fatal(err)
		}
		if version >= 0 && p.Version != version {
			t.Fatalf("pages of versions %d and %d in one read of an unchanged report", version, p.Version)
		}
		version = p.Version
		for _, r := range p.Rows {
			rows = append(rows, r.Text("Opportunity")+"/"+r.Text("Stage")+"/"+r.Text("Amount"))
		}
	}
	return version, rows
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

// addDeals adds a report of n generated rows to srv, each with a "Deal
// ID" that counts up from 100000 the way demo.ReportLarge's do, and
// returns its ID.
func addDeals(srv *fake.Server, n int) int64 {
	return srv.AddReport(fake.Report{
		Name: "Deals",
		Columns: []fake.Column{
			{ID: "deal_id", Name: "Deal ID", Type: "NUMBER"},
			{ID: "partner", Name: "Partner"},
			{ID: "amount", Name: "Amount", Type: "CURRENCY"},
		},
		Generate: func(i int) []any {
			return []any{100000 + i, fmt.Sprintf("Partner %03d", i%250+1), float64(1000+(i*7919)%99000) + 0.5}
		},
		RowCount: n,
	})
}

// objectByKey finds the opportunity a load stored under a CRM id.
func objectByKey(t *testing.T, srv *fake.Server, key string) fake.Object {
	t.Helper()
	for _, o := range srv.Objects("opportunity") {
		if v, _ := o.Field(objects.DefaultOpportunityExternalIDField); v == key {
			return o
		}
	}
	t.Fatalf("no opportunity stored with %s = %q", objects.DefaultOpportunityExternalIDField, key)
	return fake.Object{}
}

// TestWorkflowBulkLoadShowsInReportAndObjects: opportunities bulk-loaded
// into the demo integration appear in the object-backed pipeline report
// (whose version changes), in a consistent export of it too; a row of the
// wrong type is reported with its record; one loaded object is then linked
// to another system and audited, and its external ids read back.
func TestWorkflowBulkLoadShowsInReportAndObjects(t *testing.T) {
	e := newWorkflowEnv(t)
	ctx := context.Background()

	v0, before := pipeline(t, e.c)
	if len(before) != 3 {
		t.Fatalf("demo pipeline has %d rows, want the 3 demo opportunities: %q", len(before), before)
	}

	csv := "sales_details.crm_opportunity_id,name,stage,amount\n" +
		"CRM-1,Umbrella rollout,proposal,12000\n" +
		"CRM-2,Hooli migration,qualification,8000.5\n" +
		"CRM-3,Broken amount,proposal,lots\n"
	ack, err := e.c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := e.c.Bulk.WaitExecution(ctx, ack, e.bulkWait())
	if err != nil {
		t.Fatal(err)
	}
	if ex.Status != bulk.StateCompleted || ex.InputCount != 3 || ex.SuccessCount != 2 || ex.ErrorCount != 1 || ex.SkipCount != 0 {
		t.Fatalf("execution %+v, want 3 received, 2 loaded, 1 failed", ex)
	}
	if len(ex.Errors) != 1 || ex.Errors[0].ID != "CRM-3" || !strings.Contains(ex.Errors[0].Message, "amount") ||
		ex.Errors[0].Row["name"] != "Broken amount" {
		t.Errorf("errors %+v, want CRM-3 failing on amount with its row", ex.Errors)
	}

	v1, after := pipeline(t, e.c)
	if v1 == v0 {
		t.Errorf("report version still %d after the load", v1)
	}
	// The report lists objects in the store's order (by id), so compare
	// the rows as sets.
	want := append(slices.Clone(before), "Umbrella rollout/proposal/12000", "Hooli migration/qualification/8000.5")
	if !slices.Equal(sorted(after), sorted(want)) {
		t.Errorf("pipeline after the load:\n%q\nwant (in any order)\n%q", after, want)
	}
	want = after

	// The same rows through a consistent export (prepare, wait, view data).
	var exported []string
	for r, err := range e.c.Reports.Export(ctx, demo.ReportPipeline, reports.ExportOptions{Wait: e.viewWait(), PageSize: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		exported = append(exported, r.Text("Opportunity")+"/"+r.Text("Stage")+"/"+r.Text("Amount"))
	}
	if !slices.Equal(exported, want) {
		t.Errorf("export after the load:\n%q\nwant\n%q", exported, want)
	}

	// Loading the same rows again changes nothing: both are skipped.
	if ack, err = e.c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, strings.NewReader(csv)); err != nil {
		t.Fatal(err)
	}
	ex, err = e.c.Bulk.WaitExecution(ctx, ack, e.bulkWait())
	if err != nil {
		t.Fatal(err)
	}
	if ex.SuccessCount != 0 || ex.SkipCount != 2 || ex.ErrorCount != 1 {
		t.Errorf("repeated load %+v, want 2 skipped and 1 failed", ex)
	}
	if v2, _ := pipeline(t, e.c); v2 != v1 {
		t.Errorf("report version moved from %d to %d on a load that changed nothing", v1, v2)
	}

	// Link a loaded object to an ERP order and audit it.
	obj := objectByKey(t, e.srv, "CRM-1")
	link, err := e.c.Objects.ConnectExternalID(ctx, obj.ID, objects.ConnectExternalIDParams{ExternalID: "ERP-77", FieldName: "erp.order_ref"})
	if err != nil {
		t.Fatal(err)
	}
	if link.ObjectID != obj.ID || link.FieldName != "erp.order_ref" || link.ExternalID != "ERP-77" {
		t.Errorf("link %+v", link)
	}
	res, err := e.c.Objects.Audit(ctx, obj.ID, objects.AuditParams{
		IntegrationID: demo.OpportunityIntegration, ExternalID: "ERP-77",
		StatusCode: objects.StatusLinked, Message: "linked to ERP order 77",
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ObjectID != obj.ID || res.StatusCode != objects.StatusLinked || res.FieldName != objects.FieldIntegrationStatus {
		t.Errorf("audit %+v", res)
	}
	ids, err := e.c.Objects.ExternalIDs(ctx, obj.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := ids.Get(objects.DefaultOpportunityExternalIDField); v != "CRM-1" {
		t.Errorf("default external id %q, want the loaded key CRM-1 (links %+v)", v, ids.Links)
	}
	if v, _ := ids.Get("erp.order_ref"); v != "ERP-77" {
		t.Errorf("erp.order_ref %q, want ERP-77 (links %+v)", v, ids.Links)
	}
	stored, _ := e.srv.Object(obj.ID)
	if v, _ := stored.Field(string(objects.FieldIntegrationStatus)); v != string(objects.StatusLinked) {
		t.Errorf("stored audit field %v", v)
	}
	// The linked object still reads the same in the report.
	if _, rows := pipeline(t, e.c); !slices.Equal(rows, want) {
		t.Errorf("pipeline after link and audit:\n%q\nwant\n%q", rows, want)
	}
}

// TestWorkflowProvisionWhileExporting: users are provisioned from many
// goroutines while a report of 20 pages is exported through a view, 4
// pages at a time, by the same client; every create succeeds and the
// export has every row in order.
func TestWorkflowProvisionWhileExporting(t *testing.T) {
	t.Parallel()
	e := newWorkflowEnv(t)
	ctx := context.Background()
	const users, deals = 20, 10_000
	report := addDeals(e.srv, deals)

	var wg sync.WaitGroup
	var exported atomic.Int64
	var exportErr error
	wg.Go(func() {
		next := int64(100000)
		for r, err := range e.c.Reports.Export(ctx, report, reports.ExportOptions{Wait: e.viewWait(), PageSize: deals / 20, Concurrency: 4}) {
			if err != nil {
				exportErr = err
				return
			}
			if id := r.Text("Deal ID"); id != strconv.FormatInt(next, 10) {
				exportErr = fmt.Errorf("row %d has Deal ID %s, want %d", exported.Load(), id, next)
				return
			}
			next++
			exported.Add(1)
		}
	})
	errs := make([]error, users)
	for i := range users {
		wg.Go(func() {
			u, err := e.c.SCIM.Create(ctx, &scim.User{
				UserName: fmt.Sprintf("hire%02d@example.com", i),
				Emails:   []scim.Email{{Value: fmt.Sprintf("hire%02d@example.com", i), Primary: true}},
			})
			if err == nil {
				_, err = e.c.SCIM.Suspend(ctx, u.ID)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("user %d: %v", i, err)
		}
	}
	if exportErr != nil || exported.Load() != deals {
		t.Fatalf("export: %d rows, %v; want %d rows", exported.Load(), exportErr, deals)
	}
	suspended := 0
	for u, err := range e.c.SCIM.List(ctx, scim.ListParams{Filter: "active eq false", Count: 7}) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(u.UserName, "hire") {
			suspended++
		}
	}
	if suspended != users {
		t.Errorf("%d new users listed as suspended, want %d", suspended, users)
	}
}

// TestWorkflowOneClientManyGoroutinesOneToken: a client used at once from
// many goroutines, across every area, fetches one token, however many
// goroutines need it first.
func TestWorkflowOneClientManyGoroutinesOneToken(t *testing.T) {
	t.Parallel()
	e := newWorkflowEnv(t)
	ctx := context.Background()
	calls := []func(i int) error{
		func(i int) error { _, err := e.c.SCIM.Get(ctx, demo.User1); return err },
		func(i int) error {
			res, err := e.c.Users.CheckAttribute(ctx, users.CheckAttributeParams{Email: demo.UserEmail1, Namespace: 1,
				FilterValue: users.Attribute{Name: "role", Values: []string{"partner_admin", "viewer"}}})
			if err == nil && !slices.Equal(res.Values(), []string{"partner_admin"}) {
				err = fmt.Errorf("attribute check answered %q", res.Values())
			}
			return err
		},
		func(i int) error {
			for _, err := range e.c.Reports.List(ctx, reports.ListParams{PageSize: 2}) {
				if err != nil {
					return err
				}
			}
			return nil
		},
		func(i int) error { _, err := e.c.Objects.ExternalIDs(ctx, demo.Account1); return err },
		func(i int) error {
			_, err := e.c.Objects.Audit(ctx, demo.Opportunity1, objects.AuditParams{StatusCode: objects.StatusScheduled, Message: fmt.Sprint("run ", i)})
			return err
		},
		func(i int) error {
			_, err := e.c.Bulk.UploadURL(ctx, demo.AccountIntegration, "accounts.csv")
			return err
		},
	}
	const goroutines = 60
	errs := make([]error, goroutines)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Go(func() {
			<-start
			errs[i] = calls[i%len(calls)](i)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("goroutine %d: %v", i, err)
		}
	}
	if n := e.srv.TokensIssued(); n != 1 {
		t.Errorf("%d tokens issued for one client, want 1", n)
	}
	if n := e.srv.CountRequests("POST", "/oauth/token"); n != 1 {
		t.Errorf("%d token requests, want 1", n)
	}
	if a := e.srv.Audits(demo.Opportunity1); len(a) != goroutines/len(calls) {
		t.Errorf("%d audits recorded, want %d", len(a), goroutines/len(calls))
	}
}

// TestWorkflowCancelBulkWait: cancelling the context while WaitExecution polls an
// execution that never completes (the fake's clock stands still) returns
// the last status and context.Canceled at once, even with an hour between polls, and leaves
// no goroutine behind.
func TestWorkflowCancelBulkWait(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e := newWorkflowEnv(t)
	ack, err := e.c.Bulk.Load(context.Background(), bulk.LoadParams{IntegrationID: demo.OpportunityIntegration},
		strings.NewReader("sales_details.crm_opportunity_id,name\nCRM-9,Nine\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	polls := 0
	ex, err := e.c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{
		Interval: time.Hour, MaxInterval: time.Hour,
		Progress: func(ex *bulk.Execution) {
			polls++
			if ex.Status != bulk.StateRunning {
				t.Errorf("status %q while the clock stands still", ex.Status)
			}
			cancel() // mid-wait: the next poll is an hour away
		},
	})
	if ex == nil || ex.Status != bulk.StateRunning || !errors.Is(err, context.Canceled) || polls != 1 {
		t.Fatalf("WaitExecution = %+v, %v after %d polls; want the running status and context.Canceled after 1", ex, err, polls)
	}
	e.c.Close(context.Background())
	e.srv.Close()
}

// TestWorkflowCancelExport: cancelling the context in the middle of an
// export, and in the middle of the wait for its view, ends the iteration
// with context.Canceled and leaves no goroutine behind (the export has
// page requests in flight when it is cancelled).
func TestWorkflowCancelExport(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e := newWorkflowEnv(t)
	const deals = 20_000
	report := addDeals(e.srv, deals)

	t.Run("while reading rows", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var n int
		var last error
		for _, err := range e.c.Reports.Export(ctx, report, reports.ExportOptions{Wait: e.viewWait(), PageSize: 1000, Concurrency: 8}) {
			if err != nil {
				last = err
				break
			}
			if n++; n == 2500 {
				cancel()
			}
		}
		if !errors.Is(last, context.Canceled) || n < 2500 || n >= deals {
			t.Errorf("export ended after %d rows with %v, want context.Canceled soon after row 2500", n, last)
		}
	})
	t.Run("while waiting for the view", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var b strings.Builder
		n, err := e.c.Reports.ExportCSV(ctx, report, &b, reports.ExportOptions{Wait: reports.WaitOptions{
			Interval: time.Hour, MaxInterval: time.Hour,
			Progress: func(*reports.ViewStatus) { cancel() }, // the clock stands still: the view stays PENDING
		}})
		if n != 0 || b.Len() != 0 || !errors.Is(err, context.Canceled) {
			t.Errorf("ExportCSV = %d rows, %d bytes, %v; want nothing and context.Canceled", n, b.Len(), err)
		}
	})
	t.Run("CSV while writing", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w := &cancelAfter{w: io.Discard, left: 64 << 10, cancel: cancel}
		n, err := e.c.Reports.ExportCSV(ctx, report, w, reports.ExportOptions{Wait: e.viewWait(), PageSize: 2000})
		if !errors.Is(err, context.Canceled) || n == 0 || n >= deals {
			t.Errorf("ExportCSV = %d rows, %v; want some rows then context.Canceled", n, err)
		}
	})
	e.c.Close(context.Background())
	e.srv.Close()
}

// cancelAfter writes to w and cancels once left bytes have been written.
type cancelAfter struct {
	w      io.Writer
	left   int
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	if c.left -= len(p); c.left <= 0 {
		c.cancel()
	}
	return c.w.Write(p)
}
