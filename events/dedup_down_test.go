package events_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/events"
)

// panickingStore is a store whose every operation panics, as a cache
// client may on a reply it cannot read.
type panickingStore struct{}

func (panickingStore) Claim(context.Context, string, time.Duration) (events.DedupState, error) {
	panic("bad reply")
}
func (panickingStore) Done(context.Context, string, time.Duration) error { panic("bad reply") }
func (panickingStore) Release(context.Context, string) error             { panic("bad reply") }

// TestDedupStoreDownRefused: with RefuseWhenStoreFails, a delivery whose
// key the store cannot claim (an error, or a panic) is answered 503 with
// Retry-After and does not reach Deliver; once the store works, it is
// delivered. Without it, a panicking store is a store that is down: the
// delivery reaches Deliver and the failure is logged.
func TestDedupStoreDownRefused(t *testing.T) {
	var logs bytes.Buffer
	calls := 0
	h := &events.Handler{Insecure: true, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Deliver: func(context.Context, *events.Delivery) error { calls++; return nil }}
	for _, store := range []events.DedupStore{failingStore{}, panickingStore{}} {
		h.Dedup = &events.Dedup{Store: store, RefuseWhenStoreFails: true}
		rec := post(h, "/hook", `{"stage":"won"}`)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "30" || calls != 0 {
			t.Fatalf("%T: %d, Retry-After %q, %d calls; want 503, 30, none", store, rec.Code, rec.Header().Get("Retry-After"), calls)
		}
	}
	if !strings.Contains(logs.String(), "cache down") || !strings.Contains(logs.String(), "panicked in claim: bad reply") {
		t.Errorf("logs: %s", logs.String())
	}

	h.Dedup = &events.Dedup{Store: events.NewMemoryDedupStore(0, nil), RefuseWhenStoreFails: true}
	if rec := post(h, "/hook", `{"stage":"won"}`); rec.Code != http.StatusNoContent || calls != 1 {
		t.Fatalf("with the store back: %d, %d calls", rec.Code, calls)
	}

	h.Dedup = &events.Dedup{Store: panickingStore{}}
	if rec := post(h, "/hook", `{"stage":"won"}`); rec.Code != http.StatusNoContent || calls != 2 {
		t.Fatalf("a panicking store, by default: %d, %d calls; want 204, delivered", rec.Code, calls)
	}
}
