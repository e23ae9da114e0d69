package fake

import (
	"bytes"
	"context"
	"github.com/partnerapi/partner-go/internal/fakeserver/eventfilter"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

var evBenchFields = map[string]any{
	"name": "Acme renewal", "stage": "won", "amount": float64(30000),
	"sales_details": map[string]any{"partner": "P1", "crm_opportunity_id": "CRM-1"},
}

// BenchmarkEventFilterMatch evaluates the interface's example filter on an
// object, as every delivery decision does.
func BenchmarkEventFilterMatch(b *testing.B) {
	f, err := eventfilter.Parse(`(stage in ["closed", "won", "lost"]) AND (sales_details.partner = "P1")`)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if !f.Match(evBenchFields) {
			b.Fatal("no match")
		}
	}
}

// BenchmarkEventFilterMatchBaseline is the same filter written in Go.
func BenchmarkEventFilterMatchBaseline(b *testing.B) {
	match := func(fields map[string]any) bool {
		stage, _ := fields["stage"].(string)
		sd, _ := fields["sales_details"].(map[string]any)
		partner, _ := sd["partner"].(string)
		return slices.Contains([]string{"closed", "won", "lost"}, stage) && partner == "P1"
	}
	b.ReportAllocs()
	for b.Loop() {
		if !match(evBenchFields) {
			b.Fatal("no match")
		}
	}
}

// BenchmarkDeliveries changes an object b.N times and waits until each
// change has been delivered, in order, to one subscriber.
func BenchmarkDeliveries(b *testing.B) {
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rc.Close()
	// The changes come faster than the deliveries: an unbounded queue
	// makes the benchmark measure delivery, not dropping.
	f := New(WithDeliveryPolicy(DeliveryPolicy{Backoff: time.Millisecond, MaxQueue: math.MaxInt}))
	defer f.Close()
	f.AddObject(Object{ID: "o", Fields: evBenchFields})
	f.events.mu.Lock()
	f.events.subs["s"] = &evSubscriber{EventSubscriber: EventSubscriber{ID: "s", Events: []string{eventObjectUpdate}, CallbackURL: rc.URL}}
	f.events.mu.Unlock()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		f.UpdateObject("o", map[string]any{"n": float64(i)})
	}
	if err := f.WaitDeliveries(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	log := f.Deliveries()
	if n := len(log); n != min(b.N, maxDeliveryLog) || slices.ContainsFunc(log, func(a DeliveryAttempt) bool { return !a.Delivered }) {
		b.Fatalf("%d deliveries for %d changes, or some not delivered", n, b.N)
	}
}

// BenchmarkDeliveriesBaseline POSTs the same bodies one after the other
// with a plain http.Client: the floor of an in-order delivery.
func BenchmarkDeliveriesBaseline(b *testing.B) {
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rc.Close()
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	body := []byte(`{"event":"object.update","object_id":"o","name":"Acme renewal","stage":"won","amount":"30000",` +
		`"sales_details.partner":"P1","sales_details.crm_opportunity_id":"CRM-1","subscriber_id":"s","delivery_id":"dlv_0123456789abcdef",` +
		`"occurred_at":"2026-03-04T05:06:07.123456789Z"}`)
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, rc.URL, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
