package partner_test

// The soak test: one long-lived client, 64 goroutines, calls mixed across
// every area against the fake, with a few percent injected faults and
// tokens that expire and are replaced during the run. It records the heap
// after GC, the goroutines and the open connections at 10k, 100k and 1M
// calls. In `go test` it makes 750 calls and fails on a leaked
// goroutine or on open connections beyond the transport's idle pool;
// PARTNER_SOAK_CALLS=1000000 makes the long run, whose figures are in
// docs/reliability.md.

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/reports"
	"github.com/partnerapi/partner-go/scim"
	"github.com/partnerapi/partner-go/users"
)

const (
	soakWorkers = 64
	// soakIdlePool is the client transport's MaxIdleConnsPerHost: after
	// the workers stop, no more connections may stay open.
	soakIdlePool = 32
	// soakFaultEvery: one call in 33 (3%) injects a one-shot fault that
	// the next request to the fake, whichever it is, meets.
	soakFaultEvery = 33
	// soakClockStep moves the fake's manual clock at every call: a
	// 60-second token lives 10,000 calls on the fake's side.
	soakClockStep = 6 * time.Millisecond
	// soakShortCalls is the length of the run in `go test`, where a token
	// lives a third of the run so that it is replaced at least twice,
	// and each kind of fault is injected 3 or 4 times.
	soakShortCalls = 750
)

// soakFaults are the faults injected in turn: refusals before the fake
// handles the request, and failures after it did.
var soakFaults = []fake.Fault{
	{Status: http.StatusServiceUnavailable},
	{Status: http.StatusTooManyRequests, RetryAfter: "0"},
	{Status: http.StatusInternalServerError},
	{Drop: true},
	{DropAfter: true},
	{Truncate: true},
}

// soakConns counts the fake server's connections through ConnState.
type soakConns struct {
	open, opened atomic.Int64
}

func (s *soakConns) track(_ net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		s.open.Add(1)
		s.opened.Add(1)
	case http.StateClosed, http.StateHijacked:
		s.open.Add(-1)
	}
}

// soakMark is what the soak records at a checkpoint, the workers stopped.
type soakMark struct {
	calls                int64
	heap                 uint64 // HeapAlloc after two GCs
	goroutines           int
	open, opened, grants int64
	requests, errs       int64
	faults               int64
	elapsed              time.Duration
}

func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test skipped in -short mode")
	}
	total := int64(soakShortCalls)
	if s := os.Getenv("PARTNER_SOAK_CALLS"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 1 {
			t.Fatalf("PARTNER_SOAK_CALLS=%q: want a positive number", s)
		}
		total = v
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	startGoroutines := runtime.NumGoroutine()

	// A token lives 60 seconds, or a third of a shorter run.
	tokenLifetime := min(60*time.Second, time.Duration(total/3)*soakClockStep)
	clock := fake.NewManualClock(time.Now())
	f := fake.New(fake.WithDemoData(), fake.WithTokenLifetime(tokenLifetime), fake.WithClock(clock), mocktest.ContractCheck(t),
		fake.WithRequestLogSize(1000))
	var requests, grants atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path == "/oauth/token" && r.Method == http.MethodPost {
			grants.Add(1)
		}
		f.ServeHTTP(w, r)
	}))
	conns := &soakConns{}
	ts.Config.ConnState = conns.track
	ts.Start()
	f.SetURL(ts.URL)
	defer func() {
		f.Close()
		ts.CloseClientConnections()
		ts.Close()
	}()

	c, err := partner.New(partner.WithBaseURL(ts.URL),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret),
		partner.WithRetryWait(time.Millisecond, 5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	ctx := context.Background()
	ops := soakOps(t, ctx, c)

	var next, errs, faults atomic.Int64
	var firstErrs []string
	errKinds := map[string]int{}
	var mu sync.Mutex
	checkpoints := []int64{}
	for _, n := range []int64{10_000, 100_000, 1_000_000} {
		if n < total {
			checkpoints = append(checkpoints, n)
		}
	}
	checkpoints = append(checkpoints, total)
	var marks []soakMark
	start := time.Now()
	for _, target := range checkpoints {
		var wg sync.WaitGroup
		for range soakWorkers {
			wg.Go(func() {
				for {
					i := next.Add(1)
					if i > target {
						return
					}
					if i%soakFaultEvery == 0 {
						ft := soakFaults[(i/soakFaultEvery)%int64(len(soakFaults))]
						ft.Times = 1
						f.InjectFault(ft)
						faults.Add(1)
					}
					clock.Advance(soakClockStep)
					if err := ops[i%int64(len(ops))](); err != nil {
						errs.Add(1)
						mu.Lock()
						errKinds[soakErrKind(err)]++
						if len(firstErrs) < 5 {
							firstErrs = append(firstErrs, err.Error())
						}
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		next.Store(target)
		// The transport closes a connection its idle pool has no room for
		// as the answer on it is done; the server sees the close a moment
		// later.
		for i := 0; i < 500 && conns.open.Load() > soakIdlePool; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		m := soakMark{calls: target, heap: ms.HeapAlloc, goroutines: runtime.NumGoroutine(),
			open: conns.open.Load(), opened: conns.opened.Load(), grants: grants.Load(),
			requests: requests.Load(), errs: errs.Load(), faults: faults.Load(), elapsed: time.Since(start)}
		marks = append(marks, m)
		t.Logf("%8d calls: heap %6.2f MiB, %3d goroutines (%d at start), %2d open connections (%d opened), %d requests, %d faults injected, %d errors, %d token grants, %v",
			m.calls, float64(m.heap)/(1<<20), m.goroutines, startGoroutines, m.open, m.opened, m.requests, m.faults, m.errs, m.grants, m.elapsed.Round(time.Millisecond))
		if m.open > soakIdlePool {
			t.Errorf("%d calls: %d connections open after the workers stopped, more than the idle pool (%d)", m.calls, m.open, soakIdlePool)
		}
	}
	last := marks[len(marks)-1]
	if len(firstErrs) > 0 {
		t.Logf("errors by kind: %v; the first: %s", errKinds, strings.Join(firstErrs, "; "))
	}
	// Every call is a read or an idempotent write, each fault is one-shot
	// and the retries are many: a fault reaching a caller is rare.
	if last.errs > last.calls/100 {
		t.Errorf("%d of %d calls failed", last.errs, last.calls)
	}
	if last.faults == 0 || last.grants < 3 {
		t.Errorf("%d faults injected, %d token grants: the soak did not exercise faults and token replacement", last.faults, last.grants)
	}
	if i := slices.IndexFunc(marks, func(m soakMark) bool { return m.calls == 100_000 }); i >= 0 && last.calls >= 1_000_000 {
		if grew := int64(last.heap) - int64(marks[i].heap); grew > 2<<20 {
			t.Errorf("the heap grew by %.2f MiB between 100k and %d calls", float64(grew)/(1<<20), last.calls)
		}
	}
}

// soakOps are the calls the workers make in turn: reads and idempotent
// writes of every area whose state on the fake stays the same size, so
// that the heap measured (the fake runs in the same process) is the
// client's growth.
func soakOps(t *testing.T, ctx context.Context, c *partner.Client) []func() error {
	t.Helper()
	user, err := c.SCIM.Get(ctx, demo.User2)
	if err != nil {
		t.Fatal(err)
	}
	ack, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration},
		strings.NewReader("name,stage,amount\nSoak deal,open,1000\n"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := c.Events.Subscribe(ctx, events.SubscribeParams{Name: "soak", Events: []events.Kind{events.KindReportSubmit},
		CallbackURL: "http://127.0.0.1:9/soak"})
	if err != nil {
		t.Fatal(err)
	}
	return []func() error{
		func() error { _, err := c.SCIM.Get(ctx, demo.User1); return err },
		func() error { return drain(c.SCIM.List(ctx, scim.ListParams{})) },
		func() error { _, err := c.SCIM.Update(ctx, user); return err },
		func() error {
			_, err := c.Users.CheckAttribute(ctx, users.CheckAttributeParams{Email: demo.UserEmail1,
				FilterValue: users.Attribute{Name: "region", Values: []string{"emea"}}})
			return err
		},
		func() error { return drain(c.Reports.List(ctx, reports.ListParams{})) },
		func() error { return drain(c.Reports.Data(ctx, demo.ReportPartners, reports.DataParams{})) },
		func() error { _, err := c.Reports.Metadata(ctx, demo.ReportPipeline); return err },
		func() error { _, err := c.Objects.ExternalIDs(ctx, demo.Opportunity1); return err },
		func() error {
			_, err := c.Bulk.Status(ctx, ack.IntegrationID, ack.ExecutionID, bulk.StatusParams{})
			return err
		},
		func() error { return drain(c.Events.Kinds(ctx)) },
		func() error { return drain(c.Events.Integrations(ctx)) },
		func() error { _, err := c.Events.Subscriber(ctx, sub); return err },
		func() error { return drain(c.Events.Subscribers(ctx)) },
	}
}

// soakErrKind sorts an error of a call for the soak's summary.
func soakErrKind(err error) string {
	switch msg := err.Error(); {
	case strings.Contains(msg, "/oauth/token"):
		return "token request"
	case strings.Contains(msg, "unexpected EOF"):
		return "answer cut short"
	default:
		return "other"
	}
}

// drain iterates over seq to its end and returns its first error.
func drain[T any](seq func(func(T, error) bool)) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}
