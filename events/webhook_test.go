package events_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/events"
)

const deliveryBody = `{"event":"object.update","subscriber_id":"sub-1","delivery_id":"dlv-1","object_id":"opp-1",
	"occurred_at":"2026-03-04T05:06:07.5Z","integration_id":"int-1","stage":"won","sales_details.partner":"P1",
	"amount":10000,"hot":true,"gone":null,"tags":["a", "b"]}`

func TestParseDelivery(t *testing.T) {
	d, err := events.ParseDelivery([]byte(deliveryBody))
	if err != nil {
		t.Fatal(err)
	}
	want := &events.Delivery{
		Event: events.KindObjectUpdate, SubscriberID: "sub-1", DeliveryID: "dlv-1", ObjectID: "opp-1",
		OccurredAt: time.Date(2026, 3, 4, 5, 6, 7, 5e8, time.UTC), IntegrationID: "int-1",
		Fields: map[string]string{"stage": "won", "sales_details.partner": "P1", "amount": "10000", "hot": "true", "gone": "", "tags": `["a", "b"]`},
		Raw:    []byte(deliveryBody),
	}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("delivery\n got %+v\nwant %+v", d, want)
	}
	// Escapes are decoded; a null envelope member is left empty.
	d, err = events.ParseDelivery([]byte(`{"event":"object.update","object_id":null,"name":"say \"hi\" \u00e9\n"}`))
	if err != nil || d.ObjectID != "" || d.Fields["name"] != "say \"hi\" é\n" {
		t.Fatalf("delivery with escapes = %+v, %v", d, err)
	}
	// Unknown kinds are kept; members other than event are optional.
	d, err = events.ParseDelivery([]byte(`{"event":"contract.signed"}`))
	if err != nil || d.Event != "contract.signed" || len(d.Fields) != 0 || !d.OccurredAt.IsZero() {
		t.Fatalf("minimal delivery = %+v, %v", d, err)
	}
}

func TestParseDeliveryMalformed(t *testing.T) {
	tests := []struct{ body, want string }{
		{``, "not a JSON object"},
		{`[1]`, "not a JSON object"},
		{`null`, "not a JSON object"},
		{`{"event":"object.update"`, "not a JSON object"},
		{`{"object_id":"o"}`, "delivery has no event"},
		{`{"event":""}`, "delivery has no event"},
		{`{"event":7}`, `member "event" is not a string`},
		{`{"event":"object.update","delivery_id":{"x":1}}`, `member "delivery_id" is not a string`},
		{`{"event":"object.update","occurred_at":"yesterday"}`, `occurred_at "yesterday" is not an RFC 3339 time`},
	}
	for _, tt := range tests {
		_, err := events.ParseDelivery([]byte(tt.body))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseDelivery(%s) = %v, want %q", tt.body, err, tt.want)
		}
	}
}

func TestHandler(t *testing.T) {
	var got []*events.Delivery
	var logs bytes.Buffer
	h := &events.Handler{
		Deliver: func(ctx context.Context, d *events.Delivery) error {
			if d.ObjectID == "fail" {
				return errors.New("database down: secret detail")
			}
			got = append(got, d)
			return nil
		},
		MaxBodyBytes: 512,
		Logger:       slog.New(slog.NewTextHandler(&logs, nil)),
	}
	tests := []struct {
		name, method, contentType, body string
		status                          int
		answer                          string
	}{
		{"delivered", "POST", "application/json", deliveryBody, 204, ""},
		{"no content type", "POST", "", `{"event":"object.create","object_id":"o2"}`, 204, ""},
		{"json charset", "POST", "application/json; charset=utf-8", `{"event":"object.create","object_id":"o3"}`, 204, ""},
		{"handler fails", "POST", "application/json", `{"event":"object.update","object_id":"fail"}`, 500, "delivery not handled"},
		{"malformed", "POST", "application/json", `{"event":`, 400, "not a JSON object"},
		{"no event", "POST", "application/json", `{"object_id":"o"}`, 400, "delivery has no event"},
		{"too large", "POST", "application/json", `{"event":"object.update","x":"` + strings.Repeat("x", 600) + `"}`, 413, "at most 512 bytes"},
		{"not JSON", "POST", "text/plain", `{"event":"object.update"}`, 415, "a delivery is JSON"},
		{"GET", "GET", "", "", 405, "deliveries are POSTed"},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(tt.method, "/hook", strings.NewReader(tt.body))
		if tt.contentType != "" {
			req.Header.Set("Content-Type", tt.contentType)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.answer) {
			t.Errorf("%s: answered %d %q, want %d %q", tt.name, rec.Code, rec.Body.String(), tt.status, tt.answer)
		}
		if strings.Contains(rec.Body.String(), "database down") {
			t.Errorf("%s: the handler's error reached the sender: %q", tt.name, rec.Body.String())
		}
		if tt.status == 405 && rec.Header().Get("Allow") != "POST" {
			t.Errorf("405 without Allow: POST")
		}
	}
	if len(got) != 3 || got[0].DeliveryID != "dlv-1" || got[1].ObjectID != "o2" || got[2].ObjectID != "o3" {
		t.Fatalf("delivered %+v", got)
	}
	if !strings.Contains(logs.String(), "database down") {
		t.Errorf("the handler's error was not logged: %s", logs.String())
	}
}

func TestHandlerWithoutDeliver(t *testing.T) {
	rec := httptest.NewRecorder()
	(&events.Handler{}).ServeHTTP(rec, httptest.NewRequest("POST", "/", strings.NewReader(`{"event":"object.update"}`)))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", rec.Code)
	}
}

// TestHandlerContext checks that Deliver runs under the request's context.
func TestHandlerContext(t *testing.T) {
	type key struct{}
	var seen any
	h := &events.Handler{Deliver: func(ctx context.Context, d *events.Delivery) error {
		seen = ctx.Value(key{})
		return nil
	}}
	req := httptest.NewRequest("POST", "/", strings.NewReader(`{"event":"object.update"}`))
	req = req.WithContext(context.WithValue(req.Context(), key{}, "v"))
	h.ServeHTTP(httptest.NewRecorder(), req)
	if seen != "v" {
		t.Fatalf("Deliver saw context value %v", seen)
	}
}

// FuzzParseDelivery checks that no body makes ParseDelivery panic and that
// an accepted delivery always names its event and keeps its body.
func FuzzParseDelivery(f *testing.F) {
	f.Add([]byte(deliveryBody))
	f.Add([]byte(`{"event":"x","a":"\u00e9\"","b":null,"c":[1]}`))
	f.Add([]byte(`{"event":"x","occurred_at":"2026-01-02T03:04:05+01:00"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := events.ParseDelivery(body)
		if err != nil {
			return
		}
		if d.Event == "" || !bytes.Equal(d.Raw, body) {
			t.Fatalf("accepted %q as %+v", body, d)
		}
	})
}
