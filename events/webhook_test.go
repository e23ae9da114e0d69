package events_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/events"
)

// deliveryBody is a delivery with the members of package fake's envelope
// (fake.WithDeliveryEnvelope).
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
		Fields: map[string]string{"event": "object.update", "subscriber_id": "sub-1", "delivery_id": "dlv-1", "object_id": "opp-1",
			"occurred_at": "2026-03-04T05:06:07.5Z", "integration_id": "int-1",
			"stage": "won", "sales_details.partner": "P1", "amount": "10000", "hot": "true", "gone": "", "tags": `["a", "b"]`},
		Raw: []byte(deliveryBody),
	}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("delivery\n got %+v\nwant %+v", d, want)
	}
	// Escapes are decoded; a null envelope member is left empty.
	d, err = events.ParseDelivery([]byte(`{"event":"object.update","object_id":null,"name":"say \"hi\" \u00e9\n"}`))
	if err != nil || d.ObjectID != "" || d.Fields["name"] != "say \"hi\" é\n" {
		t.Fatalf("delivery with escapes = %+v, %v", d, err)
	}
	// Unknown kinds are kept; every member is optional.
	d, err = events.ParseDelivery([]byte(`{"event":"contract.signed"}`))
	if err != nil || d.Event != "contract.signed" || len(d.Fields) != 1 || !d.OccurredAt.IsZero() {
		t.Fatalf("minimal delivery = %+v, %v", d, err)
	}
}

// flatDelivery is what the deployed service POSTs: one flat object whose
// members are the changed object's fields as strings, no envelope.
const flatDelivery = `{"opportunity_id":"0065g00000XyZ","name":"Acme renewal","stage":"Closed Won",
	"amount":"12000","close_date":"2026-03-31","sales_details.crm_opportunity_id":"CRM-42",
	"acme_portal.referral_id":"REF-7","acme_portal.integration_status":"LINKED"}`

// TestParseFlatDelivery: a delivery without any envelope member is
// accepted whole; kind, ids and time stay empty.
func TestParseFlatDelivery(t *testing.T) {
	d, err := events.ParseDelivery([]byte(flatDelivery))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"opportunity_id": "0065g00000XyZ", "name": "Acme renewal", "stage": "Closed Won",
		"amount": "12000", "close_date": "2026-03-31", "sales_details.crm_opportunity_id": "CRM-42",
		"acme_portal.referral_id": "REF-7", "acme_portal.integration_status": "LINKED"}
	if !reflect.DeepEqual(d.Fields, want) || d.Event != "" || d.ObjectID != "" || d.DeliveryID != "" || !d.OccurredAt.IsZero() {
		t.Fatalf("flat delivery = %+v", d)
	}
	var typed struct {
		ID       string `json:"opportunity_id"`
		Stage    string `json:"stage"`
		Referral string `json:"acme_portal.referral_id"`
	}
	if err := d.Decode(&typed); err != nil || typed.ID != "0065g00000XyZ" || typed.Stage != "Closed Won" || typed.Referral != "REF-7" {
		t.Fatalf("Decode = %+v, %v", typed, err)
	}
	// Envelope-named members of other types are object fields like any
	// other: kept as text, the typed fields left empty.
	d, err = events.ParseDelivery([]byte(`{"event":7,"delivery_id":{"x":1},"occurred_at":"yesterday","object_id":"o"}`))
	if err != nil || d.Event != "" || d.DeliveryID != "" || !d.OccurredAt.IsZero() || d.ObjectID != "o" ||
		d.Fields["event"] != "7" || d.Fields["delivery_id"] != `{"x":1}` || d.Fields["occurred_at"] != "yesterday" {
		t.Fatalf("odd members = %+v, %v", d, err)
	}
	if d, err := events.ParseDelivery([]byte(`{}`)); err != nil || len(d.Fields) != 0 {
		t.Fatalf("empty object = %+v, %v", d, err)
	}
}

func TestParseDeliveryMalformed(t *testing.T) {
	tests := []struct{ body, want string }{
		{``, "not a JSON object"},
		{`[1]`, "not a JSON object"},
		{`null`, "not a JSON object"},
		{`{"event":"object.update"`, "not a JSON object"},
		{`"object"`, "not a JSON object"},
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
		Insecure: true,
		Deliver: func(ctx context.Context, d *events.Delivery) error {
			if d.ObjectID == "fail" {
				return errors.New("database down: secret detail")
			}
			got = append(got, d)
			return nil
		},
		MaxBodyBytes: 600,
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
		{"flat, as deployed", "POST", "application/json", flatDelivery, 204, ""},
		{"too large", "POST", "application/json", `{"event":"object.update","x":"` + strings.Repeat("x", 700) + `"}`, 413, "at most 600 bytes"},
		{"any content type", "POST", "text/plain", `{"event":"object.update","object_id":"o4"}`, 204, ""},
		{"not JSON", "POST", "text/plain", `event=object.update`, 400, "not a JSON object"},
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
	if len(got) != 5 || got[0].DeliveryID != "dlv-1" || got[1].ObjectID != "o2" || got[2].ObjectID != "o3" ||
		got[3].Fields["opportunity_id"] != "0065g00000XyZ" || got[4].ObjectID != "o4" {
		t.Fatalf("delivered %+v", got)
	}
	if !strings.Contains(logs.String(), "database down") {
		t.Errorf("the handler's error was not logged: %s", logs.String())
	}
}

func TestHandlerWithoutDeliver(t *testing.T) {
	rec := httptest.NewRecorder()
	(&events.Handler{Insecure: true}).ServeHTTP(rec, httptest.NewRequest("POST", "/", strings.NewReader(`{"event":"object.update"}`)))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", rec.Code)
	}
}

// TestHandlerContext checks that Deliver runs under the request's context.
func TestHandlerContext(t *testing.T) {
	type key struct{}
	var seen any
	h := &events.Handler{Insecure: true, Deliver: func(ctx context.Context, d *events.Delivery) error {
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
// an accepted delivery keeps its body and gives every member to Fields.
func FuzzParseDelivery(f *testing.F) {
	f.Add([]byte(deliveryBody))
	f.Add([]byte(`{"event":"x","a":"\u00e9\"","b":null,"c":[1]}`))
	f.Add([]byte(`{"event":"x","occurred_at":"2026-01-02T03:04:05+01:00"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := events.ParseDelivery(body)
		if err != nil {
			return
		}
		var members map[string]json.RawMessage
		if json.Unmarshal(body, &members) != nil || len(members) != len(d.Fields) || !bytes.Equal(d.Raw, body) {
			t.Fatalf("accepted %q as %+v", body, d)
		}
		if d.Event != "" && d.Fields["event"] != string(d.Event) {
			t.Fatalf("event %q, member %q", d.Event, d.Fields["event"])
		}
	})
}

// TestHandlerStatusError: a *StatusError in Deliver's error chooses the
// answer's status and Retry-After; other statuses and plain errors give 500.
func TestHandlerStatusError(t *testing.T) {
	for _, tt := range []struct {
		err        error
		status     int
		retryAfter string
	}{
		{&events.StatusError{Status: 400, Err: errors.New("refused downstream")}, 400, ""},
		{fmt.Errorf("forward: %w", &events.StatusError{Status: 503, RetryAfter: "7"}), 503, "7"},
		{&events.StatusError{Status: 302}, 500, ""},
		{errors.New("plain"), 500, ""},
	} {
		h := &events.Handler{Insecure: true, Deliver: func(context.Context, *events.Delivery) error { return tt.err }}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/hook", strings.NewReader(`{"event":"object.update"}`)))
		if rec.Code != tt.status || rec.Header().Get("Retry-After") != tt.retryAfter {
			t.Errorf("%v: answered %d Retry-After %q, want %d %q", tt.err, rec.Code, rec.Header().Get("Retry-After"), tt.status, tt.retryAfter)
		}
		if strings.Contains(rec.Body.String(), "downstream") {
			t.Errorf("%v: the error reached the sender: %q", tt.err, rec.Body.String())
		}
	}
}
