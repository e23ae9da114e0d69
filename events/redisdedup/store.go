// Package redisdedup is an events.DedupStore on Redis, for webhook
// receivers that run as several replicas behind a load balancer: they
// share one Store, so a delivery that reaches two replicas (a retry that
// lands on another one, or the same delivery sent to both) reaches
// Deliver once across the group.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "cache.internal:6379"})
//	h := &events.Handler{
//		Secrets: secrets,
//		Dedup:   &events.Dedup{Store: redisdedup.New(rdb, redisdedup.WithPrefix("crm-sync:dedup:"))},
//		Deliver: deliver,
//	}
//
// Each delivery key is one Redis string under the Store's prefix: while a
// delivery is being handled, "c:" and its holder's token, expiring after
// Dedup.Lease; once handled, "d", expiring after the window. A claim is
// one SET NX PX with a read of the value when the key is held; marking
// done and releasing are short Lua scripts that compare the holder's
// token and act in one step, so a replica whose lease lapsed (it crashed,
// or Deliver outlived Lease) neither frees nor settles the claim another
// replica took since. Each operation touches one key, so a Redis Cluster
// client works as well as a single server's.
//
// When Redis cannot be reached, Dedup passes the delivery on to Deliver
// and logs the failure (a duplicate is less harm than a loss), or answers
// it 503 with Dedup.RefuseWhenStoreFails, and guards again as soon as
// Redis answers. A reply the client panics on (a bulk length no process
// can allocate) is an error like any other, never a crash. Redis only remembers: a restart without
// persistence forgets the window's deliveries, so a retry after it may be
// handled again, and never loses one.
//
// This package and its test helper redistest (a throwaway redis-server
// for a test) are the only ones of the module that import the Redis
// client: a program that does not import them links none of it.
package redisdedup

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/partnerapi/partner-go/events"
)

// DefaultPrefix is the prefix of a Store's keys when WithPrefix is not
// given.
const DefaultPrefix = "partner:dedup:"

// Store is an events.DedupStore (and events.DedupHolderStore) on Redis. It
// is safe for concurrent use; replicas that share its prefix and server
// share its memory.
//
// Every operation returns when its context is done, whether or not the
// client bounds its commands by the context (redis.Options'
// ContextTimeoutEnabled): a command already sent then runs on to its end
// within the client's own timeouts, and may take effect; a claim that
// does is released again, so it keeps no delivery away for its lease.
type Store struct {
	client redis.UniversalClient
	prefix string
}

var _ events.DedupHolderStore = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithPrefix sets the prefix of the Store's keys (default DefaultPrefix):
// receivers that must not see each other's deliveries (another
// subscriber set, another environment on the same server) use prefixes of
// their own.
func WithPrefix(prefix string) Option { return func(s *Store) { s.prefix = prefix } }

// New returns a Store over client, which the caller keeps and closes.
func New(client redis.UniversalClient, opts ...Option) *Store {
	s := &Store{client: client, prefix: DefaultPrefix}
	for _, o := range opts {
		o(s)
	}
	return s
}

// States as the scripts return them.
const (
	stNew, stInProgress, stDone = 0, 1, 2
)

var (
	// claimScript: KEYS[1] the key; ARGV[1] the claim's value, ARGV[2]
	// the lease in milliseconds.
	claimScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
if redis.call('GET', KEYS[1]) == 'd' then return 2 end
return 1`)
	// doneScript: KEYS[1] the key; ARGV[1] the holder's claim value,
	// ARGV[2] the window in milliseconds. Marks done unless another's
	// claim or a done entry holds the key.
	doneScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], 'd', 'PX', ARGV[2])
return 1`)
	// releaseScript: KEYS[1] the key; ARGV[1] the holder's claim value.
	releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)
)

// claimValue is what a key holds while holder's claim does.
func claimValue(holder string) string { return "c:" + holder }

// millis is d in whole milliseconds, at least 1, or an error for a d
// that is not positive.
func millis(what string, d time.Duration) (int64, error) {
	if d <= 0 {
		return 0, fmt.Errorf("partner: redisdedup: %s %v is not positive", what, d)
	}
	return max(d.Milliseconds(), 1), nil
}

// Claim implements events.DedupStore: ClaimFor with a token of its own,
// which no caller knows, so only Release and Done free the claim before
// its lease lapses.
func (s *Store) Claim(ctx context.Context, key string, lease time.Duration) (events.DedupState, error) {
	return s.ClaimFor(ctx, key, rand.Text(), lease)
}

// ClaimFor implements events.DedupHolderStore: one atomic step that sets
// key to holder's claim for lease when it is absent, and otherwise reads
// its state.
func (s *Store) ClaimFor(ctx context.Context, key, holder string, lease time.Duration) (events.DedupState, error) {
	ms, err := millis("lease", lease)
	if err != nil {
		return 0, err
	}
	k, v := s.prefix+key, claimValue(holder)
	n, err := do(ctx, func(ctx context.Context) (int64, error) {
		return claimScript.Run(ctx, s.client, []string{k}, v, ms).Int64()
	}, func(n int64, err error) {
		if err == nil && n == stNew {
			// The caller gave up before the claim was made: free it.
			releaseScript.Run(context.WithoutCancel(ctx), s.client, []string{k}, v)
		}
	})
	if err != nil {
		return 0, fmt.Errorf("partner: redisdedup: claim: %w", err)
	}
	switch n {
	case stNew:
		return events.DedupNew, nil
	case stInProgress:
		return events.DedupInProgress, nil
	case stDone:
		return events.DedupDone, nil
	}
	return 0, fmt.Errorf("partner: redisdedup: claim: unexpected answer %d", n)
}

// Done implements events.DedupStore: it marks key handled for window,
// whoever holds it.
func (s *Store) Done(ctx context.Context, key string, window time.Duration) error {
	ms, err := millis("window", window)
	if err != nil {
		return err
	}
	_, err = do(ctx, func(ctx context.Context) (int64, error) {
		return 0, s.client.Set(ctx, s.prefix+key, "d", time.Duration(ms)*time.Millisecond).Err()
	}, nil)
	if err != nil {
		return fmt.Errorf("partner: redisdedup: done: %w", err)
	}
	return nil
}

// DoneFor implements events.DedupHolderStore.
func (s *Store) DoneFor(ctx context.Context, key, holder string, window time.Duration) error {
	ms, err := millis("window", window)
	if err != nil {
		return err
	}
	k, v := s.prefix+key, claimValue(holder)
	_, err = do(ctx, func(ctx context.Context) (int64, error) {
		return doneScript.Run(ctx, s.client, []string{k}, v, ms).Int64()
	}, nil)
	if err != nil {
		return fmt.Errorf("partner: redisdedup: done: %w", err)
	}
	return nil
}

// Release implements events.DedupStore: it forgets key, whoever holds it.
func (s *Store) Release(ctx context.Context, key string) error {
	_, err := do(ctx, func(ctx context.Context) (int64, error) {
		return s.client.Del(ctx, s.prefix+key).Result()
	}, nil)
	if err != nil {
		return fmt.Errorf("partner: redisdedup: release: %w", err)
	}
	return nil
}

// ReleaseFor implements events.DedupHolderStore.
func (s *Store) ReleaseFor(ctx context.Context, key, holder string) error {
	k, v := s.prefix+key, claimValue(holder)
	_, err := do(ctx, func(ctx context.Context) (int64, error) {
		return releaseScript.Run(ctx, s.client, []string{k}, v).Int64()
	}, nil)
	if err != nil {
		return fmt.Errorf("partner: redisdedup: release: %w", err)
	}
	return nil
}

// do runs op and returns its outcome, or ctx's error as soon as ctx is
// done. op runs with ctx's values but not its end, so that a command it
// sent is not cut off half way; when ctx ends first, op runs on and
// abandoned, when set, is called with its outcome. A panic of op (the
// Redis client's, on a reply it cannot read) is its outcome's error.
func do(ctx context.Context, op func(context.Context) (int64, error), abandoned func(int64, error)) (int64, error) {
	op = safe(op)
	if ctx.Done() == nil {
		return op(ctx)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	type outcome struct {
		n   int64
		err error
	}
	var (
		mu   sync.Mutex
		gone bool
		ch   = make(chan outcome, 1)
	)
	go func() {
		n, err := op(context.WithoutCancel(ctx))
		mu.Lock()
		if !gone {
			ch <- outcome{n, err}
			mu.Unlock()
			return
		}
		mu.Unlock()
		if abandoned != nil {
			safe(func(context.Context) (int64, error) { abandoned(n, err); return 0, nil })(ctx)
		}
	}()
	select {
	case o := <-ch:
		return o.n, o.err
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	select {
	case o := <-ch:
		return o.n, o.err
	default:
		gone = true
		return 0, ctx.Err()
	}
}

// safe returns op with a panic turned into an error: the client panics
// on some replies it cannot read (a bulk length larger than memory), and
// a panic in the goroutine of do would end the process.
func safe(op func(context.Context) (int64, error)) func(context.Context) (int64, error) {
	return func(ctx context.Context) (n int64, err error) {
		defer func() {
			if r := recover(); r != nil {
				n, err = 0, fmt.Errorf("the Redis client panicked: %v", r)
			}
		}()
		return op(ctx)
	}
}
