package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/events"
)

// benchDelivery is a delivery of an object with 20 fields.
var benchDelivery = func() string {
	m := map[string]string{
		"event": "object.update", "subscriber_id": "sub_0123456789abcdef", "delivery_id": "dlv_0123456789abcdef",
		"object_id": "opp-demo-0001", "occurred_at": "2026-03-04T05:06:07.123456789Z", "integration_id": "int-demo-opportunities",
	}
	for i := range 20 {
		m[fmt.Sprintf("section_%d.field_%d", i%4, i)] = strings.Repeat("v", 24)
	}
	b, _ := json.Marshal(m)
	return string(b)
}()

// BenchmarkHandler receives a delivery through events.Handler.
func BenchmarkHandler(b *testing.B) {
	h := &events.Handler{Insecure: true, Deliver: func(context.Context, *events.Delivery) error { return nil }}
	benchReceive(b, h)
}

// BenchmarkHandlerBaseline is the hand-written receiver: read the body and
// decode it into a map of strings.
func BenchmarkHandlerBaseline(b *testing.B) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var m map[string]string
		if err != nil || json.Unmarshal(body, &m) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	benchReceive(b, h)
}

func benchReceive(b *testing.B, h http.Handler) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchDelivery)))
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(benchDelivery))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNoContent {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
