package events_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/jarcoal/httpmock"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)

// TestHandlerSpan: a delivery is a server span with its event kind and
// answer, a child of the trace context the request carries, and Deliver
// runs inside it.
func TestHandlerSpan(t *testing.T) {
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	defer otel.SetTextMapPropagator(prev)
	sr := tracetest.NewSpanRecorder()
	var inside trace.SpanContext
	h := &events.Handler{
		Insecure:       true,
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr)),
		Deliver: func(ctx context.Context, d *events.Delivery) error {
			inside = trace.SpanContextFromContext(ctx)
			return &events.StatusError{Status: http.StatusServiceUnavailable}
		},
	}
	req := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(`{"event":"object.create","object_id":"o-1"}`))
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	req.Header.Set("traceparent", parent)
	h.ServeHTTP(httptest.NewRecorder(), req)

	spans := sr.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	got := map[string]string{}
	for _, kv := range s.Attributes() {
		got[string(kv.Key)] = kv.Value.String()
	}
	if s.Name() != "partner.events.Handler" || s.SpanKind() != trace.SpanKindServer ||
		got["partner.event.kind"] != "object.create" || got["http.response.status_code"] != "503" || got["http.request.method"] != "POST" {
		t.Errorf("span %q kind %v attributes %v, want partner.events.Handler, server, object.create, 503", s.Name(), s.SpanKind(), got)
	}
	if s.Parent().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || s.Parent().SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("parent %v, want the request's traceparent", s.Parent())
	}
	if inside.SpanID() != s.SpanContext().SpanID() {
		t.Error("Deliver did not run inside the delivery's span")
	}
	if sc := s.InstrumentationScope(); sc.Name != "github.com/partnerapi/partner-go" || sc.Version != partner.Version || sc.SchemaURL != semconv.SchemaURL {
		t.Errorf("scope %+v, want the SDK's name, version %s and %s", sc, partner.Version, semconv.SchemaURL)
	}
}

// TestSubscriberSecretHidden: the subscriber secret, and the callback URL
// that carries it, reach no span, no log record and no error, whether
// Subscribe succeeds, fails at the service (which may quote the URL it
// was given) or fails ambiguously, and whether the Handler serves a
// delivery or refuses one that holds the secret in the wrong place.
func TestSubscriberSecretHidden(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, mt := mocktest.New(t, partner.WithTracerProvider(tp), partner.WithLogger(logger))
	secret := events.NewSecret()
	callback := "https://hooks.example.com/partner/" + string(secret)
	quoted := `{"code":"invalid_request","message":"webhook_settings.callback_url ` + callback + ` does not answer"}`
	var errs []string
	for _, answer := range []*http.Response{
		httpmock.NewStringResponse(400, quoted),
		httpmock.NewStringResponse(503, quoted),
		httpmock.NewStringResponse(200, `{"subscriber_id":"sub-1"}`),
	} {
		mt.RegisterResponder(http.MethodPost, base+"/event/v1/subscriber", httpmock.ResponderFromResponse(answer))
		_, err := c.Events.Subscribe(context.Background(), events.SubscribeParams{Name: "crm", Events: []events.Kind{events.KindObjectUpdate},
			CallbackURL: "https://hooks.example.com/partner", Secret: secret})
		if err != nil {
			errs = append(errs, err.Error())
			var pe *partner.Error
			if !errors.As(err, &pe) || !strings.Contains(pe.Message, "/partner/*** does not answer") {
				t.Errorf("error %v: the service's message is lost", err)
			} else {
				errs = append(errs, pe.Message, pe.Code, string(pe.Body))
			}
		}
	}
	if len(errs) != 8 || !strings.Contains(errs[4], "outcome unknown") {
		t.Errorf("errors: %q, want a 400 and a 503 with outcome unknown", errs)
	}

	h := &events.Handler{TracerProvider: tp, Logger: logger, Secrets: events.NewSecretSet(secret),
		Deliver: func(context.Context, *events.Delivery) error { return nil }}
	for _, target := range []string{
		"/partner/" + string(secret),
		"/partner/" + string(secret) + "/",
		"/partner/" + string(secret) + "!x/y",
		"/partner/x." + string(secret) + "/y",
		"/partner/%2F" + string(secret) + "%2Fz/y",
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, target, strings.NewReader(`{"event":"object.update"}`)))
		errs = append(errs, rec.Body.String())
	}

	var dump strings.Builder
	for _, s := range sr.Ended() {
		fmt.Fprintf(&dump, "%s %s %v\n", s.Name(), s.Status().Description, s.Attributes())
		for _, e := range s.Events() {
			fmt.Fprintf(&dump, "  %s %v\n", e.Name, e.Attributes)
		}
	}
	if !strings.Contains(dump.String(), "partner.events.Subscribe") || !strings.Contains(dump.String(), "partner.events.Handler") {
		t.Fatalf("spans:\n%s", dump.String())
	}
	all := dump.String() + logs.String() + strings.Join(errs, "\n")
	if strings.Contains(all, string(secret)) || strings.Contains(all, callback) {
		t.Errorf("the secret shows:\nspans:\n%s\nlogs:\n%s\nerrors and answers:\n%s", dump.String(), logs.String(), strings.Join(errs, "\n"))
	}
}
