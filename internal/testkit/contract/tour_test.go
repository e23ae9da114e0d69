package contract_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/testkit/contract"
	"github.com/partnerapi/partner-go/objects"
	"github.com/partnerapi/partner-go/reports"
	"github.com/partnerapi/partner-go/scim"
	"github.com/partnerapi/partner-go/users"
)

// TestTourOfEveryOperation calls every operation of the contract
// once through the SDK against a fake built without options that add
// members, under the check of a fake with none on: the SDK's requests and the fake's
// default answers must match the contract exactly, and every operation
// of the service must have been exercised (the fake's own operations
// need not: its upload URL is taken with POST here; nor need the
// operations the SDK sends nothing to, x-no-sdk, which
// TestConnectorTour exercises). Every request's
// attempt span is held to the contract too (checkTourSpans), and every
// exchange is checked by the reference checker too (Differential).
func TestTourOfEveryOperation(t *testing.T) {
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	otel.SetTextMapPropagator(propagation.TraceContext{})
	defer otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	spans := tracetest.NewSpanRecorder()
	var mu sync.Mutex
	seen := map[string]bool{}
	sent := map[trace.SpanID]*contract.Exchange{} // by the traceparent's span: the attempt
	check := c.Middleware(contract.Fail(t))
	record := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r)
			probe := r.Clone(context.Background())
			probe.Body = http.NoBody
			if x, _ := c.CheckRequest(probe, nil); x != nil {
				id := attemptSpan(t, r, x.Operation())
				mu.Lock()
				seen[x.Operation()] = true
				sent[id] = x
				mu.Unlock()
			}
		})
	}
	clock := fake.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	srv := fake.NewServer(fake.WithDemoData(), fake.WithClock(clock), fake.WithBulkDelay(0),
		fake.WithMiddleware(record), fake.WithMiddleware(check), fake.WithMiddleware(contract.Differential(t)))
	defer srv.Close()
	cl, err := partner.New(partner.WithConnection(srv.Connection()),
		partner.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	first := func(what string, seq func(yield func(any, error) bool)) {
		t.Helper()
		for _, err := range seq {
			must(what, err)
			break
		}
	}

	// OAuth: the first call gets the token; Close invalidates it.
	// SCIM and users.
	u, err := cl.SCIM.Create(ctx, &scim.User{UserName: "tour@example.com"})
	must("scim create", err)
	if u != nil {
		_, err = cl.SCIM.Get(ctx, u.ID)
		must("scim get", err)
		_, err = cl.SCIM.Suspend(ctx, u.ID)
		must("scim update", err)
	}
	first("scim list", adapt(cl.SCIM.List(ctx, scim.ListParams{Count: 2})))
	_, err = cl.Users.CheckAttribute(ctx, users.CheckAttributeParams{Email: "tour@example.com", FilterValue: users.Attribute{Name: "region", Values: []string{"EU"}}})
	if !partner.IsNotFound(err) {
		must("check attribute", err)
	}

	// Reports.
	first("report list", adapt(cl.Reports.List(ctx, reports.ListParams{})))
	first("report data", adapt(cl.Reports.DataPages(ctx, demo.ReportPartners, reports.DataParams{PageSize: 5})))
	_, err = cl.Reports.ChartData(ctx, demo.ReportPipeline, reports.ChartDataParams{ChartIDs: []int64{1}})
	must("chart data", err)
	_, err = cl.Reports.ChartMetadata(ctx, demo.ReportPipeline, reports.ChartMetadataParams{ChartIDs: []int64{1}})
	must("chart metadata", err)
	_, err = cl.Reports.Metadata(ctx, demo.ReportPartners)
	must("report metadata", err)
	_, err = cl.Reports.DataSchema(ctx, demo.ReportPartners)
	must("data schema", err)
	view, err := cl.Reports.PrepareExport(ctx, demo.ReportPartners)
	must("prepare export", err)
	clock.Advance(time.Hour)
	_, err = cl.Reports.ViewStatus(ctx, view)
	must("view status", err)
	_, err = cl.Reports.ViewMetadata(ctx, view)
	must("view metadata", err)
	first("view data", adapt(cl.Reports.ViewDataPages(ctx, view, reports.ViewDataParams{PageSize: 5})))

	// Objects.
	opp := srv.Objects("opportunity")[0].ID
	_, err = cl.Objects.Audit(ctx, opp, objects.AuditParams{StatusCode: objects.StatusLinked, Message: "tour"})
	must("audit", err)
	_, err = cl.Objects.ConnectExternalID(ctx, opp, objects.ConnectExternalIDParams{ExternalID: "CRM-TOUR"})
	must("connect external id", err)
	_, err = cl.Objects.ExternalIDs(ctx, opp)
	must("external ids", err)

	// Bulk.
	const rows = "sales_details.crm_opportunity_id,name\nT-1,Tour\n"
	ack, err := cl.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, strings.NewReader(rows))
	must("load", err)
	if ack != nil {
		_, err = cl.Bulk.Status(ctx, ack.IntegrationID, ack.ExecutionID, bulk.StatusParams{IncludeErrors: new(true)})
		must("status", err)
	}
	_, err = bulk.LoadRows(ctx, cl.Bulk, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, []map[string]string{{"sales_details.crm_opportunity_id": "T-2", "name": "Rows"}})
	must("load rows", err)
	_, err = cl.Bulk.LoadOpportunities(ctx, bulk.LoadOpportunitiesParams{IntegrationID: demo.OpportunityIntegration}, strings.NewReader(rows))
	must("load opportunities", err)
	_, err = cl.Bulk.LoadAttachment(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, "tour.csv", bytes.NewReader([]byte(rows)))
	must("load attachment", err)
	_, err = cl.Bulk.LoadOpportunitiesAttachment(ctx, bulk.LoadOpportunitiesParams{IntegrationID: demo.OpportunityIntegration}, "tour.csv", bytes.NewReader([]byte(rows)))
	must("load opportunities attachment", err)
	file := filepath.Join(t.TempDir(), "tour.csv")
	if err := os.WriteFile(file, []byte(rows), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = cl.Bulk.LoadFile(ctx, bulk.LoadFileParams{IntegrationID: demo.OpportunityIntegration}, file) // upload_url, the upload, bulkload
	must("load file", err)

	// Events.
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer hook.Close()
	id, err := cl.Events.Subscribe(ctx, events.SubscribeParams{Name: "tour", Events: []events.Kind{events.KindObjectUpdate}, CallbackURL: hook.URL})
	must("subscribe", err)
	first("subscribers", adapt(cl.Events.Subscribers(ctx)))
	_, err = cl.Events.Subscriber(ctx, id)
	must("subscriber", err)
	must("unsubscribe", cl.Events.Unsubscribe(ctx, id))
	first("integrations", adapt(cl.Events.Integrations(ctx)))
	first("kinds", adapt(cl.Events.Kinds(ctx)))
	_, err = cl.Events.Schema(ctx, events.KindObjectUpdate)
	must("event schema", err)
	callByName(t, cl, "GetObjectEventSchema", ctx, demo.OpportunityIntegration)

	must("close", cl.Close(ctx))

	checkTourSpans(t, spans.Ended(), sent)
	checkTourOps(t, spans.Ended())
	for _, op := range operations(t) {
		if !seen[op.id] && op.sentBySDK() && !skip(t, op.id, "not exercised") && !skip(t, op.method+" "+op.path, "not exercised") {
			t.Errorf("the tour did not exercise %s (%s %s)", op.id, op.method, op.path)
		}
	}
}

// sentBySDK reports whether op is an operation of the service that the
// SDK sends requests to: not the fake's own, not x-no-sdk.
func (op operation) sentBySDK() bool { return !op.fakeOnly && op.noSDK == "" }

// checkTourOps: every SDK operation (every Op of a core.Request in the
// SDK's source) was sent by the tour, whose spans name it partner.<Op>.
func checkTourOps(t *testing.T, ended []sdktrace.ReadOnlySpan) {
	t.Helper()
	named := map[string]bool{}
	for _, s := range ended {
		named[s.Name()] = true
	}
	for _, s := range sdkOperations(t) {
		if !named["partner."+s.op] {
			t.Errorf("the tour did not exercise SDK operation %s (%s %s, %s)", s.op, s.method, s.template, s.pos)
		}
	}
}

// attemptSpan is the span the traceparent of r (a request of operation
// op) names: the attempt's. It fails t when r carries none.
func attemptSpan(t *testing.T, r *http.Request, op string) trace.SpanID {
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(r.Header)))
	if !sc.IsValid() {
		t.Errorf("%s %s (%s) carried no traceparent", r.Method, r.URL.Path, op)
	}
	return sc.SpanID()
}

// checkTourSpans holds the attempt span of every request the tour sent
// (sent, by the span its traceparent named) to the contract: its
// url.template is the operation's path as api/openapi.yaml writes it, its
// name is the method and that template, and its parent, the operation's
// span, is named partner.<Op> after one of the operation names the
// contract lists for it (x-sdk-ops). A request to a URL the service handed out
// (the fake's upload URL) has no url.template.
func checkTourSpans(t *testing.T, ended []sdktrace.ReadOnlySpan, sent map[trace.SpanID]*contract.Exchange) {
	t.Helper()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range ended {
		byID[s.SpanContext().SpanID()] = s
	}
	for id, x := range sent {
		att, ok := byID[id]
		if !ok {
			t.Errorf("%s: the traceparent names no attempt span", x.Operation())
			continue
		}
		var tmpl string
		for _, kv := range att.Attributes() {
			if kv.Key == "url.template" {
				tmpl = kv.Value.AsString()
			}
		}
		absolute := strings.HasPrefix(x.Template(), "/upload/")
		if tmpl != x.Template() && (!absolute || tmpl != "") {
			t.Errorf("%s: url.template %q, want the contract's %q", x.Operation(), tmpl, x.Template())
		}
		if want := strings.TrimSuffix(x.Method()+" "+tmpl, " "); att.Name() != want {
			t.Errorf("%s: attempt span %q, want %q", x.Operation(), att.Name(), want)
		}
		op, ok := byID[att.Parent().SpanID()]
		var names []string
		for _, o := range x.SDKOps() {
			names = append(names, "partner."+o)
		}
		if !ok || !slices.Contains(names, op.Name()) {
			got := "none"
			if ok {
				got = op.Name()
			}
			t.Errorf("%s: the attempt's operation span is %s, want one of %q", x.Operation(), got, names)
		}
	}
	if len(sent) < 30 {
		t.Errorf("only %d requests traced", len(sent))
	}
}

// adapt turns an SDK iterator into one of any.
func adapt[T any](seq func(yield func(T, error) bool)) func(yield func(any, error) bool) {
	return func(yield func(any, error) bool) {
		for v, err := range seq {
			if !yield(v, err) {
				return
			}
		}
	}
}

// callByName calls the SDK method of operation opID (x-sdk-method) with
// args, for a method whose name a correction under way changes.
func callByName(t *testing.T, cl *partner.Client, opID string, args ...any) {
	t.Helper()
	c, err := contract.LoadReference()
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range c.Doc().Paths.Map() {
		for _, op := range item.Operations() {
			if op.OperationID != opID {
				continue
			}
			field, name, _ := strings.Cut(op.Extensions["x-sdk-method"].(string), ".")
			m := reflect.ValueOf(cl).Elem().FieldByName(field).MethodByName(name)
			if !m.IsValid() {
				if !skip(t, opID, "no SDK method "+field+"."+name) {
					t.Errorf("%s: no SDK method %s.%s", opID, field, name)
				}
				return
			}
			in := make([]reflect.Value, len(args))
			for i, a := range args {
				in[i] = reflect.ValueOf(a)
			}
			out := m.Call(in)
			if err, _ := out[len(out)-1].Interface().(error); err != nil {
				t.Errorf("%s: %v", opID, err)
			}
			return
		}
	}
	t.Fatalf("no operation %s", opID)
}
