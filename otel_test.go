package partner_test

// OpenTelemetry: the spans, events and metrics of a client, recorded
// with the SDK's in-memory span recorder and a manual metric reader,
// against the fake.

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/reports"
	"github.com/partnerapi/partner-go/scim"
)

// telemetry records the spans and metrics of the clients built with its
// options.
type telemetry struct {
	sr     *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
}

func newTelemetry(t *testing.T) *telemetry {
	sr := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader()
	return &telemetry{sr: sr, reader: reader, tp: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))}
}

// opts are the client options that send to the recorders.
func (te *telemetry) opts() []partner.Option {
	return []partner.Option{
		partner.WithTracerProvider(te.tp),
		partner.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(te.reader))),
	}
}

// spans returns the ended spans named name.
func (te *telemetry) spans(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range te.sr.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// one returns the only ended span named name.
func (te *telemetry) one(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	got := te.spans(name)
	if len(got) != 1 {
		t.Fatalf("%d spans named %q, want 1; spans: %v", len(got), name, te.names())
	}
	return got[0]
}

func (te *telemetry) names() []string {
	var out []string
	for _, s := range te.sr.Ended() {
		out = append(out, s.Name())
	}
	return out
}

// children returns the ended spans whose parent is p, in start order.
func (te *telemetry) children(p sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range te.sr.Ended() {
		if s.Parent().SpanID() == p.SpanContext().SpanID() {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	return out
}

// attempts returns the HTTP attempt spans under p, in start order.
func (te *telemetry) attempts(p sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range te.children(p) {
		if !strings.HasPrefix(s.Name(), "partner.") {
			out = append(out, s)
		}
	}
	return out
}

// metrics collects the metrics recorded so far, by name.
func (te *telemetry) metrics(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := te.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// sum adds the points of a counter whose attributes hold every one of
// want.
func sum(t *testing.T, m metricdata.Metrics, want ...attribute.KeyValue) int64 {
	t.Helper()
	s, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s is %T, want an int64 sum", m.Name, m.Data)
	}
	var n int64
	for _, p := range s.DataPoints {
		if hasAll(p.Attributes, want) {
			n += p.Value
		}
	}
	return n
}

func hasAll(set attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// attr returns the value of the attribute key of s ("" when absent), as text.
func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

// wantAttrs checks attributes of s given as key, value pairs.
func wantAttrs(t *testing.T, s sdktrace.ReadOnlySpan, kv ...string) {
	t.Helper()
	for i := 0; i < len(kv); i += 2 {
		if got := attr(s, kv[i]); got != kv[i+1] {
			t.Errorf("span %q: %s = %q, want %q", s.Name(), kv[i], got, kv[i+1])
		}
	}
}

// fakeWithUser starts a fake with one user and a client of it.
func fakeWithUser(t *testing.T, te *telemetry, opts ...partner.Option) (*partner.Client, *fake.Server, string) {
	t.Helper()
	c, srv := mocktest.FakeClient(t, nil, append(append(te.opts(), partner.WithRetryWait(time.Millisecond, time.Millisecond)), opts...)...)
	id, err := srv.AddUser(fake.User{UserName: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return c, srv, id
}

// TestTelemetryRead: a read is one internal span named after the operation
// with one client span per attempt carrying the HTTP client attributes, and its
// duration is recorded by operation and status.
func TestTelemetryRead(t *testing.T) {
	te := newTelemetry(t)
	c, srv, id := fakeWithUser(t, te)
	if _, err := c.SCIM.Get(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	op := te.one(t, "partner.scim.Get")
	if op.SpanKind() != trace.SpanKindInternal || op.Status().Code == codes.Error {
		t.Errorf("operation span kind %v status %v, want internal and no error", op.SpanKind(), op.Status())
	}
	wantAttrs(t, op, "partner.operation", "scim.Get")
	att := te.attempts(op)
	if len(att) != 1 {
		t.Fatalf("%d attempt spans, want 1", len(att))
	}
	host, _, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	wantAttrs(t, att[0], "http.request.method", "GET", "url.template", "/api/scim/v2/Users/{user_id}",
		"server.address", host, "server.port", strings.Split(srv.URL, ":")[2], "http.response.status_code", "200", "http.request.resend_count", "", "error.type", "")
	if att[0].Name() != "GET /api/scim/v2/Users/{user_id}" || att[0].SpanKind() != trace.SpanKindClient {
		t.Errorf("attempt span %q kind %v, want \"GET /api/scim/v2/Users/{user_id}\", client", att[0].Name(), att[0].SpanKind())
	}
	// The token was fetched in its own span, before the call.
	tok := te.one(t, "partner.oauth.Token")
	wantAttrs(t, tok, "partner.token.kind", "client_credentials")

	m := te.metrics(t)
	h, ok := m["http.client.request.duration"].Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("http.client.request.duration: %T, want a float64 histogram", m["http.client.request.duration"].Data)
	}
	var n uint64
	for _, p := range h.DataPoints {
		if hasAll(p.Attributes, []attribute.KeyValue{attribute.String("partner.operation", "scim.Get"),
			attribute.Int("http.response.status_code", 200), attribute.String("url.template", "/api/scim/v2/Users/{user_id}")}) {
			n += p.Count
		}
	}
	if n != 1 {
		t.Errorf("duration points of scim.Get 200: count %d, want 1", n)
	}
	if got := sum(t, m["partner.client.token.fetches"]); got != 1 {
		t.Errorf("token fetches %d, want 1", got)
	}
	if g, ok := m["partner.client.retry_budget.remaining"].Data.(metricdata.Gauge[int64]); !ok || len(g.DataPoints) != 1 || g.DataPoints[0].Value != 500 {
		t.Errorf("retry budget gauge %v, want the full default budget, 500", m["partner.client.retry_budget.remaining"])
	}
}

// TestTelemetryRetriedRead: a read answered 503 once shows two attempts,
// the second with its resend count and wait, a retry event on the
// operation, and the retries counter.
func TestTelemetryRetriedRead(t *testing.T) {
	te := newTelemetry(t)
	c, srv, id := fakeWithUser(t, te)
	srv.InjectFault(fake.Fault{Method: "GET", Path: "/api/scim/v2/Users/*", Status: 503, Times: 1})
	if _, err := c.SCIM.Get(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	op := te.one(t, "partner.scim.Get")
	att := te.attempts(op)
	if len(att) != 2 {
		t.Fatalf("%d attempt spans, want 2", len(att))
	}
	wantAttrs(t, att[0], "http.response.status_code", "503", "error.type", "503", "http.request.resend_count", "")
	if att[0].Status().Code != codes.Error {
		t.Errorf("first attempt status %v, want error", att[0].Status())
	}
	wantAttrs(t, att[1], "http.response.status_code", "200", "http.request.resend_count", "1", "error.type", "")
	if attr(att[1], "partner.retry.wait") == "" {
		t.Errorf("second attempt has no partner.retry.wait: %v", att[1].Attributes())
	}
	var retries int
	for _, e := range op.Events() {
		if e.Name == "partner.retry" {
			retries++
		}
	}
	if retries != 1 || op.Status().Code == codes.Error {
		t.Errorf("operation: %d retry events, status %v; want 1 and no error", retries, op.Status())
	}
	if got := sum(t, te.metrics(t)["partner.client.retries"], attribute.String("partner.operation", "scim.Get")); got != 1 {
		t.Errorf("retries of scim.Get %d, want 1", got)
	}
}

// TestTelemetryOutcomeUnknownWrite: a create whose answer is lost after
// the service processed it ends its span in error, saying the service
// may have processed it.
func TestTelemetryOutcomeUnknownWrite(t *testing.T) {
	te := newTelemetry(t)
	c, srv, _ := fakeWithUser(t, te)
	srv.InjectFault(fake.Fault{Method: "POST", Path: "/api/scim/v2/Users", DropAfter: true, Times: 1})
	_, err := c.SCIM.Create(context.Background(), &scim.User{UserName: "grace@example.com"})
	if !partner.IsOutcomeUnknown(err) {
		t.Fatalf("err %v, want outcome unknown", err)
	}
	op := te.one(t, "partner.scim.Create")
	if op.Status().Code != codes.Error || !strings.Contains(op.Status().Description, "may have processed") {
		t.Errorf("status %v, want an error saying the service may have processed the call", op.Status())
	}
	wantAttrs(t, op, "partner.outcome_unknown", "true")
	if att := te.attempts(op); len(att) != 1 || attr(att[0], "error.type") == "" {
		t.Errorf("attempts %d, want 1 with an error.type", len(att))
	}
}

// TestTelemetryTokenRefresh: a 401 (the fake dropped its tokens) shows a
// token fetch span inside the call, between the refused attempt and its
// repeat, and the token metrics count both fetches.
func TestTelemetryTokenRefresh(t *testing.T) {
	te := newTelemetry(t)
	c, srv, id := fakeWithUser(t, te)
	ctx := context.Background()
	if _, err := c.SCIM.Get(ctx, id); err != nil {
		t.Fatal(err)
	}
	srv.ExpireTokens()
	te.sr.Reset()
	if _, err := c.SCIM.Get(ctx, id); err != nil {
		t.Fatal(err)
	}
	op := te.one(t, "partner.scim.Get")
	kids := te.children(op)
	var names []string
	for _, k := range kids {
		names = append(names, k.Name()+" "+attr(k, "http.response.status_code"))
	}
	want := []string{"GET /api/scim/v2/Users/{user_id} 401", "partner.oauth.Token ", "GET /api/scim/v2/Users/{user_id} 200"}
	if !slices.Equal(names, want) {
		t.Fatalf("children of the call %q, want %q", names, want)
	}
	wantAttrs(t, kids[2], "http.request.resend_count", "1")
	if got := te.children(kids[1]); len(got) != 1 || got[0].Name() != "partner.oauth.Request" {
		t.Errorf("token span's children %v, want the token request", got)
	}
	m := te.metrics(t)
	if got, fails := sum(t, m["partner.client.token.fetches"]), m["partner.client.token.failures"]; got != 2 || fails.Data != nil && sum(t, fails) != 0 {
		t.Errorf("token fetches %d (failures %v), want 2 and none failed", got, fails)
	}
}

// TestTelemetryTokenFailure: a token fetch the service refuses ends its
// span in error with the refusal's status as error.type, is counted in the
// token failures by kind, and fails the call that needed it.
func TestTelemetryTokenFailure(t *testing.T) {
	te := newTelemetry(t)
	c, _ := mocktest.FakeClient(t, nil, append(te.opts(), partner.WithClientCredentials(fake.DefaultClientID, "not-the-secret"))...)
	if _, err := c.SCIM.Get(context.Background(), "u-1"); err == nil {
		t.Fatal("a call with a refused token succeeded")
	}
	tok := te.one(t, "partner.oauth.Token")
	if tok.Status().Code != codes.Error {
		t.Errorf("token span status %v, want error", tok.Status())
	}
	wantAttrs(t, tok, "partner.token.kind", "client_credentials")
	status := attr(tok, "error.type")
	if status != "400" && status != "401" {
		t.Errorf("token span error.type %q, want the refusal's status", status)
	}
	m := te.metrics(t)
	kind := attribute.String("partner.token.kind", "client_credentials")
	if f, n := sum(t, m["partner.client.token.failures"], kind, attribute.String("error.type", status)), sum(t, m["partner.client.token.fetches"], kind); f != 1 || n != 1 {
		t.Errorf("token failures %d of %d fetches, want 1 of 1", f, n)
	}
}

// TestTelemetryExport: an export's span and the span that reads its view
// carry the report and view, the pages, the rows, the cap on page
// requests in flight and the most that were in flight at once (the peak
// window: page 0 and page 1 go out before the first answer), and the rows
// are counted once.
func TestTelemetryExport(t *testing.T) {
	te := newTelemetry(t)
	clock := fake.NewManualClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	c, srv := mocktest.FakeClient(t, []fake.Option{fake.WithClock(clock)}, te.opts()...)
	rows := make([][]any, 25)
	for i := range rows {
		rows[i] = []any{"row"}
	}
	id := srv.AddReport(fake.Report{Name: "r", Columns: []fake.Column{{ID: "n", Name: "n"}}, Rows: rows})
	opts := reports.ExportOptions{PageSize: 10, Wait: reports.WaitOptions{Interval: time.Millisecond,
		Progress: func(st *reports.ViewStatus) { clock.Advance(fake.ViewPendingFor + fake.ViewRunningFor) }}}
	n := 0
	for _, err := range c.Reports.Export(context.Background(), id, opts) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 25 {
		t.Fatalf("%d rows, want 25", n)
	}
	views := srv.ReportViews(id)
	if len(views) != 1 {
		t.Fatalf("views %v, want 1", views)
	}
	view := itoa(views[0])
	exp := te.one(t, "partner.reports.Export")
	ev := te.one(t, "partner.reports.ExportView")
	for _, s := range []sdktrace.ReadOnlySpan{exp, ev} {
		wantAttrs(t, s, "partner.report.view_id", view, "partner.export.pages", "3", "partner.export.rows", "25",
			"partner.export.concurrency", "16", "partner.export.throttled", "0")
		if w, err := strconv.Atoi(attr(s, "partner.export.peak_window")); err != nil || w < 2 || w > 16 {
			t.Errorf("span %q: peak window %q, want 2 to 16", s.Name(), attr(s, "partner.export.peak_window"))
		}
	}
	wantAttrs(t, exp, "partner.report.id", itoa(id))
	wait := te.one(t, "partner.reports.WaitView")
	wantAttrs(t, wait, "partner.report.view_id", view, "partner.report.view_state", "SUCCESS")
	var states []string
	for _, e := range wait.Events() {
		for _, kv := range e.Attributes {
			if e.Name == "partner.report.view_state" && kv.Key == "partner.report.view_state" {
				states = append(states, kv.Value.AsString())
			}
		}
	}
	if len(states) == 0 || states[len(states)-1] != "SUCCESS" || wait.Parent().SpanID() != exp.SpanContext().SpanID() {
		t.Errorf("view wait: state events %q, parent %v; want them to end with SUCCESS, under the export", states, wait.Parent().SpanID())
	}
	if ev.Parent().SpanID() != exp.SpanContext().SpanID() {
		t.Error("the view's export is not a child of the export")
	}
	pages := 0
	for _, s := range te.children(ev) {
		if s.Name() == "partner.reports.ViewDataPages" {
			pages++
		}
	}
	if pages < 3 {
		t.Errorf("%d page request spans under the view's export, want at least 3", pages)
	}
	if got := sum(t, te.metrics(t)["partner.reports.rows_exported"]); got != 25 {
		t.Errorf("rows exported %d, want 25", got)
	}
}

// TestTelemetryCompositeOperations: an SDK method made of several
// requests has its own span, parent of theirs.
func TestTelemetryCompositeOperations(t *testing.T) {
	te := newTelemetry(t)
	c, srv := mocktest.FakeClient(t, []fake.Option{fake.WithDemoData()}, te.opts()...)
	id, err := srv.AddUser(fake.User{UserName: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.SCIM.Suspend(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SCIM.FindByUserName(ctx, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "opps.csv")
	if err := os.WriteFile(file, []byte("sales_details.crm_opportunity_id,name\nCRM-1,A\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Bulk.LoadFile(ctx, bulk.LoadFileParams{IntegrationID: demo.OpportunityIntegration}, file); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{
		"partner.scim.Suspend":        {"partner.scim.Get", "partner.scim.Update"},
		"partner.scim.FindByUserName": {"partner.scim.List"},
		"partner.bulk.LoadFile":       {"partner.bulk.UploadURL", "partner.bulk.Upload", "partner.bulk.Load"},
	} {
		op := te.one(t, name)
		var got []string
		for _, k := range te.children(op) {
			got = append(got, k.Name())
		}
		if !slices.Equal(got, want) || op.SpanKind() != trace.SpanKindInternal {
			t.Errorf("%s (kind %v): children %q, want %q", name, op.SpanKind(), got, want)
		}
	}
	wantAttrs(t, te.one(t, "partner.bulk.LoadFile"), "partner.bulk.integration_id", demo.OpportunityIntegration)
}

// TestTelemetryBulkWait: a wait's span carries the execution and an
// event per state; the records loaded are counted.
func TestTelemetryBulkWait(t *testing.T) {
	te := newTelemetry(t)
	clock := fake.NewManualClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	c, _ := mocktest.FakeClient(t, []fake.Option{fake.WithDemoData(), fake.WithClock(clock)}, te.opts()...)
	ctx := context.Background()
	csv := "sales_details.crm_opportunity_id,name,stage,amount\nCRM-1,A,proposal,1\nCRM-2,B,proposal,2\n"
	ack, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{Interval: time.Millisecond, Progress: func(e *bulk.Execution) {
		if !e.Done() {
			clock.Advance(fake.DefaultBulkDelay)
		}
	}})
	if err != nil || ex.SuccessCount != 2 {
		t.Fatalf("wait: %+v, %v; want 2 records loaded", ex, err)
	}
	w := te.one(t, "partner.bulk.WaitExecution")
	wantAttrs(t, w, "partner.bulk.execution_id", ack.ExecutionID, "partner.bulk.integration_id", ack.IntegrationID,
		"partner.bulk.state", "completed")
	var states []string
	for _, e := range w.Events() {
		if e.Name == "partner.bulk.state" {
			for _, kv := range e.Attributes {
				if kv.Key == "partner.bulk.state" {
					states = append(states, kv.Value.AsString())
				}
			}
		}
	}
	if len(states) == 0 || states[len(states)-1] != "completed" {
		t.Errorf("state events %q, want them to end with completed", states)
	}
	if got := len(te.children(w)); got < len(states) {
		t.Errorf("%d status reads under the wait, want at least %d", got, len(states))
	}
	if got := sum(t, te.metrics(t)["partner.bulk.records_loaded"]); got != 2 {
		t.Errorf("records loaded %d, want 2", got)
	}
}

// TestTelemetryLogsCarryTraceIDs: a record the SDK logs during a call
// carries the call's trace and span ids.
func TestTelemetryLogsCarryTraceIDs(t *testing.T) {
	te := newTelemetry(t)
	var logs syncBuffer
	c, srv, id := fakeWithUser(t, te, partner.WithLogger(debugLogger(&logs)))
	srv.InjectFault(fake.Fault{Method: "GET", Path: "/api/scim/v2/Users/*", Status: 503, Times: 1})
	if _, err := c.SCIM.Get(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	op := te.one(t, "partner.scim.Get")
	var retry string
	for l := range strings.SplitSeq(logs.String(), "\n") {
		if strings.Contains(l, "retrying request") {
			retry = l
		}
	}
	if retry == "" {
		t.Fatalf("no retry logged:\n%s", logs.String())
	}
	if !strings.Contains(retry, "trace_id="+op.SpanContext().TraceID().String()) ||
		!strings.Contains(retry, "span_id="+op.SpanContext().SpanID().String()) {
		t.Errorf("retry record %q lacks the call's trace_id and span_id %s/%s", retry, op.SpanContext().TraceID(), op.SpanContext().SpanID())
	}
}

// TestTelemetryDefaultProvidersAreGlobal: without the options a client
// sends its spans and metrics to the global providers, as they are when
// it is built.
func TestTelemetryDefaultProvidersAreGlobal(t *testing.T) {
	te := newTelemetry(t)
	setGlobalProviders(t, te.tp, sdkmetric.NewMeterProvider(sdkmetric.WithReader(te.reader)))
	c, srv := mocktest.FakeClient(t, nil)
	id, err := srv.AddUser(fake.User{UserName: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SCIM.Get(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	te.one(t, "partner.scim.Get")
	if _, ok := te.metrics(t)["http.client.request.duration"]; !ok {
		t.Error("no http.client.request.duration in the global meter provider")
	}
}

func itoa(n int64) string { return attribute.Int64Value(n).String() }
