package redisdedup_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/events/redisdedup"
	"github.com/partnerapi/partner-go/events/redisdedup/redistest"
)

func post(h http.Handler, body string) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body)))
	return rec.Code
}

// counter counts Deliver's calls per body member "n".
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) deliver(_ context.Context, d *events.Delivery) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[d.Fields["n"]]++
	return nil
}

func (c *counter) get(n string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[n]
}

// syncBuffer is a log destination for concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// keys returns the keys under prefix.
func keys(t *testing.T, c *redis.Client, prefix string) []string {
	t.Helper()
	ks, err := c.Keys(context.Background(), prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// TestRedisStoreStates: the store's claim, done and release on a real
// server: a claim holds the key for its lease, done for its window, a
// release by its holder frees it, and every key is under the prefix, so
// stores of two prefixes do not see each other. Bad durations are
// refused before anything is sent.
func TestRedisStoreStates(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client()
	ctx := context.Background()
	a := redisdedup.New(srv.Client(), redisdedup.WithPrefix("app-a:"))
	b := redisdedup.New(srv.Client(), redisdedup.WithPrefix("app-b:"))
	step := func(what string, got events.DedupState, err error, want events.DedupState) {
		t.Helper()
		if err != nil || got != want {
			t.Fatalf("%s: %v %v, want %v", what, got, err, want)
		}
	}
	st, err := a.ClaimFor(ctx, "k1", "h1", time.Minute)
	step("first claim", st, err, events.DedupNew)
	st, err = a.ClaimFor(ctx, "k1", "h2", time.Minute)
	step("second claim", st, err, events.DedupInProgress)
	st, err = b.ClaimFor(ctx, "k1", "h3", time.Minute)
	step("another prefix", st, err, events.DedupNew)
	if err := a.ReleaseFor(ctx, "k1", "h2"); err != nil {
		t.Fatal(err)
	}
	st, err = a.ClaimFor(ctx, "k1", "h2", time.Minute)
	step("after another holder's release", st, err, events.DedupInProgress)
	if err := a.ReleaseFor(ctx, "k1", "h1"); err != nil {
		t.Fatal(err)
	}
	st, err = a.ClaimFor(ctx, "k1", "h2", time.Minute)
	step("after the holder's release", st, err, events.DedupNew)
	if err := a.DoneFor(ctx, "k1", "h2", time.Hour); err != nil {
		t.Fatal(err)
	}
	st, err = a.ClaimFor(ctx, "k1", "h1", time.Minute)
	step("after done", st, err, events.DedupDone)
	if ttl := admin.PTTL(ctx, "app-a:k1").Val(); ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("a done key lives %v, want the window (1h)", ttl)
	}

	// The plain interface.
	st, err = a.Claim(ctx, "k2", time.Minute)
	step("plain claim", st, err, events.DedupNew)
	if err := a.Release(ctx, "k2"); err != nil {
		t.Fatal(err)
	}
	st, err = a.Claim(ctx, "k2", time.Minute)
	step("plain claim after release", st, err, events.DedupNew)
	if err := a.Done(ctx, "k2", time.Hour); err != nil {
		t.Fatal(err)
	}
	st, err = a.Claim(ctx, "k2", time.Minute)
	step("plain claim after done", st, err, events.DedupDone)

	for _, k := range keys(t, admin, "") {
		if !strings.HasPrefix(k, "app-a:") && !strings.HasPrefix(k, "app-b:") {
			t.Errorf("key %q outside the prefixes", k)
		}
	}
	if _, err := a.ClaimFor(ctx, "k3", "h", 0); err == nil || !strings.Contains(err.Error(), "lease") {
		t.Errorf("a zero lease: %v", err)
	}
	if err := a.DoneFor(ctx, "k3", "h", -time.Second); err == nil || !strings.Contains(err.Error(), "window") {
		t.Errorf("a negative window: %v", err)
	}
	if n := len(keys(t, admin, "app-a:k3")); n != 0 {
		t.Errorf("a refused call left %d keys", n)
	}
}

// TestRedisReplicasExactlyOnce: two Handlers ("replicas") share one Redis.
// Each of 1,000 deliveries is sent to both at once, as a load balancer
// may after a retry; the one asked to come back (503) sends it again once
// the other answered, and once more after success. Every delivery
// reaches Deliver exactly once across the two.
func TestRedisReplicasExactlyOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var count counter
	replicas := [2]*events.Handler{}
	for i := range replicas {
		replicas[i] = &events.Handler{Insecure: true, Deliver: count.deliver,
			Dedup: &events.Dedup{Store: redisdedup.New(srv.Client(), redisdedup.WithPrefix("replicas:"))}}
	}
	const deliveries, workers = 1000, 8
	var (
		busy   sync.Mutex
		asked  int // 503s
		failed = make(chan string, deliveries)
		next   = make(chan int)
		wg     sync.WaitGroup
	)
	send := func(n int) {
		body := fmt.Sprintf(`{"n":"%d","name":"opp-%d","stage":"won"}`, n, n)
		firstDone := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
		var both sync.WaitGroup
		for i, h := range replicas {
			both.Go(func() {
				code := post(h, body)
				close(firstDone[i])
				for try := 0; code == http.StatusServiceUnavailable && try < 3; try++ {
					busy.Lock()
					asked++
					busy.Unlock()
					<-firstDone[1-i] // the service retries later: after the other answered
					code = post(h, body)
				}
				if code != http.StatusNoContent {
					failed <- fmt.Sprintf("delivery %d on replica %d: %d", n, i, code)
				}
			})
		}
		both.Wait()
		if code := post(replicas[n%2], body); code != http.StatusNoContent {
			failed <- fmt.Sprintf("redelivery %d: %d", n, code)
		}
	}
	for range workers {
		wg.Go(func() {
			for n := range next {
				send(n)
			}
		})
	}
	for n := range deliveries {
		next <- n
	}
	close(next)
	wg.Wait()
	close(failed)
	for f := range failed {
		t.Error(f)
	}
	for n := range deliveries {
		if got := count.get(fmt.Sprint(n)); got != 1 {
			t.Errorf("delivery %d reached Deliver %d times", n, got)
		}
	}
	t.Logf("%d deliveries, %d answered 503 while the other replica handled them", deliveries, asked)
}

// TestRedisReplicaDiesMidDelivery: a replica that took a delivery and
// died (its claim never settled) keeps the retry away for its lease only:
// its claim expires in Redis after the lease, the other replica is asked
// to come back while it holds, and handles the retry once it lapsed.
func TestRedisReplicaDiesMidDelivery(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client()
	const lease = time.Hour // lapsed on purpose below
	entered, dead := make(chan struct{}), make(chan struct{})
	defer close(dead)
	dying := &events.Handler{Insecure: true,
		Dedup: &events.Dedup{Lease: lease, Store: redisdedup.New(srv.Client(), redisdedup.WithPrefix("crash:"))},
		Deliver: func(context.Context, *events.Delivery) error {
			close(entered)
			<-dead // never returns while the test runs: the replica is gone
			return errors.New("gone")
		}}
	var count counter
	survivor := &events.Handler{Insecure: true, Deliver: count.deliver,
		Dedup: &events.Dedup{Lease: lease, Store: redisdedup.New(srv.Client(), redisdedup.WithPrefix("crash:"))}}
	body := `{"n":"1","stage":"won"}`
	go post(dying, body)
	<-entered
	key, claim := claimed(t, admin, "crash:", lease)
	if code := post(survivor, body); code != http.StatusServiceUnavailable || count.get("1") != 0 {
		t.Fatalf("while the dead replica's claim holds: %d, %d calls; want 503 and none", code, count.get("1"))
	}
	if v := admin.Get(context.Background(), key).Val(); v != claim {
		t.Fatalf("after the copy the key holds %q, want the dead replica's claim %q", v, claim)
	}
	lapse(t, admin, key)
	if code := post(survivor, body); code != http.StatusNoContent || count.get("1") != 1 {
		t.Fatalf("the retry after the lease: %d, %d calls; want 204 and 1", code, count.get("1"))
	}
	if code := post(survivor, body); code != http.StatusNoContent || count.get("1") != 1 {
		t.Fatalf("a redelivery after that: %d, %d calls; want 204 and 1", code, count.get("1"))
	}
}

// TestRedisLapsedClaimReleasedLate: a replica whose Deliver outlived its
// lease, and failed, releases only its own claim: the claim another
// replica took since still holds (a third copy is asked to come back),
// and that replica's success is remembered.
func TestRedisLapsedClaimReleasedLate(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client()
	const lease = time.Hour // lapsed on purpose below
	// Each replica's Deliver waits for the test the first time; a second
	// call (a store that let a copy in twice) fails at once, so that the
	// test fails on the status it sees instead of panicking or hanging.
	var slowCalls, nextCalls atomic.Int32
	slowIn, slowOut := make(chan struct{}), make(chan error)
	slow := &events.Handler{Insecure: true,
		Dedup: &events.Dedup{Lease: lease, Store: redisdedup.New(srv.Client(), redisdedup.WithPrefix("late:"))},
		Deliver: func(context.Context, *events.Delivery) error {
			if slowCalls.Add(1) > 1 {
				return errors.New("the slow replica's Deliver called twice")
			}
			close(slowIn)
			return <-slowOut
		}}
	nextIn, nextOut := make(chan struct{}), make(chan error)
	next := &events.Handler{Insecure: true,
		Dedup: &events.Dedup{Lease: time.Minute, Store: redisdedup.New(srv.Client(), redisdedup.WithPrefix("late:"))},
		Deliver: func(context.Context, *events.Delivery) error {
			if nextCalls.Add(1) > 1 {
				return errors.New("the next replica's Deliver called twice")
			}
			close(nextIn)
			return <-nextOut
		}}
	body := `{"n":"1","stage":"won"}`
	slowCode, nextCode := make(chan int, 1), make(chan int, 1)
	go func() { slowCode <- post(slow, body) }()
	<-slowIn
	key, slowClaim := claimed(t, admin, "late:", lease)
	lapse(t, admin, key)
	go func() { nextCode <- post(next, body) }()
	<-nextIn
	slowOut <- errors.New("database down")
	if code := <-slowCode; code != http.StatusInternalServerError {
		t.Fatalf("the slow replica: %d, want 500", code)
	}
	if v := admin.Get(context.Background(), key).Val(); v == slowClaim || !strings.HasPrefix(v, "c:") {
		t.Fatalf("after the slow replica's late release the key holds %q, want the next replica's claim", v)
	}
	if code := post(next, body); code != http.StatusServiceUnavailable {
		t.Fatalf("a copy while the next replica holds the claim: %d, want 503 (the late release freed it)", code)
	}
	nextOut <- nil
	if code := <-nextCode; code != http.StatusNoContent {
		t.Fatalf("the next replica: %d", code)
	}
	if code := post(slow, body); code != http.StatusNoContent {
		t.Fatalf("a redelivery after the next replica's success: %d, want 204", code)
	}
	if ks := keys(t, admin, "late:"); len(ks) != 1 || admin.Get(context.Background(), ks[0]).Val() != "d" {
		t.Fatalf("keys %v, want the one, done", ks)
	}
}

// TestRedisDown: with Redis stopped, deliveries are passed on to Deliver
// and each store failure is logged (a duplicate is less harm than a
// loss); when Redis is back on the same address, the guard works again
// without a restart of the receiver.
func TestRedisDown(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client() // fails fast while the server is stopped
	var count counter
	var logs syncBuffer
	h := &events.Handler{Insecure: true, Deliver: count.deliver, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Dedup: &events.Dedup{Store: redisdedup.New(client)}}
	if code := post(h, `{"n":"before"}`); code != http.StatusNoContent {
		t.Fatalf("before: %d", code)
	}
	srv.Stop()
	for _, n := range []string{"before", "down", "down"} {
		if code := post(h, `{"n":"`+n+`"}`); code != http.StatusNoContent {
			t.Fatalf("%s while Redis is down: %d, want 204", n, code)
		}
	}
	if count.get("before") != 2 || count.get("down") != 2 {
		t.Fatalf("while down: before %d, down %d calls; want each passed on (2, 2)", count.get("before"), count.get("down"))
	}
	if l := logs.String(); strings.Count(l, "duplicate guard store failed") < 3 || !strings.Contains(l, "op=claim") {
		t.Fatalf("the failures are not logged:\n%s", l)
	}

	srv.Restart()
	waitFor(t, "the client to reach Redis again", func() bool { return client.Ping(context.Background()).Err() == nil })
	for range 3 {
		if code := post(h, `{"n":"after"}`); code != http.StatusNoContent {
			t.Fatalf("after: %d", code)
		}
	}
	if got := count.get("after"); got != 1 {
		t.Fatalf("after Redis came back: %d calls, want 1", got)
	}
}

// TestRedisRestart: a Redis restart (persistence off) forgets the
// window's deliveries, so a retry of one handled before it is handled
// again, and loses none: a delivery handled across the restart is
// remembered once done, and every delivery reaches Deliver.
func TestRedisRestart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client()
	var count counter
	inflight, release := make(chan struct{}), make(chan struct{})
	deliver := func(ctx context.Context, d *events.Delivery) error {
		if d.Fields["n"] == "inflight" {
			close(inflight)
			<-release
		}
		return count.deliver(ctx, d)
	}
	h := &events.Handler{Insecure: true, Deliver: deliver, Dedup: &events.Dedup{Store: redisdedup.New(client)}}
	for i := range 20 {
		post(h, fmt.Sprintf(`{"n":"a%d"}`, i))
	}
	code := make(chan int, 1)
	go func() { code <- post(h, `{"n":"inflight"}`) }()
	<-inflight

	srv.Restart()
	waitFor(t, "the client to reach Redis again", func() bool { return client.Ping(context.Background()).Err() == nil })
	close(release)
	if c := <-code; c != http.StatusNoContent {
		t.Fatalf("the delivery in flight across the restart: %d", c)
	}
	for i := range 20 {
		post(h, fmt.Sprintf(`{"n":"a%d"}`, i)) // retries of deliveries Redis forgot
		post(h, fmt.Sprintf(`{"n":"b%d"}`, i)) // new ones
		post(h, fmt.Sprintf(`{"n":"b%d"}`, i)) // and their retries
	}
	post(h, `{"n":"inflight"}`)
	for i := range 20 {
		if got := count.get(fmt.Sprintf("a%d", i)); got != 2 {
			t.Errorf("a%d, handled before the restart and sent again after: %d calls, want 2", i, got)
		}
		if got := count.get(fmt.Sprintf("b%d", i)); got != 1 {
			t.Errorf("b%d, after the restart: %d calls, want 1", i, got)
		}
	}
	if got := count.get("inflight"); got != 1 {
		t.Errorf("the delivery in flight across the restart: %d calls, want 1 (remembered once done)", got)
	}
}

// TestRedisHonoursContext: each operation returns when its context ends,
// though the client does not bound commands by it (ContextTimeoutEnabled
// is off) and the server holds the answer (CLIENT PAUSE WRITE holds
// scripts; the context ends once the server holds the command); a claim
// made after its caller gave up is released, so it keeps no retry away.
func TestRedisHonoursContext(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client()
	store := redisdedup.New(srv.Client(), redisdedup.WithPrefix("ctx:"))
	bg := context.Background()
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	if _, err := store.ClaimFor(cancelled, "k", "h", time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("claim with a cancelled context: %v", err)
	}
	// Scripts wait until CLIENT UNPAUSE (or a minute).
	if err := admin.Do(bg, "CLIENT", "PAUSE", 60_000, "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	// held runs op with a context that ends once the server holds op's
	// command (one more blocked client), and returns op's error.
	held := func(op func(context.Context) error) error {
		t.Helper()
		before := blockedClients(t, admin)
		ctx, cancel := context.WithCancel(bg)
		defer cancel()
		errc := make(chan error, 1)
		go func() { errc <- op(ctx) }()
		waitFor(t, "the server to hold the command", func() bool { return len(errc) > 0 || blockedClients(t, admin) > before })
		cancel()
		return <-errc
	}
	if err := held(func(ctx context.Context) error {
		_, err := store.ClaimFor(ctx, "k", "h", time.Minute)
		return err
	}); !errors.Is(err, context.Canceled) {
		t.Fatalf("claim while the server holds its answer: %v, want the context's end", err)
	}
	if err := held(func(ctx context.Context) error { return store.DoneFor(ctx, "other", "h", time.Minute) }); !errors.Is(err, context.Canceled) {
		t.Fatalf("done: %v", err)
	}
	if err := held(func(ctx context.Context) error { return store.ReleaseFor(ctx, "k2", "h") }); !errors.Is(err, context.Canceled) {
		t.Fatalf("release: %v", err)
	}
	// Once the pause ends, the claim is made and then released, and the
	// done already sent takes effect.
	if err := admin.Do(bg, "CLIENT", "UNPAUSE").Err(); err != nil {
		t.Fatal(err)
	}
	// Four scripts run once the pause ends: the claim, the done, the
	// release of k2 and the release of the abandoned claim, which the
	// store sends only once the claim's answer came.
	waitFor(t, "the abandoned claim to be made and released", func() bool {
		claimed, err1 := admin.Exists(bg, "ctx:k").Result()
		done, err2 := admin.Exists(bg, "ctx:other").Result()
		return err1 == nil && err2 == nil && claimed == 0 && done == 1 && scriptsRun(t, admin) >= 4
	})
	if st, err := store.ClaimFor(bg, "k", "h2", time.Minute); err != nil || st != events.DedupNew {
		t.Fatalf("claim after: %v %v, want new", st, err)
	}
}

// blockedClients is the number of clients whose command the server
// holds (a paused one included), from INFO clients.
func blockedClients(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "clients").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "blocked_clients:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO clients: %q", line)
			}
			return n
		}
	}
	t.Fatalf("INFO clients has no blocked_clients:\n%s", info)
	return 0
}

// scriptsRun is the number of scripts the server ran to completion
// (EVALSHA and EVAL calls less the failed ones, such as an EVALSHA of a
// script the server did not hold yet), from INFO commandstats.
func scriptsRun(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for line := range strings.Lines(info) {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval") {
			continue
		}
		var calls, failed int64
		for kv := range strings.SplitSeq(stats, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				calls, _ = strconv.ParseInt(v, 10, 64)
			case "failed_calls":
				failed, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		n += calls - failed
	}
	return n
}

// claimed returns the one key under prefix and the claim it holds, and
// checks that the claim expires: its time to live is at most lease (and
// more than half of it: not a lease in other units).
func claimed(t *testing.T, admin *redis.Client, prefix string, lease time.Duration) (key, claim string) {
	t.Helper()
	ks := keys(t, admin, prefix)
	if len(ks) != 1 {
		t.Fatalf("keys under %q: %v, want the one claim", prefix, ks)
	}
	ctx := context.Background()
	claim, err := admin.Get(ctx, ks[0]).Result()
	if err != nil || !strings.HasPrefix(claim, "c:") {
		t.Fatalf("%s holds %q, %v; want a claim", ks[0], claim, err)
	}
	if ttl, err := admin.PTTL(ctx, ks[0]).Result(); err != nil || ttl <= lease/2 || ttl > lease {
		t.Fatalf("the claim's time to live: %v, %v; want at most the lease, %v, and more than half of it", ttl, err, lease)
	}
	return ks[0], claim
}

// lapse makes key's lease lapse now, as Redis does once its time to live
// has passed, and waits until the key is gone.
func lapse(t *testing.T, admin *redis.Client, key string) {
	t.Helper()
	ctx := context.Background()
	if err := admin.PExpire(ctx, key, time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, key+" to expire", func() bool { return admin.Exists(ctx, key).Val() == 0 })
}

// waitFor polls cond every 10 ms until it holds, failing t after 10 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting after 10s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
