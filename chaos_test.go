package partner_test

// The chaos test: the whole tour (SCIM, reports, objects, bulk, events)
// from several goroutines through a fault-injecting HTTP proxy of its own
// (a real TCP hop on 127.0.0.1; the fake's fault hooks are not used), with
// about 30% of the requests faulted and 1-second tokens. It checks the
// fake's state afterwards: nothing lost, nothing doubled, every error
// after which a write turned out to be done was marked IsOutcomeUnknown,
// no token request's failure reaching a call (after 401s and at the early
// refresh), no secret in the debug logs or errors, and no goroutine left. Seeded (PARTNER_CHAOS_SEED), bounded (a fixed
// number of rounds, a deadline), a few seconds long. Its figures are in
// docs/reliability.md.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/paging"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/objects"
	"github.com/partnerapi/partner-go/reports"
	"github.com/partnerapi/partner-go/scim"
)

// syncBuffer is a bytes.Buffer for concurrent log writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// chaosStats counts what the tour saw.
type chaosStats struct {
	calls, errs, ambiguous, resent atomic.Int64
	tokenErrs                      atomic.Int64 // errors of POST /oauth/token that reached a call
	violations                     []string
	definite                       []string // errors not marked outcome unknown
	all                            []string // every error returned to the tour
	mu                             sync.Mutex
}

func (s *chaosStats) failed(err error) {
	s.errs.Add(1)
	s.mu.Lock()
	s.all = append(s.all, err.Error())
	if !partner.IsOutcomeUnknown(err) {
		s.definite = append(s.definite, err.Error())
	}
	s.mu.Unlock()
	if strings.Contains(err.Error(), "/oauth/token") {
		s.tokenErrs.Add(1)
	}
}

func (s *chaosStats) violate(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violations = append(s.violations, fmt.Sprintf(format, args...))
}

func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test skipped in -short mode")
	}
	seed := uint64(1)
	if s := os.Getenv("PARTNER_CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("PARTNER_CHAOS_SEED: %v", err)
		}
		seed = v
	}
	const workers, rounds = 4, 3

	// The fake's asynchronous work needs no real wait
	// (mocktest.NoWaits). Its tokens live an
	// hour on that manual clock; the proxy tells the clients they live a
	// second (chaosTokenLifetime), so the clients' own clock, the real
	// one, makes them refresh early.
	srv := fake.NewServer(append(mocktest.NoWaits(), fake.WithDemoData(), fake.WithFullSCIMFilter(), mocktest.ContractCheck(t))...)
	defer srv.Close()
	proxy := &chaosProxy{target: srv.URL, out: &http.Transport{MaxIdleConnsPerHost: 16}, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		expiryGrants: map[string]int{}}
	defer proxy.out.CloseIdleConnections()
	ps := httptest.NewServer(proxy)
	defer ps.Close()

	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, ResponseHeaderTimeout: 10 * time.Second}}
	defer hc.CloseIdleConnections()
	// Two clients: c gets 401s, so its tokens are replaced long before
	// they expire; cx gets none, so it refreshes its 1-second tokens early
	// through the faults. Both log at debug level into logs.
	logs := &syncBuffer{}
	logger := debugLogger(logs)
	// The fake's connection (credentials, words), through the proxy.
	opts := []partner.Option{partner.WithConnection(srv.Connection()), partner.WithBaseURL(ps.URL), partner.WithLogger(logger),
		partner.WithHTTPClient(hc), partner.WithMaxRetries(6), partner.WithRetryWait(time.Millisecond, 20*time.Millisecond)}
	c, err := partner.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	cx, err := partner.New(append(opts, partner.WithHeader(chaosExpiryClient, "1"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cx.Close(context.Background())

	// cx gets its first token before the test waits for the package's
	// serial tests to end (t.Parallel), so that the second it lives
	// passes while they run rather than after the tour. The attempts are
	// counted, not timed: the wait for a parallel slot that follows is no
	// part of any budget.
	for i := 0; ; i++ {
		_, err := cx.OAuth.Token(t.Context())
		if err == nil {
			break
		}
		if i == 20 {
			t.Fatalf("cx's first token, %d calls of up to 7 attempts each: %v", i+1, err)
		}
	}
	t.Parallel()
	// The tour's budget starts here and only bounds a hung run.
	ctx := ownWork(t)
	st := &chaosStats{}
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			tw := &tourWorker{t: t, c: c, srv: srv, st: st, w: w}
			if w%2 == 1 {
				tw.c = cx
			}
			for r := range rounds {
				if err := tw.round(ctx, r); err != nil {
					st.violate("worker %d round %d: %v", w, r, err)
					return
				}
			}
		})
	}
	wg.Wait()
	// cx refreshes its token when 0.9s of its 1s are gone; if the tour was
	// quicker, go on reading through cx until it has.
	for i := 0; i < 100 && proxy.refreshes() == 0; i++ {
		tw := &tourWorker{t: t, c: cx, srv: srv, st: st}
		if err := tw.again(ctx, "reports list", func() error { _, err := paging.Collect(cx.Reports.List(ctx, reports.ListParams{})); return err }); err != nil {
			st.violate("%v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	elapsed := time.Since(start)

	// Nothing lost, nothing doubled: the fake's state against what the
	// workers did.
	names := map[string]int{}
	for _, u := range srv.Users() {
		names[strings.ToLower(u.UserName)]++
	}
	loaded := map[string]int{}
	for _, o := range srv.Objects("opportunity") {
		if n, _ := o.Fields["name"].(string); strings.HasPrefix(n, "Chaos ") {
			loaded[n]++
		}
	}
	for w := range workers {
		for r := range rounds {
			if n := names[chaosUserName(w, r)]; n != 1 {
				st.violate("user %s stored %d times, want 1", chaosUserName(w, r), n)
			}
			if n := loaded[chaosDeal(w, r)]; n != 1 {
				st.violate("deal %q stored %d times, want 1", chaosDeal(w, r), n)
			}
		}
	}
	for _, ex := range srv.BulkExecutions() {
		if ex.SkipCount != 0 {
			st.violate("execution %s skipped %d rows: a load was sent again after it was processed", ex.ID, ex.SkipCount)
		}
	}
	for _, s := range srv.Subscribers() {
		if strings.HasPrefix(s.Name, "chaos-") {
			st.violate("subscriber %s (%s) left behind: doubled or not removed", s.ID, s.Name)
		}
	}
	var faults []string
	var requests, faulted int64
	for f := range numFaults {
		n := proxy.counts[f].Load()
		requests += n
		if f != passThrough {
			faulted += n
			faults = append(faults, fmt.Sprintf("%s %d", faultNames[f], n))
		}
	}
	log := logs.String()
	t.Logf("seed %d: %d workers x %d rounds in %v; %d requests through the proxy, %d faulted (%.0f%%: %s); %d calls, %d errors returned, %d marked outcome unknown, %d writes sent again after a lookup; %d tokens issued, %d token errors reached a call; the client without 401s: grants %v, %d failed early refreshes that kept the token",
		seed, workers, rounds, elapsed.Round(10*time.Millisecond), requests, faulted, 100*float64(faulted)/float64(max(requests, 1)),
		strings.Join(faults, ", "), st.calls.Load(), st.errs.Load(), st.ambiguous.Load(), st.resent.Load(), srv.TokensIssued(), st.tokenErrs.Load(),
		proxy.grants(), strings.Count(log, "early token refresh failed"))
	for _, e := range st.definite {
		t.Logf("error not marked outcome unknown: %s", e)
	}
	for _, v := range st.violations {
		t.Error(v)
	}
	// A token request's failure never reaches a call: while the cached
	// token is valid, a failed refresh leaves the call its cached token.
	if n := st.tokenErrs.Load(); n != 0 {
		t.Errorf("%d errors of POST /oauth/token reached a call", n)
	}
	if proxy.refreshes() == 0 {
		t.Error("the client without 401s never refreshed its token early")
	}
	// No secret in the logs (debug level: requests, retries, refreshes
	// and their failures) nor in any error the tour saw.
	proxy.mu.Lock()
	secrets := append([]string{fake.DefaultClientSecret}, proxy.secrets...)
	proxy.mu.Unlock()
	errs := strings.Join(st.all, "\n")
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		if strings.Contains(log, sec) || strings.Contains(errs, sec) {
			t.Errorf("a secret (%.4s...) reached the logs or an error", sec)
		}
	}
	if !strings.Contains(log, "level=DEBUG") {
		t.Error("nothing logged: the secrets check looked at nothing")
	}
	if faulted < requests/5 {
		t.Errorf("the proxy faulted %d of %d requests: the test tested little", faulted, requests)
	}
}

func chaosUserName(w, r int) string { return fmt.Sprintf("chaos-%d-%d@example.com", w, r) }
func chaosDeal(w, r int) string     { return fmt.Sprintf("Chaos %d-%d", w, r) }

// tourWorker runs rounds of the tour, the way an integration job does:
// reads and idempotent writes are repeated on error; a non-idempotent
// write whose error is marked IsOutcomeUnknown is looked up the way its
// doc says before it is sent again; one whose error is not marked must not
// have been done, which the worker checks against the fake.
type tourWorker struct {
	t   *testing.T
	c   *partner.Client
	srv *fake.Server
	st  *chaosStats
	w   int
}

// again runs an idempotent step until it succeeds (at most 30 times).
func (tw *tourWorker) again(ctx context.Context, what string, step func() error) error {
	var err error
	for range 30 {
		tw.st.calls.Add(1)
		if err = step(); err == nil {
			return nil
		}
		tw.st.failed(err)
		if ctx.Err() != nil {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// write sends a non-idempotent write until it is done. done looks the
// result up (through the SDK, as the call's doc says); stored asks the
// fake directly whether the write happened.
func (tw *tourWorker) write(ctx context.Context, what string, send func() error, done func() (bool, error), stored func() bool) error {
	for range 30 {
		tw.st.calls.Add(1)
		err := send()
		if err == nil {
			return nil
		}
		tw.st.failed(err)
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if !partner.IsOutcomeUnknown(err) {
			if stored() {
				tw.st.violate("%s: the write was done but its error is not marked IsOutcomeUnknown: %v", what, err)
				return nil
			}
			continue
		}
		tw.st.ambiguous.Add(1)
		var found bool
		if err := tw.again(ctx, what+" lookup", func() (e error) { found, e = done(); return e }); err != nil {
			return err
		}
		if found {
			return nil
		}
		tw.st.resent.Add(1)
	}
	return fmt.Errorf("%s: not done after 30 attempts", what)
}

func (tw *tourWorker) round(ctx context.Context, r int) error {
	c, srv := tw.c, tw.srv

	// SCIM: create (looked up by userName when ambiguous), read, suspend.
	userName := chaosUserName(tw.w, r)
	var id string
	err := tw.write(ctx, "SCIM create "+userName,
		func() error {
			u, err := c.SCIM.Create(ctx, &scim.User{UserName: userName, DisplayName: "Chaos"})
			if err == nil {
				id = u.ID
			}
			return err
		},
		func() (bool, error) {
			u, err := c.SCIM.FindByUserName(ctx, userName)
			if errors.Is(err, scim.ErrNotFound) {
				return false, nil
			}
			if err == nil {
				id = u.ID
			}
			return err == nil, err
		},
		func() bool {
			for _, u := range srv.Users() {
				if strings.EqualFold(u.UserName, userName) {
					return true
				}
			}
			return false
		})
	if err != nil {
		return err
	}
	if err := tw.again(ctx, "SCIM suspend", func() error { _, err := c.SCIM.Suspend(ctx, id); return err }); err != nil {
		return err
	}
	if u, ok := srv.User(id); !ok || u.IsActive() {
		return fmt.Errorf("user %s not suspended in the fake", id)
	}

	// Reports: list, and a consistent export of the 25 partners.
	if err := tw.again(ctx, "reports list", func() error { _, err := paging.Collect(c.Reports.List(ctx, reports.ListParams{})); return err }); err != nil {
		return err
	}
	if err := tw.again(ctx, "export", func() error {
		rows, err := paging.Collect(c.Reports.Export(ctx, demo.ReportPartners, reports.ExportOptions{PageSize: 10,
			Wait: reports.WaitOptions{Interval: 20 * time.Millisecond}}))
		if err == nil && len(rows) != 25 {
			return fmt.Errorf("export read %d rows, want 25", len(rows))
		}
		return err
	}); err != nil {
		return err
	}

	// Objects: audit and link an external id (idempotent), read it back.
	ext := fmt.Sprintf("ERP-%d-%d", tw.w, r)
	field := fmt.Sprintf("erp.ref_%d", tw.w)
	if err := tw.again(ctx, "audit", func() error {
		_, err := c.Objects.Audit(ctx, demo.Opportunity1, objects.AuditParams{StatusCode: objects.StatusLinked, Message: ext})
		return err
	}); err != nil {
		return err
	}
	if err := tw.again(ctx, "connect", func() error {
		_, err := c.Objects.ConnectExternalID(ctx, demo.Opportunity2, objects.ConnectExternalIDParams{ExternalID: ext, FieldName: field})
		return err
	}); err != nil {
		return err
	}
	if err := tw.again(ctx, "external ids", func() error {
		ids, err := c.Objects.ExternalIDs(ctx, demo.Opportunity2)
		if err != nil {
			return err
		}
		if got, _ := ids.Get(field); got == ext {
			return nil
		}
		return fmt.Errorf("%s=%s not read back", field, ext)
	}); err != nil {
		return err
	}

	// Bulk: load one deal (looked up in the pipeline report when
	// ambiguous), then wait for its execution.
	deal := chaosDeal(tw.w, r)
	csv := fmt.Sprintf("sales_details.crm_opportunity_id,name,stage,amount\nCHAOS-%d-%d,%s,proposal,100\n", tw.w, r, deal)
	var ack *bulk.Ack
	err = tw.write(ctx, "bulk load "+deal,
		func() (err error) {
			ack, err = c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, strings.NewReader(csv))
			return err
		},
		func() (bool, error) {
			for row, err := range c.Reports.Data(ctx, demo.ReportPipeline, reports.DataParams{}) {
				if err != nil {
					return false, err
				}
				if row.Text("Opportunity") == deal {
					return true, nil
				}
			}
			return false, nil
		},
		func() bool {
			for _, o := range srv.Objects("opportunity") {
				if o.Fields["name"] == deal {
					return true
				}
			}
			return false
		})
	if err != nil {
		return err
	}
	if ack != nil {
		if err := tw.again(ctx, "bulk wait", func() error {
			ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{Interval: 10 * time.Millisecond})
			if err == nil && ex.SuccessCount != 1 {
				return fmt.Errorf("execution %+v, want 1 success", ex)
			}
			return err
		}); err != nil {
			return err
		}
	}

	// Events: subscribe (looked up by name when ambiguous), unsubscribe.
	name := fmt.Sprintf("chaos-%d-%d", tw.w, r)
	var subID string
	err = tw.write(ctx, "subscribe "+name,
		func() (err error) {
			subID, err = c.Events.Subscribe(ctx, events.SubscribeParams{Name: name, Events: []events.Kind{events.KindObjectUpdate},
				ObjectIDs: []string{"no-such-object"}, CallbackURL: "http://127.0.0.1:9/hook"})
			return err
		},
		func() (bool, error) {
			for s, err := range c.Events.Subscribers(ctx) {
				if err != nil {
					return false, err
				}
				if s.Name == name {
					subID = s.ID
					return true, nil
				}
			}
			return false, nil
		},
		func() bool {
			for _, s := range srv.Subscribers() {
				if s.Name == name {
					return true
				}
			}
			return false
		})
	if err != nil {
		return err
	}
	tried := false
	return tw.again(ctx, "unsubscribe", func() error {
		err := c.Events.Unsubscribe(ctx, subID)
		if partner.IsNotFound(err) && tried {
			return nil // an earlier call removed it
		}
		tried = true
		return err
	})
}
