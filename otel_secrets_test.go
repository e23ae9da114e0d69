package partner_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/reports"
	"github.com/partnerapi/partner-go/scim"
	"github.com/partnerapi/partner-go/users"
)

// debugLogger logs at debug level into b.
func debugLogger(b *syncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// setGlobalProviders sets the global tracer and meter providers until
// the test ends, then no-op ones: the global providers delegate for good
// to the first ones set, so the previous ones cannot be put back.
func setGlobalProviders(t *testing.T, tp trace.TracerProvider, mp metric.MeterProvider) {
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	t.Cleanup(func() {
		otel.SetTracerProvider(tracenoop.NewTracerProvider())
		otel.SetMeterProvider(metricnoop.NewMeterProvider())
	})
}

// setGlobalPropagator sets the global propagator until the test ends.
func setGlobalPropagator(t *testing.T, p propagation.TextMapPropagator) {
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(p)
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })
}

// headerLog records the traceparent header of every request by host.
type headerLog struct {
	mu   sync.Mutex
	rt   http.RoundTripper
	seen map[string][]string
}

func (h *headerLog) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.seen[r.URL.Host+" "+r.URL.Path] = append(h.seen[r.URL.Host+" "+r.URL.Path], r.Header.Get("traceparent"))
	h.mu.Unlock()
	return h.rt.RoundTrip(r)
}

// TestTelemetryQuickstartHoldsNoSecret runs a quickstart (a token, SCIM,
// the attribute check, an export, a bulk load through a signed upload
// URL and its wait, a subscription whose callback URL holds a subscriber
// secret (events.NewSecret), a webhook delivery to it) behind a gateway
// subscription key, and searches every span (names, attributes, events,
// status) and every metric's attributes for the client secret, the
// tokens, the subscription key, the subscriber secret and the upload
// URL's secret query and token. It also checks that the W3C trace context goes to the service
// and not to the upload URL on another host.
func TestTelemetryQuickstartHoldsNoSecret(t *testing.T) {
	setGlobalPropagator(t, propagation.TraceContext{})
	te := newTelemetry(t)
	const subKey = "sub-key-5ecret-4242"
	clock := fake.NewManualClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	hl := &headerLog{rt: http.DefaultTransport, seen: map[string][]string{}}
	c, srv := mocktest.FakeClient(t, []fake.Option{fake.WithDemoData(), fake.WithClock(clock), fake.WithDeployment(fake.Deployment{SubscriptionKey: subKey})},
		append(te.opts(), partner.WithSubscriptionKey(subKey), partner.WithHTTPClient(&http.Client{Transport: hl}))...)
	// Signed upload URLs name another host than the client's base URL.
	u, _ := url.Parse(srv.URL)
	srv.SetURL("http://localhost:" + u.Port())
	ctx := context.Background()
	secrets := []string{fake.DefaultClientSecret, subKey}

	tok, err := c.OAuth.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	secrets = append(secrets, tok.AccessToken)
	if tok.RefreshToken != "" {
		secrets = append(secrets, tok.RefreshToken)
	}
	user, err := c.SCIM.Create(ctx, &scim.User{UserName: "quick@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SCIM.Get(ctx, user.ID); err != nil {
		t.Fatal(err)
	}
	srv.SetUserAttributes("quick@example.com", 1, "role", "admin")
	if _, err := c.Users.CheckAttribute(ctx, users.CheckAttributeParams{Email: "quick@example.com", Namespace: 1,
		FilterValue: users.Attribute{Name: "role", Values: []string{"admin"}}}); err != nil {
		t.Fatal(err)
	}
	for _, err := range c.Reports.Export(ctx, demo.ReportPipeline, reports.ExportOptions{Wait: reports.WaitOptions{
		Interval: time.Millisecond,
		Progress: func(*reports.ViewStatus) { clock.Advance(fake.ViewPendingFor + fake.ViewRunningFor) },
	}}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	ticket, err := c.Bulk.UploadURL(ctx, demo.OpportunityIntegration, "opps.csv")
	if err != nil {
		t.Fatal(err)
	}
	secrets = append(secrets, ticket.UploadToken)
	// A signed URL's signature travels in its query.
	ticket.UploadURL += "?X-Signature=sig-5ecret-9f8e"
	secrets = append(secrets, "sig-5ecret-9f8e")
	csv := "sales_details.crm_opportunity_id,name,stage,amount\nCRM-9,Q,proposal,5\n"
	if err := c.Bulk.Upload(ctx, ticket, bulk.UploadParams{}, strings.NewReader(csv)); err != nil {
		t.Fatal(err)
	}
	ack, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration, FileToken: ticket.UploadToken}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{Interval: time.Millisecond, Progress: func(e *bulk.Execution) {
		if !e.Done() {
			clock.Advance(fake.DefaultBulkDelay)
		}
	}}); err != nil {
		t.Fatal(err)
	}
	// A subscription whose callback URL ends in a subscriber secret, and
	// a delivery to that URL.
	secret := events.NewSecret()
	secrets = append(secrets, string(secret))
	h := &events.Handler{TracerProvider: te.tp, Secrets: events.NewSecretSet(secret),
		Deliver: func(context.Context, *events.Delivery) error { return nil }}
	hook := httptest.NewServer(h)
	defer hook.Close()
	sub, err := c.Events.Subscribe(ctx, events.SubscribeParams{Name: "quick", Events: []events.Kind{events.KindObjectUpdate},
		CallbackURL: hook.URL + "/hook?tenant=t-1", Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Events.Subscriber(ctx, sub); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(hook.URL+"/hook/"+string(secret)+"?tenant=t-1", "application/json",
		strings.NewReader(`{"event":"object.update","delivery_id":"d-1","object_id":"o-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delivery answered %d, want 204", resp.StatusCode)
	}
	if err := c.Events.Unsubscribe(ctx, sub); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// Every part of the SDK showed up.
	for _, name := range []string{"partner.oauth.Token", "partner.oauth.Request", "partner.scim.Create", "partner.scim.Get",
		"partner.reports.Export", "partner.bulk.Upload", "partner.bulk.Load", "partner.bulk.WaitExecution",
		"partner.events.Subscribe", "partner.events.Subscriber", "partner.events.Unsubscribe",
		"partner.events.Handler", "partner.oauth.Revoke"} {
		if len(te.spans(name)) == 0 {
			t.Errorf("no span %q; spans: %q", name, te.names())
		}
	}
	d := te.one(t, "partner.events.Handler")
	if d.SpanKind() != trace.SpanKindServer {
		t.Errorf("delivery span kind %v, want server", d.SpanKind())
	}
	wantAttrs(t, d, "partner.event.kind", "object.update", "http.response.status_code", "204")

	var dump strings.Builder
	for _, s := range te.sr.Ended() {
		if !strings.HasPrefix(s.Name(), "partner.") && !strings.Contains(s.Name(), " ") && s.Name() != "PUT" && s.Name() != "POST" {
			t.Errorf("span %q is neither an operation nor an HTTP attempt", s.Name())
		}
		if s.Name() == "partner.request" {
			t.Errorf("a request without an operation name: %v", s.Attributes())
		}
		dump.WriteString(s.Name() + " " + s.Status().Description + "\n")
		for _, kv := range s.Attributes() {
			dump.WriteString(string(kv.Key) + "=" + kv.Value.String() + "\n")
		}
		for _, e := range s.Events() {
			dump.WriteString(e.Name + "\n")
			for _, kv := range e.Attributes {
				dump.WriteString(string(kv.Key) + "=" + kv.Value.String() + "\n")
			}
		}
	}
	for _, m := range te.metrics(t) {
		dump.WriteString(m.Name + "\n")
		for _, set := range metricSets(m) {
			for _, kv := range set.ToSlice() {
				dump.WriteString(string(kv.Key) + "=" + kv.Value.String() + "\n")
			}
		}
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(dump.String(), s) {
			t.Errorf("telemetry holds the secret %q", s)
		}
	}

	// The trace context went to the service, not to the upload host.
	for key, tps := range hl.seen {
		toUpload := strings.HasPrefix(key, "localhost:")
		for _, tp := range tps {
			if toUpload && tp != "" {
				t.Errorf("request to the upload URL %s carried traceparent %q", key, tp)
			}
			if !toUpload && tp == "" {
				t.Errorf("request to the service %s carried no traceparent", key)
			}
		}
	}
	if len(hl.seen) < 5 {
		t.Errorf("requests seen: %v", hl.seen)
	}
}

// metricSets returns the attribute sets of m's points.
func metricSets(m metricdata.Metrics) []attribute.Set {
	var out []attribute.Set
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	}
	return out
}

// TestTelemetryTraceContextMatchesAttempt: the traceparent a request to
// the service carries names the attempt's span.
func TestTelemetryTraceContextMatchesAttempt(t *testing.T) {
	setGlobalPropagator(t, propagation.TraceContext{})
	te := newTelemetry(t)
	hl := &headerLog{rt: http.DefaultTransport, seen: map[string][]string{}}
	c, srv := mocktest.FakeClient(t, nil, append(te.opts(), partner.WithHTTPClient(&http.Client{Transport: hl}))...)
	id, err := srv.AddUser(fake.User{UserName: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SCIM.Get(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	att := te.attempts(te.one(t, "partner.scim.Get"))
	u, _ := url.Parse(srv.URL)
	got := hl.seen[u.Host+" /api/scim/v2/Users/"+id]
	want := "00-" + att[0].SpanContext().TraceID().String() + "-" + att[0].SpanContext().SpanID().String() + "-01"
	if len(got) != 1 || got[0] != want {
		t.Errorf("traceparent %q, want %q (the attempt's span)", got, want)
	}
}
