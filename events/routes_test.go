package events_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/events"
)

// TestHandlerRoutes: with Routes, Deliver learns the kind and subscriber
// the path (less its secret) names, unless the body carries them; an
// unknown path leaves them empty.
func TestHandlerRoutes(t *testing.T) {
	secret := events.NewSecret()
	routes := &events.Routes{}
	routes.Add("/hooks/object.update", events.Route{Kind: events.KindObjectUpdate, SubscriberID: "sub-u"})
	routes.Add("/hooks/object.stage_change/", events.Route{Kind: "object.stage_change", SubscriberID: "sub-s"})
	var got []events.Route
	h := &events.Handler{Secrets: events.NewSecretSet(secret), Routes: routes, Deliver: func(_ context.Context, d *events.Delivery) error {
		got = append(got, events.Route{Kind: d.Event, SubscriberID: d.SubscriberID})
		return nil
	}}
	for _, tc := range []struct{ path, body string }{
		{"/hooks/object.update/" + string(secret), `{"stage":"won"}`},
		{"/hooks/object.stage_change/" + string(secret), `{"stage":"won"}`},
		{"/hooks/object.update/" + string(secret), `{"event":"object.create","subscriber_id":"sub-b"}`},
		{"/hooks/other/" + string(secret), `{"stage":"won"}`},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body)))
		if w.Code != http.StatusNoContent {
			t.Fatalf("%s: %d", tc.path, w.Code)
		}
	}
	want := []events.Route{{events.KindObjectUpdate, "sub-u"}, {"object.stage_change", "sub-s"}, {"object.create", "sub-b"}, {}}
	if len(got) != len(want) {
		t.Fatalf("delivered %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("delivery %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestNewHandlerUsesClientTracerProvider: a Handler from the client's
// Events (NewHandler) sends its spans to the provider the client was
// built with, not to the global one.
func TestNewHandlerUsesClientTracerProvider(t *testing.T) {
	global := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(global)))
	defer otel.SetTracerProvider(prev)
	sr := tracetest.NewSpanRecorder()
	c, err := partner.New(partner.WithBaseURL("https://api.example.com"), partner.WithClientCredentials("id", "secret"),
		partner.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))))
	if err != nil {
		t.Fatal(err)
	}
	h := c.Events.NewHandler(func(context.Context, *events.Delivery) error { return nil })
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(`{"stage":"won"}`)))
	if spans := sr.Ended(); len(spans) != 1 || spans[0].Name() != "partner.events.Handler" {
		t.Fatalf("client provider got %d spans", len(spans))
	}
	if n := len(global.Ended()); n != 0 {
		t.Fatalf("the global provider got %d spans", n)
	}
}
