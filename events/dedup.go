package events

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of Dedup and NewMemoryDedupStore.
const (
	// DefaultDedupWindow is how long a handled delivery is remembered
	// when Dedup.Window is zero.
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
// Each delivery gets a key: by default a SHA-256 hash of the subscriber's
// path (without the secret) and the body; with Field, the subscriber's
// path and that member of the body, for deliveries that carry an id (a
// delivery without the member falls back to the hash). Before Deliver
// runs, the key is claimed in Store for Lease; when Deliver returns nil it
// is marked done for Window; when Deliver fails (or panics), the claim is
// released, so that the service's retry is delivered. A delivery whose key
// is
//
//   - done: is answered 204 without calling Deliver;
//   - being handled (claimed by another request, on this receiver or,
//     with a shared Store, another one): is answered 503 with
//     Retry-After, so that the service tries again once the first
//     attempt ended; a claim that is never settled (the receiver
//     crashed) lapses after Lease.
//
// When Store fails, the delivery is passed to Deliver and the failure
// logged: a duplicate is less harm than a lost delivery.
// docs/reliability.md says what this protects against and what not.
//
// A Dedup is used through a pointer and must not be copied after first use.
type Dedup struct {
	// Window is how long a handled delivery is remembered (default
	// DefaultDedupWindow).
	Window time.Duration
	// Lease is how long a delivery being handled keeps others with its
	// key away (default DefaultDedupLease). Make it longer than Deliver
	// takes.
	Lease time.Duration
	// Field, when set, names the member of the body that identifies a
	// delivery, such as "delivery_id".
	Field string
	// Store remembers the keys; nil means an in-memory store of
	// DefaultDedupEntries keys, made on first use. Receivers behind a
	// load balancer share one (DedupStore).
	Store DedupStore

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
// set with a time to live, and Release a delete.
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

func (g *Dedup) storeOf() DedupStore {
	g.once.Do(func() {
		g.store = g.Store
		if g.store == nil {
			g.store = NewMemoryDedupStore(0, nil)
		}
	})
	return g.store
}

// key returns the delivery's key: a hash of the subscriber's path and
// either the Field member or the body.
func (g *Dedup) key(r *http.Request, d *Delivery, secrets bool) string {
	path := r.URL.Path
	if secrets {
		// The secret changes when it is rotated; the subscriber does not.
		path = path[:strings.LastIndexByte(path, '/')+1]
	}
	h := sha256.New()
	h.Write([]byte(strconv.Itoa(len(path))))
	h.Write([]byte{':'})
	h.Write([]byte(path))
	if v, ok := d.Fields[g.Field]; g.Field != "" && ok && v != "" {
		h.Write([]byte("field:"))
		h.Write([]byte(v))
	} else {
		h.Write([]byte("body:"))
		h.Write(d.Raw)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// serveOnce calls Deliver unless Dedup knows the delivery, and answers.
func (h *Handler) serveOnce(w http.ResponseWriter, r *http.Request, d *Delivery) {
	g := h.Dedup
	store := g.storeOf()
	key := g.key(r, d, h.Secrets != nil)
	lease := orDefault(g.Lease, DefaultDedupLease)
	ctx := r.Context()
	state, err := store.Claim(ctx, key, lease)
	if err != nil {
		h.logDedup(r, "claim", err)
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
			store.Release(context.WithoutCancel(ctx), key)
		}
	}()
	err = h.Deliver(ctx, d)
	settled = true
	// The request's context may be over; the store must hear anyway.
	sctx := context.WithoutCancel(ctx)
	if err != nil {
		if rerr := store.Release(sctx, key); rerr != nil {
			h.logDedup(r, "release", rerr)
		}
	} else if derr := store.Done(sctx, key, orDefault(g.Window, DefaultDedupWindow)); derr != nil {
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

// MemoryDedupStore is the in-memory DedupStore: it holds at most a set
// number of keys, each in a fixed size (about 150 bytes), so its memory
// is bounded; when full, it forgets the oldest key first. It serves one
// process: receivers behind a load balancer need a shared store.
type MemoryDedupStore struct {
	now func() time.Time
	max int

	mu    sync.Mutex
	keys  map[[sha256.Size]byte]*list.Element
	order *list.List // of *dedupEntry, oldest first
}

type dedupEntry struct {
	key     [sha256.Size]byte
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

// memKey folds any key to a fixed size.
func memKey(key string) [sha256.Size]byte { return sha256.Sum256([]byte(key)) }

// Claim implements DedupStore.
func (s *MemoryDedupStore) Claim(_ context.Context, key string, lease time.Duration) (DedupState, error) {
	k, now := memKey(key), s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.keys[k]; ok {
		e := el.Value.(*dedupEntry)
		if now.Before(e.expires) {
			return e.state, nil
		}
		s.remove(el)
	}
	s.put(k, DedupInProgress, now.Add(lease))
	return DedupNew, nil
}

// Done implements DedupStore.
func (s *MemoryDedupStore) Done(_ context.Context, key string, window time.Duration) error {
	k, now := memKey(key), s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.keys[k]; ok {
		s.remove(el)
	}
	s.put(k, DedupDone, now.Add(window))
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

// Len returns the number of keys held, expired ones included until they
// are looked up or pushed out.
func (s *MemoryDedupStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len()
}

func (s *MemoryDedupStore) put(k [sha256.Size]byte, state DedupState, expires time.Time) {
	for s.order.Len() >= s.max {
		s.remove(s.order.Front())
	}
	s.keys[k] = s.order.PushBack(&dedupEntry{key: k, state: state, expires: expires})
}

func (s *MemoryDedupStore) remove(el *list.Element) {
	delete(s.keys, el.Value.(*dedupEntry).key)
	s.order.Remove(el)
}
