package redisdedup_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/events/redisdedup"
	"github.com/partnerapi/partner-go/events/redisdedup/redistest"
)

// BenchmarkDelivery receives one new delivery (a 20-field body, a new
// key each time) through events.Handler with no guard, with the
// in-memory store and with the Redis store on a loopback redis-server:
// the guard's cost per delivery, in one run.
func BenchmarkDelivery(b *testing.B) {
	deliver := func(context.Context, *events.Delivery) error { return nil }
	run := func(b *testing.B, h *events.Handler) {
		var fields strings.Builder
		for i := range 20 {
			fmt.Fprintf(&fields, `,"section_%d.field_%d":"%s"`, i%4, i, strings.Repeat("v", 24))
		}
		// A server's request context can end (the client goes away), as
		// httptest.NewRequest's cannot.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			n++
			body := fmt.Sprintf(`{"object_id":"opp-%d"%s}`, n, fields.String())
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodPost, "/hook", strings.NewReader(body)))
			if rec.Code != http.StatusNoContent {
				b.Fatalf("status %d", rec.Code)
			}
		}
	}
	b.Run("guard=none", func(b *testing.B) {
		run(b, &events.Handler{Insecure: true, Deliver: deliver})
	})
	b.Run("guard=memory", func(b *testing.B) {
		run(b, &events.Handler{Insecure: true, Deliver: deliver, Dedup: &events.Dedup{}})
	})
	b.Run("guard=redis", func(b *testing.B) {
		srv := redistest.Start(b)
		run(b, &events.Handler{Insecure: true, Deliver: deliver, Dedup: &events.Dedup{Store: redisdedup.New(srv.Client())}})
	})
}
