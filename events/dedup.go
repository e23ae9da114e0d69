package events

import (
	"container/list"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Defaults of Dedup and NewMemoryDedupStore.
const (
	// DefaultDedupRetryWindow is how long a handled delivery is
	// remembered when Dedup.Window is zero, and at most when it is keyed
	// by its body. It is just longer than a delivery's retries: the fake
	// (fake.DeliveryPolicy's defaults) makes 5 attempts of at most 10 s
	// each, at most 30 s apart, so its last retry comes within 3 minutes
	// of the first attempt; the deployed service does not publish its
	// schedule. An identical body arriving after the window is handled
	// as a new event.
	DefaultDedupRetryWindow = 10 * time.Minute
	// DefaultDedupWindow is a day.
	//
	// Deprecated: a day is far longer than a delivery's retries, and a
	// body sent again for a new change inside it (won, lost, won again)
	// would be taken for a retry. Dedup's default window is
	// DefaultDedupRetryWindow; a longer Window applies only to
	// deliveries keyed by Field or Key.
	DefaultDedupWindow = 24 * time.Hour
	// DefaultDedupLease is how long a delivery being handled is held
	// when Dedup.Lease is zero.
	DefaultDedupLease = 5 * time.Minute
	// DefaultDedupEntries is the number of keys the in-memory store
	// keeps when NewMemoryDedupStore is given zero.
	DefaultDedupEntries = 100_000
)

// Dedup is a Handler's duplicate guard: deliveries that may come more than
// once (after a 5xx, or an answer the service did not get) reach Deliver
// once inside a window.
//
// Two deliveries are one delivery when they come to the same subscriber
// (the path less its secret, by the rule Routes uses) inside the window
// and carry the same identity: what Key returns for them, or the member
// Field names; without either (or when it is empty), the same body. A
// body says what an object is, not which change made it so: the deployed
// service's deliveries are the object's fields and nothing else, so an
// opportunity that goes won, lost, won sends the same body twice, and a
// guard cannot tell that second "won" from a retry of the first. So a
// delivery keyed by its body is remembered for at most
// DefaultDedupRetryWindow (10 minutes), just longer than a delivery's
// retries, whatever Window says: an identical body arriving later is
// handled. A receiver whose bodies carry what identifies a change (a
// version, a modified time, an id) names it with Field or Key, and may
// then set a longer Window.
//
// Before Deliver runs, the key is claimed in Store for Lease; when Deliver
// returns nil it is marked done for the window; when Deliver fails (or
// panics), the claim is released, so that the service's retry is
// delivered. A delivery whose key is
//
//   - done: is answered 204 without calling Deliver;
//   - being handled (claimed by another request, on this receiver or,
//     with a shared Store, another one): is answered 503 with
//     Retry-After, so that the service tries again once the first
//     attempt ended; a claim that is never settled (the receiver
//     crashed) lapses after Lease.
//
// With a Store that implements DedupHolderStore, each claim carries a
// token of its own, so a receiver whose claim lapsed (Deliver took longer
// than Lease) and was taken by another neither frees nor settles the
// other's claim.
//
// When Store fails (an error, or a panic, which is taken for an error),
// the failure is logged and the delivery passed to Deliver: a duplicate
// is less harm than a lost delivery. With RefuseWhenStoreFails, a
// delivery whose key cannot be claimed is answered 503 instead.
// docs/reliability.md says what this protects against and what not.
//
// A Dedup is used through a pointer and must not be copied after first use.
type Dedup struct {
	// Window is how long a handled delivery keyed by Field or Key is
	// remembered (default DefaultDedupRetryWindow). A delivery keyed by
	// its body is remembered for the shorter of Window and
	// DefaultDedupRetryWindow.
	Window time.Duration
	// Lease is how long a delivery being handled keeps others with its
	// key away (default DefaultDedupLease). Make it longer than Deliver
	// takes.
	Lease time.Duration
	// Field, when set, names the member of the body that identifies a
	// delivery, such as "delivery_id" or a version. A delivery without
	// it, or with it empty, is keyed by its body.
	Field string
	// Key, when set, returns what identifies a delivery, for bodies where
	// one member is not enough (an object id and its modified time, say);
	// it is used instead of Field. A delivery it returns "" for is keyed
	// by its body.
	Key func(d *Delivery) string
	// Store remembers the keys; nil means an in-memory store of
	// DefaultDedupEntries keys, made on first use. Receivers behind a
	// load balancer share one (DedupStore; package
	// events/redisdedup has one on Redis).
	Store DedupStore
	// RefuseWhenStoreFails, when set, answers a delivery whose key Store
	// fails to claim 503 Service Unavailable with Retry-After (30 s),
	// without calling Deliver, instead of passing it on: for work that
	// must not run twice. The service sends it again later; a delivery
	// whose retries run out while the store is down is lost. A failure
	// to mark a delivery done or to release it, after Deliver, is
	// logged either way.
	RefuseWhenStoreFails bool

	once  sync.Once
	store DedupStore
}

// DedupState is what a DedupStore knows of a key.
type DedupState int

// States of a key.
const (
	// DedupNew is a key the store did not hold: the caller has claimed it.
	DedupNew DedupState = iota
	// DedupInProgress is a key another caller has claimed and not settled.
	DedupInProgress
	// DedupDone is a key whose delivery was handled.
	DedupDone
)

// DedupStore remembers delivery keys for Dedup. Keys are hex SHA-256
// hashes (64 characters). It must be safe for concurrent use. Over a
// shared cache, Claim is an atomic "set if absent with a time to live"
// (falling back to a read of the value when the key is present), Done a
// set with a time to live, and Release a delete. A shared store should
// also implement DedupHolderStore.
type DedupStore interface {
	// Claim holds key for lease when no entry holds it, returning
	// DedupNew; otherwise it returns the entry's state and changes
	// nothing.
	Claim(ctx context.Context, key string, lease time.Duration) (DedupState, error)
	// Done marks key handled, remembered for window.
	Done(ctx context.Context, key string, window time.Duration) error
	// Release forgets key, whose delivery failed.
	Release(ctx context.Context, key string) error
}

// DedupHolderStore is a DedupStore whose claims remember their holder, a
// token the caller makes for each claim, so that Done and Release act
// only on the caller's own claim. Dedup uses these methods when its
// Store has them: a receiver whose claim lapsed and was taken by another
// then leaves the other's claim alone. Over a shared cache, each is one
// atomic step (a script that compares the holder and acts).
type DedupHolderStore interface {
	DedupStore
	// ClaimFor is Claim on behalf of holder.
	ClaimFor(ctx context.Context, key, holder string, lease time.Duration) (DedupState, error)
	// DoneFor marks key handled, remembered for window, when holder's
	// claim holds it or no entry does; it changes nothing when another
	// holder's claim or a done entry holds it.
	DoneFor(ctx context.Context, key, holder string, window time.Duration) error
	// ReleaseFor forgets key when holder's claim holds it, and changes
	// nothing otherwise.
	ReleaseFor(ctx context.Context, key, holder string) error
}

func (g *Dedup) storeOf() DedupStore {
	g.once.Do(func() {
		g.store = g.Store
		if g.store == nil {
			g.store = NewMemoryDedupStore(0, nil)
		}
	})
	return g.store
}

// key returns the delivery's key, a hash of the subscriber's path (sub)
// and its identity or body, and how long it is remembered once handled.
func (g *Dedup) key(sub string, d *Delivery) (string, time.Duration) {
	id := ""
	switch {
	case g.Key != nil:
		id = g.Key(d)
	case g.Field != "":
		id = d.Fields[g.Field]
	}
	window := orDefault(g.Window, DefaultDedupRetryWindow)
	h := sha256.New()
	h.Write([]byte(strconv.Itoa(len(sub))))
	h.Write([]byte{':'})
	h.Write([]byte(sub))
	if id != "" {
		h.Write([]byte("id:"))
		h.Write([]byte(id))
	} else {
		h.Write([]byte("body:"))
		h.Write(d.Raw)
		window = min(window, DefaultDedupRetryWindow)
	}
	return hex.EncodeToString(h.Sum(nil)), window
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// dedupClaim is one claim of a key: through DedupHolderStore's methods,
// with a token of its own, when the store has them.
type dedupClaim struct {
	store  DedupStore
	held   DedupHolderStore // nil: the plain methods
	key    string
	holder string
}

func newDedupClaim(store DedupStore, key string) *dedupClaim {
	c := &dedupClaim{store: store, key: key}
	if hs, ok := store.(DedupHolderStore); ok {
		c.held, c.holder = hs, rand.Text()
	}
	return c
}

func (c *dedupClaim) claim(ctx context.Context, lease time.Duration) (st DedupState, err error) {
	defer storePanic("claim", &err)
	if c.held != nil {
		return c.held.ClaimFor(ctx, c.key, c.holder, lease)
	}
	return c.store.Claim(ctx, c.key, lease)
}

func (c *dedupClaim) done(ctx context.Context, window time.Duration) (err error) {
	defer storePanic("done", &err)
	if c.held != nil {
		return c.held.DoneFor(ctx, c.key, c.holder, window)
	}
	return c.store.Done(ctx, c.key, window)
}

func (c *dedupClaim) release(ctx context.Context) (err error) {
	defer storePanic("release", &err)
	if c.held != nil {
		return c.held.ReleaseFor(ctx, c.key, c.holder)
	}
	return c.store.Release(ctx, c.key)
}

// storePanic, deferred, turns a panic of a DedupStore's op into *err,
// which the down-store rule handles.
func storePanic(op string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("partner: events: duplicate guard store panicked in %s: %v", op, r)
	}
}

// dedupStoreRetryAfter is the Retry-After of a delivery refused while the
// store fails (Dedup.RefuseWhenStoreFails).
const dedupStoreRetryAfter = 30 * time.Second

// serveOnce calls Deliver unless Dedup knows the delivery, and answers.
// sub is the subscriber's part of the path.
func (h *Handler) serveOnce(w http.ResponseWriter, r *http.Request, sub string, d *Delivery) {
	g := h.Dedup
	key, window := g.key(sub, d)
	c := newDedupClaim(g.storeOf(), key)
	lease := orDefault(g.Lease, DefaultDedupLease)
	ctx := r.Context()
	state, err := c.claim(ctx, lease)
	if err != nil {
		h.logDedup(r, "claim", err)
		if g.RefuseWhenStoreFails {
			w.Header().Set("Retry-After", strconv.Itoa(int(dedupStoreRetryAfter/time.Second)))
			h.fail(r, w, http.StatusServiceUnavailable, "duplicate guard unavailable", nil)
			return
		}
		h.answer(w, r, h.Deliver(ctx, d))
		return
	}
	switch state {
	case DedupDone:
		w.WriteHeader(http.StatusNoContent)
		return
	case DedupInProgress:
		w.Header().Set("Retry-After", strconv.Itoa(int((lease+time.Second-1)/time.Second)))
		h.fail(r, w, http.StatusServiceUnavailable, "delivery being handled", nil)
		return
	}
	settled := false
	defer func() {
		if !settled {
			// Deliver panicked: the retry must be delivered.
			c.release(context.WithoutCancel(ctx))
		}
	}()
	err = h.Deliver(ctx, d)
	settled = true
	// The request's context may be over; the store must hear anyway.
	sctx := context.WithoutCancel(ctx)
	if err != nil {
		if rerr := c.release(sctx); rerr != nil {
			h.logDedup(r, "release", rerr)
		}
	} else if derr := c.done(sctx, window); derr != nil {
		h.logDedup(r, "done", derr)
	}
	h.answer(w, r, err)
}

func (h *Handler) logDedup(r *http.Request, op string, err error) {
	if h.Logger != nil {
		h.Logger.LogAttrs(r.Context(), slog.LevelWarn, "partner: events: duplicate guard store failed",
			slog.String("op", op), slog.String("error", err.Error()))
	}
}

// MemoryDedupStore is the in-memory DedupStore (and DedupHolderStore): it
// holds at most a set number of keys, each in a fixed size (about 200
// bytes), so its memory is bounded; when full, it forgets the oldest key
// first. It serves one process: receivers behind a load balancer need a
// shared store.
type MemoryDedupStore struct {
	now func() time.Time
	max int

	mu    sync.Mutex
	keys  map[[sha256.Size]byte]*list.Element
	order *list.List // of *dedupEntry, oldest first
}

type dedupEntry struct {
	key     [sha256.Size]byte
	holder  [sha256.Size]byte // of a claim
	state   DedupState
	expires time.Time
}

// NewMemoryDedupStore returns an in-memory store of at most maxEntries
// keys (DefaultDedupEntries when maxEntries <= 0). now is its clock (nil:
// time.Now).
func NewMemoryDedupStore(maxEntries int, now func() time.Time) *MemoryDedupStore {
	if maxEntries <= 0 {
		maxEntries = DefaultDedupEntries
	}
	if now == nil {
		now = time.Now
	}
	return &MemoryDedupStore{now: now, max: maxEntries, keys: map[[sha256.Size]byte]*list.Element{}, order: list.New()}
}

// memKey folds any key (or holder) to a fixed size.
func memKey(key string) [sha256.Size]byte { return sha256.Sum256([]byte(key)) }

// Claim implements DedupStore: ClaimFor with an empty holder.
func (s *MemoryDedupStore) Claim(ctx context.Context, key string, lease time.Duration) (DedupState, error) {
	return s.ClaimFor(ctx, key, "", lease)
}

// ClaimFor implements DedupHolderStore.
func (s *MemoryDedupStore) ClaimFor(_ context.Context, key, holder string, lease time.Duration) (DedupState, error) {
	k, hk, now := memKey(key), memKey(holder), s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.live(k, now); e != nil {
		return e.state, nil
	}
	s.put(k, hk, DedupInProgress, now.Add(lease))
	return DedupNew, nil
}

// Done implements DedupStore.
func (s *MemoryDedupStore) Done(_ context.Context, key string, window time.Duration) error {
	k, now := memKey(key), s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(k, [sha256.Size]byte{}, DedupDone, now.Add(window))
	return nil
}

// DoneFor implements DedupHolderStore.
func (s *MemoryDedupStore) DoneFor(_ context.Context, key, holder string, window time.Duration) error {
	k, hk, now := memKey(key), memKey(holder), s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.live(k, now); e != nil && (e.state == DedupDone || e.holder != hk) {
		return nil
	}
	s.put(k, [sha256.Size]byte{}, DedupDone, now.Add(window))
	return nil
}

// Release implements DedupStore.
func (s *MemoryDedupStore) Release(_ context.Context, key string) error {
	k := memKey(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.keys[k]; ok {
		s.remove(el)
	}
	return nil
}

// ReleaseFor implements DedupHolderStore.
func (s *MemoryDedupStore) ReleaseFor(_ context.Context, key, holder string) error {
	k, hk, now := memKey(key), memKey(holder), s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.live(k, now); e != nil && e.state == DedupInProgress && e.holder == hk {
		s.remove(s.keys[k])
	}
	return nil
}

// Len returns the number of keys held, expired ones included until they
// are looked up or pushed out.
func (s *MemoryDedupStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len()
}

// live returns the unexpired entry of k, forgetting an expired one.
func (s *MemoryDedupStore) live(k [sha256.Size]byte, now time.Time) *dedupEntry {
	el, ok := s.keys[k]
	if !ok {
		return nil
	}
	if e := el.Value.(*dedupEntry); now.Before(e.expires) {
		return e
	}
	s.remove(el)
	return nil
}

// put sets the entry of k, as the newest.
func (s *MemoryDedupStore) put(k, holder [sha256.Size]byte, state DedupState, expires time.Time) {
	if el, ok := s.keys[k]; ok {
		s.remove(el)
	}
	for s.order.Len() >= s.max {
		s.remove(s.order.Front())
	}
	s.keys[k] = s.order.PushBack(&dedupEntry{key: k, holder: holder, state: state, expires: expires})
}

func (s *MemoryDedupStore) remove(el *list.Element) {
	delete(s.keys, el.Value.(*dedupEntry).key)
	s.order.Remove(el)
}
