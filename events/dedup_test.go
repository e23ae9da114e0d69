package events_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/events"
)

// TestHandlerWithoutSecretsFailsClosed: a Handler whose Secrets were
// forgotten refuses every delivery with 500 and logs why, instead of
// accepting anybody's; Insecure is the explicit way to accept them.
func TestHandlerWithoutSecretsFailsClosed(t *testing.T) {
	var logs bytes.Buffer
	called := 0
	deliver := func(context.Context, *events.Delivery) error { called++; return nil }
	h := &events.Handler{Deliver: deliver, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	for _, path := range []string{"/", "/partner/anything", "/partner/" + string(testSecret)} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{"stage":"won"}`)))
		if rec.Code != http.StatusInternalServerError {
			t.Errorf("POST %s without Secrets: %d, want 500", path, rec.Code)
		}
	}
	if called != 0 {
		t.Fatalf("Deliver called %d times without Secrets", called)
	}
	if !strings.Contains(logs.String(), "no Secrets") || !strings.Contains(logs.String(), "Insecure") {
		t.Errorf("log does not say what is missing: %s", logs.String())
	}

	insecure := &events.Handler{Deliver: deliver, Insecure: true}
	rec := httptest.NewRecorder()
	insecure.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/anything", strings.NewReader(`{"stage":"won"}`)))
	if rec.Code != http.StatusNoContent || called != 1 {
		t.Fatalf("Insecure: %d, %d calls; want 204 and 1", rec.Code, called)
	}
}

// clock is a manual clock for window tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func post(h http.Handler, path, body string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	return rec
}

func TestDedupAnswersDuplicatesWithoutDeliver(t *testing.T) {
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var got []string
	h := &events.Handler{
		Secrets: events.NewSecretSet(testSecret),
		Dedup:   &events.Dedup{Store: events.NewMemoryDedupStore(10, clk.Now)},
		Deliver: func(_ context.Context, d *events.Delivery) error { got = append(got, d.Fields["stage"]); return nil },
	}
	path := "/partner/" + string(testSecret)
	for i, tc := range []struct {
		path, body string
		advance    time.Duration
		delivered  bool
	}{
		{path, `{"stage":"won"}`, 0, true},
		{path, `{"stage":"won"}`, 9 * time.Minute, false},            // a retry inside the window
		{path, `{"stage":"lost"}`, 0, true},                          // another body
		{"/other/" + string(testSecret), `{"stage":"won"}`, 0, true}, // another subscriber
		{path, `{"stage":"won"}`, 2 * time.Minute, true},             // the window is over
	} {
		clk.Advance(tc.advance)
		n := len(got)
		rec := post(h, tc.path, tc.body)
		if rec.Code != http.StatusNoContent {
			t.Fatalf("delivery %d: %d, want 204", i, rec.Code)
		}
		if delivered := len(got) > n; delivered != tc.delivered {
			t.Fatalf("delivery %d (%s %s): delivered %v, want %v", i, tc.path, tc.body, delivered, tc.delivered)
		}
	}

	// A rotated secret is the same subscriber: a retry sent to the new
	// callback URL is still a duplicate.
	const newSecret events.Secret = "N3w_secret-0123456789abcdefgh"
	h.Secrets.Add(newSecret)
	n := len(got)
	if rec := post(h, "/partner/"+string(newSecret), `{"stage":"won"}`); rec.Code != http.StatusNoContent || len(got) != n {
		t.Fatalf("after rotation: %d, delivered %d; want 204 and no delivery", rec.Code, len(got)-n)
	}
}

// TestDedupFailedDeliveryIsDeliveredAgain: a delivery whose Deliver failed
// is not remembered as done, so the service's retry reaches Deliver.
func TestDedupFailedDeliveryIsDeliveredAgain(t *testing.T) {
	calls := 0
	fail := true
	h := &events.Handler{Insecure: true, Dedup: &events.Dedup{},
		Deliver: func(context.Context, *events.Delivery) error {
			calls++
			if fail {
				return errors.New("database down")
			}
			return nil
		}}
	if rec := post(h, "/hook", `{"stage":"won"}`); rec.Code != http.StatusInternalServerError {
		t.Fatalf("failing delivery: %d, want 500", rec.Code)
	}
	fail = false
	if rec := post(h, "/hook", `{"stage":"won"}`); rec.Code != http.StatusNoContent || calls != 2 {
		t.Fatalf("retry: %d after %d calls, want 204 after 2", rec.Code, calls)
	}
	if rec := post(h, "/hook", `{"stage":"won"}`); rec.Code != http.StatusNoContent || calls != 2 {
		t.Fatalf("duplicate of the delivered one: %d after %d calls, want 204 after 2", rec.Code, calls)
	}

	// A panic in Deliver releases the key too, and goes on to the
	// server (which recovers it).
	panicky := &events.Handler{Insecure: true, Dedup: &events.Dedup{},
		Deliver: func(context.Context, *events.Delivery) error { calls++; panic("boom") }}
	for i := range 2 {
		func() {
			defer func() {
				if got := recover(); got != "boom" {
					t.Fatalf("attempt %d: the handler's caller recovered %v, want Deliver's panic", i+1, got)
				}
			}()
			post(panicky, "/hook", `{"stage":"won"}`)
		}()
	}
	if calls != 4 {
		t.Fatalf("after two panicking attempts: %d calls, want 4", calls)
	}
}

// TestDedupInProgress: a duplicate that arrives while the first is being
// handled is asked to come back (503, Retry-After) rather than answered
// 2xx, since the first may still fail; a claim nobody settles lapses
// after the lease.
func TestDedupInProgress(t *testing.T) {
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	store := events.NewMemoryDedupStore(10, clk.Now)
	entered, release := make(chan struct{}), make(chan struct{})
	calls := 0
	h := &events.Handler{Insecure: true, Dedup: &events.Dedup{Store: store, Lease: 30 * time.Second, Field: "delivery_id"},
		Deliver: func(context.Context, *events.Delivery) error {
			calls++
			if calls == 1 {
				close(entered)
				<-release
			}
			return nil
		}}
	first := make(chan int)
	go func() { first <- post(h, "/hook", `{"delivery_id":"d1","stage":"won"}`).Code }()
	<-entered
	// Same delivery id, another body (the field names the delivery).
	rec := post(h, "/hook", `{"delivery_id":"d1","stage":"won","n":"2"}`)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "30" {
		t.Fatalf("duplicate in progress: %d Retry-After %q, want 503 and 30", rec.Code, rec.Header().Get("Retry-After"))
	}
	close(release)
	if code := <-first; code != http.StatusNoContent {
		t.Fatalf("first: %d", code)
	}
	if rec := post(h, "/hook", `{"delivery_id":"d1"}`); rec.Code != http.StatusNoContent || calls != 1 {
		t.Fatalf("after the first: %d, %d calls", rec.Code, calls)
	}

	// A claim left by a receiver that died lapses after the lease.
	if st, _ := store.Claim(context.Background(), "orphan", 30*time.Second); st != events.DedupNew {
		t.Fatalf("claim: %v", st)
	}
	if st, _ := store.Claim(context.Background(), "orphan", 30*time.Second); st != events.DedupInProgress {
		t.Fatalf("second claim: %v", st)
	}
	clk.Advance(31 * time.Second)
	if st, _ := store.Claim(context.Background(), "orphan", 30*time.Second); st != events.DedupNew {
		t.Fatalf("claim after the lease: %v", st)
	}
}

// TestMemoryDedupStoreBounded: the store holds at most its number of
// keys, whatever their length, forgetting the oldest first. Three times
// its number of 64 KiB keys go through it (each key is hashed twice, so
// more only costs time).
func TestMemoryDedupStoreBounded(t *testing.T) {
	ctx := context.Background()
	s := events.NewMemoryDedupStore(100, nil)
	long := strings.Repeat("k", 1<<16)
	const n = 300
	for i := range n {
		key := fmt.Sprintf("%s%d", long, i)
		if st, err := s.Claim(ctx, key, time.Minute); err != nil || st != events.DedupNew {
			t.Fatalf("claim %d: %v %v", i, st, err)
		}
		s.Done(ctx, key, time.Hour)
	}
	if s.Len() != 100 {
		t.Fatalf("%d keys held, want 100", s.Len())
	}
	if st, _ := s.Claim(ctx, fmt.Sprintf("%s%d", long, n-1), time.Minute); st != events.DedupDone {
		t.Fatalf("newest key: %v, want done", st)
	}
	if st, _ := s.Claim(ctx, long+"0", time.Minute); st != events.DedupNew {
		t.Fatalf("oldest key: %v, want forgotten", st)
	}
}

// failingStore is a shared store that is down.
type failingStore struct{}

func (failingStore) Claim(context.Context, string, time.Duration) (events.DedupState, error) {
	return 0, errors.New("cache down")
}
func (failingStore) Done(context.Context, string, time.Duration) error {
	return errors.New("cache down")
}
func (failingStore) Release(context.Context, string) error { return errors.New("cache down") }

// TestDedupStoreDown: a store that fails does not lose deliveries: they
// reach Deliver, and the failure is logged.
func TestDedupStoreDown(t *testing.T) {
	var logs bytes.Buffer
	calls := 0
	h := &events.Handler{Insecure: true, Dedup: &events.Dedup{Store: failingStore{}},
		Logger:  slog.New(slog.NewTextHandler(&logs, nil)),
		Deliver: func(context.Context, *events.Delivery) error { calls++; return nil }}
	for range 2 {
		if rec := post(h, "/hook", `{"stage":"won"}`); rec.Code != http.StatusNoContent {
			t.Fatalf("%d, want 204", rec.Code)
		}
	}
	if calls != 2 || !strings.Contains(logs.String(), "cache down") {
		t.Fatalf("%d calls, logs %s", calls, logs.String())
	}
}

// TestDedupWonLostWonAnHourApart: bodies are an object's fields and
// nothing else, so an opportunity that goes won, lost, won sends the
// same body twice. The default guard hands Deliver all three changes an
// hour apart, and a redelivery inside the window once; so does a guard
// configured with a day's window but no identity (the body is then
// remembered for DefaultDedupRetryWindow only).
func TestDedupWonLostWonAnHourApart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		dedup func(events.DedupStore) *events.Dedup
	}{
		{"default", func(s events.DedupStore) *events.Dedup { return &events.Dedup{Store: s} }},
		{"a day's window without identity", func(s events.DedupStore) *events.Dedup {
			return &events.Dedup{Window: 24 * time.Hour, Store: s}
		}},
		{"a field the body lacks", func(s events.DedupStore) *events.Dedup {
			return &events.Dedup{Window: 24 * time.Hour, Field: "delivery_id", Store: s}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			var got []string
			h := &events.Handler{
				Secrets: events.NewSecretSet(testSecret),
				Dedup:   tc.dedup(events.NewMemoryDedupStore(10, clk.Now)),
				Deliver: func(_ context.Context, d *events.Delivery) error { got = append(got, d.Fields["stage"]); return nil },
			}
			path := "/partner/" + string(testSecret)
			for i, tc := range []struct {
				body      string
				advance   time.Duration
				delivered bool
			}{
				{`{"id":"opp-1","stage":"won"}`, 0, true},
				{`{"id":"opp-1","stage":"lost"}`, time.Hour, true},
				{`{"id":"opp-1","stage":"won"}`, time.Hour, true},
				{`{"id":"opp-1","stage":"won"}`, time.Minute, false}, // the service's retry of the third
			} {
				clk.Advance(tc.advance)
				n := len(got)
				if rec := post(h, path, tc.body); rec.Code != http.StatusNoContent {
					t.Fatalf("delivery %d: %d, want 204", i, rec.Code)
				}
				if delivered := len(got) > n; delivered != tc.delivered {
					t.Fatalf("delivery %d (%s after %v): delivered %v, want %v", i, tc.body, tc.advance, delivered, tc.delivered)
				}
			}
			if want := []string{"won", "lost", "won"}; !slices.Equal(got, want) {
				t.Fatalf("Deliver saw %v, want %v", got, want)
			}
		})
	}
}

// TestDedupKey: Key names what identifies a change when one member is
// not enough: identical bodies of two changes are both delivered,
// differing bodies of one change once, and a delivery Key gives ""
// for is keyed by its body. A delivery keyed by Key is remembered for
// Window, a day here.
func TestDedupKey(t *testing.T) {
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	calls := 0
	h := &events.Handler{Insecure: true,
		Dedup: &events.Dedup{Window: 24 * time.Hour, Store: events.NewMemoryDedupStore(10, clk.Now),
			Key: func(d *events.Delivery) string {
				if d.Fields["id"] == "" || d.Fields["modified"] == "" {
					return ""
				}
				return d.Fields["id"] + "@" + d.Fields["modified"]
			}},
		Deliver: func(context.Context, *events.Delivery) error { calls++; return nil }}
	for i, tc := range []struct {
		body      string
		advance   time.Duration
		delivered bool
	}{
		{`{"id":"o1","modified":"t1","stage":"won"}`, 0, true},
		{`{"id":"o1","modified":"t1","stage":"won","note":"x"}`, 12 * time.Hour, false}, // the same change
		{`{"id":"o1","modified":"t2","stage":"won"}`, 0, true},                          // another change, same fields
		{`{"id":"o2","modified":"t1","stage":"won"}`, 0, true},                          // another object
		{`{"stage":"won"}`, 0, true},                                                    // no identity: the body
		{`{"stage":"won"}`, time.Minute, false},
		{`{"stage":"won"}`, 10 * time.Minute, true}, // past DefaultDedupRetryWindow
	} {
		clk.Advance(tc.advance)
		n := calls
		if rec := post(h, "/hook", tc.body); rec.Code != http.StatusNoContent {
			t.Fatalf("delivery %d: %d", i, rec.Code)
		}
		if delivered := calls > n; delivered != tc.delivered {
			t.Fatalf("delivery %d (%s): delivered %v, want %v", i, tc.body, delivered, tc.delivered)
		}
	}
}

// TestDedupKeyPathFollowsRoutes: the subscriber part of the key is the
// path less its secret by the rule Routes uses, for a Handler with
// Secrets and for an Insecure one with Routes alike: a retry sent to the
// callback URL of a rotated secret is still a duplicate. Two subscribers
// that receive the same body are two deliveries.
func TestDedupKeyPathFollowsRoutes(t *testing.T) {
	const old, next = "0ld_secret-0123456789abcdefgh", "N3w_secret-0123456789abcdefgh"
	routes := &events.Routes{}
	routes.Add("/hooks/object.update", events.Route{Kind: events.KindObjectUpdate})
	routes.Add("/hooks/object.stage_change", events.Route{Kind: events.KindObjectStageChange})
	for _, secrets := range []*events.SecretSet{events.NewSecretSet(old, next), nil} {
		calls := 0
		h := &events.Handler{Secrets: secrets, Insecure: secrets == nil, Routes: routes, Dedup: &events.Dedup{},
			Deliver: func(context.Context, *events.Delivery) error { calls++; return nil }}
		for _, path := range []string{"/hooks/object.update/" + old, "/hooks/object.update/" + next, "/hooks/object.update/" + old} {
			if rec := post(h, path, `{"stage":"won"}`); rec.Code != http.StatusNoContent {
				t.Fatalf("%s: %d", path, rec.Code)
			}
		}
		if rec := post(h, "/hooks/object.stage_change/"+next, `{"stage":"won"}`); rec.Code != http.StatusNoContent {
			t.Fatalf("stage_change: %d", rec.Code)
		}
		if calls != 2 {
			t.Errorf("Secrets %v: Deliver called %d times, want 2 (once per subscriber)", secrets != nil, calls)
		}
	}

	// An Insecure handler without Routes cannot tell a secret from a
	// path segment: two paths are two subscribers.
	calls := 0
	h := &events.Handler{Insecure: true, Dedup: &events.Dedup{},
		Deliver: func(context.Context, *events.Delivery) error { calls++; return nil }}
	post(h, "/hooks/a", `{"stage":"won"}`)
	post(h, "/hooks/b", `{"stage":"won"}`)
	if calls != 2 {
		t.Errorf("Insecure without Routes: %d calls, want 2", calls)
	}
}

// plainStore is a DedupStore without the holder methods.
type plainStore struct{ events.DedupStore }

// TestDedupLapsedClaimLeavesTheNext: a receiver whose Deliver outlived
// its lease neither frees nor settles the claim the retry took since:
// its failure leaves the retry's claim held (a third copy is asked to
// come back), and its success leaves it to the retry to settle.
// A store without the holder methods still guards.
func TestDedupLapsedClaimLeavesTheNext(t *testing.T) {
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	store := events.NewMemoryDedupStore(10, clk.Now)
	var mu sync.Mutex
	gates := map[string]chan error{}
	entered := make(chan string)
	h := &events.Handler{Insecure: true, Dedup: &events.Dedup{Store: store, Lease: 30 * time.Second},
		Deliver: func(_ context.Context, d *events.Delivery) error {
			mu.Lock()
			g, ok := gates[d.Fields["attempt"]]
			mu.Unlock()
			if !ok {
				return fmt.Errorf("attempt %s reached Deliver", d.Fields["attempt"])
			}
			entered <- d.Fields["attempt"]
			return <-g
		}}
	key := func(d *events.Delivery) string { return d.Fields["id"] }
	h.Dedup.Key = key
	send := func(attempt string) (chan error, chan int) {
		g, code := make(chan error), make(chan int, 1)
		mu.Lock()
		gates[attempt] = g
		mu.Unlock()
		go func() { code <- post(h, "/hook", `{"id":"d1","attempt":"`+attempt+`"}`).Code }()
		if got := <-entered; got != attempt {
			t.Errorf("Deliver entered by %s, want %s", got, attempt)
		}
		return g, code
	}
	firstGate, firstCode := send("first")
	clk.Advance(31 * time.Second) // the first's lease lapses
	secondGate, secondCode := send("second")
	firstGate <- errors.New("database down")
	if code := <-firstCode; code != http.StatusInternalServerError {
		t.Fatalf("first: %d, want 500", code)
	}
	if rec := post(h, "/hook", `{"id":"d1","attempt":"third"}`); rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("while the second holds the claim: %d, want 503 (the first's release freed it)", rec.Code)
	}
	secondGate <- nil
	if code := <-secondCode; code != http.StatusNoContent {
		t.Fatalf("second: %d", code)
	}
	if rec := post(h, "/hook", `{"id":"d1","attempt":"fourth"}`); rec.Code != http.StatusNoContent {
		t.Fatalf("after the second: %d, want 204 without Deliver", rec.Code)
	}

	// A late success of a lapsed claim does not settle the next holder's.
	ctx := context.Background()
	if st, _ := store.ClaimFor(ctx, "k", "a", time.Second); st != events.DedupNew {
		t.Fatalf("claim a: %v", st)
	}
	clk.Advance(2 * time.Second)
	if st, _ := store.ClaimFor(ctx, "k", "b", time.Minute); st != events.DedupNew {
		t.Fatalf("claim b after a's lease: %v", st)
	}
	store.DoneFor(ctx, "k", "a", time.Hour)
	store.ReleaseFor(ctx, "k", "a")
	if st, _ := store.ClaimFor(ctx, "k", "c", time.Minute); st != events.DedupInProgress {
		t.Fatalf("after a settled late: %v, want b's claim in progress", st)
	}
	store.DoneFor(ctx, "k", "b", time.Hour)
	store.ReleaseFor(ctx, "k", "b") // a done entry is not b's claim any more
	if st, _ := store.ClaimFor(ctx, "k", "c", time.Minute); st != events.DedupDone {
		t.Fatalf("after b settled: %v, want done", st)
	}

	// The plain interface still guards.
	calls := 0
	plain := &events.Handler{Insecure: true, Dedup: &events.Dedup{Store: plainStore{events.NewMemoryDedupStore(10, nil)}},
		Deliver: func(context.Context, *events.Delivery) error { calls++; return nil }}
	post(plain, "/hook", `{"stage":"won"}`)
	post(plain, "/hook", `{"stage":"won"}`)
	if calls != 1 {
		t.Fatalf("plain store: %d calls, want 1", calls)
	}
}
