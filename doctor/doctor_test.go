package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/testkit/contract"
)

var update = flag.Bool("update", false, "rewrite profile.json from a run against the fake")

// fakeConfig is a Config for srv that reaches every check: the demo
// user's attribute, object and integration.
func fakeConfig(srv *fake.Server) Config {
	return Config{Connection: srv.Connection(), UserEmail: demo.UserEmail1, Attribute: "region", Namespace: demo.Namespace,
		ObjectID: demo.Opportunity1, IntegrationID: demo.OpportunityIntegration}
}

// newFake is a fake with the demo data (as partnerfake serves it), its
// exchanges held to the contract, Run's requests included.
func newFake(t *testing.T, opts ...fake.Option) *fake.Server {
	t.Helper()
	srv := fake.NewServer(append([]fake.Option{fake.WithDemoData(), fake.WithViewDelay(0), fake.WithMiddleware(contract.Check(t))}, opts...)...)
	t.Cleanup(srv.Close)
	return srv
}

// seed gives srv a subscriber and a bulk execution, so that a run reads
// them (ReadSubscriber, status), and returns a Config that names the
// execution. The subscriber's callback is never called: nothing changes
// the objects it follows.
func seed(t *testing.T, srv *fake.Server) Config {
	t.Helper()
	c, err := partner.New(partner.WithConnection(srv.Connection()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if _, err := c.Events.Subscribe(context.Background(), events.SubscribeParams{Name: "doctor test",
		Events: []events.Kind{events.KindObjectCreate}, CallbackURL: "http://127.0.0.1:9/hook",
		IntegrationID: demo.AccountIntegration}); err != nil {
		t.Fatal(err)
	}
	ack, err := c.Bulk.Load(context.Background(), bulk.LoadParams{IntegrationID: demo.OpportunityIntegration},
		strings.NewReader("sales_details.crm_opportunity_id,name\ncrm-1,Doctor test\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := fakeConfig(srv)
	cfg.ExecutionID = ack.ExecutionID
	return cfg
}

// TestProfile: profile.json is what the fake answers, by operation: the
// members each kind of object holds in every answer of a run against the
// fake. Run with -update to rewrite it.
func TestProfile(t *testing.T) {
	t.Parallel()
	// A manual clock keeps the execution running for the first run and
	// done for the second: the profile holds what both answers hold.
	clock := fake.NewManualClock(time.Now())
	srv := newFake(t, fake.WithClock(clock))
	seen := map[string]map[string]map[string]string{}
	cfg := seed(t, srv)
	cfg.PrepareView = true
	cfg.record = func(op string, objs []object) {
		kinds := seen[op]
		if kinds == nil {
			kinds = map[string]map[string]string{}
			seen[op] = kinds
		}
		for _, o := range objs {
			have, ok := kinds[o.Path]
			if !ok {
				kinds[o.Path] = maps.Clone(o.Members)
				continue
			}
			for name := range have {
				if _, ok := o.Members[name]; !ok {
					delete(have, name) // not in every one
				}
			}
		}
	}
	var states []string
	for range 2 {
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		st, ok := srv.BulkExecution(cfg.ExecutionID)
		if !ok {
			t.Fatalf("no execution %s", cfg.ExecutionID)
		}
		states = append(states, st.Status)
		clock.Advance(2 * fake.DefaultBulkDelay)
	}
	if !slices.Equal(states, []string{"running", "completed"}) {
		t.Fatalf("the execution was %v, want running then completed", states)
	}
	want, err := json.MarshalIndent(seen, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if bytes.Equal(profileJSON, want) {
		return
	}
	if *update {
		if err := os.WriteFile("profile.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("rewrote profile.json")
		return
	}
	t.Error("profile.json is not what the fake answers: run go test ./doctor -run TestProfile -update")
}

// TestTheFakeFindsNothing: against the fake, every check passes or is
// skipped for want of an id, and the operations read are many.
func TestTheFakeFindsNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  func(*fake.Server) Config
		want []string // operations that must pass, besides 10 at least
	}{
		{"every id given", func(srv *fake.Server) Config { return seed(t, srv) },
			[]string{"ReadSubscriber", "check-attribute", "get_external_id", "status"}},
		{"no ids", func(srv *fake.Server) Config { return Config{Connection: srv.Connection()} }, nil},
		{"a view prepared", func(srv *fake.Server) Config { c := fakeConfig(srv); c.PrepareView = true; return c },
			[]string{"prepareExport", "checkReportViewStatus", "getReportViewMetadata", "getReportViewData"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newFake(t)
			r, err := Run(context.Background(), tc.cfg(srv))
			if err != nil {
				t.Fatal(err)
			}
			ops := map[string]bool{}
			for _, c := range r.Checks {
				switch c.Status {
				case Passed:
					if c.Operation != "" {
						ops[c.Operation] = true
					}
				case Skipped:
				default:
					t.Errorf("%s: %s %s %+v", c.Name, c.Status, c.Note, c.Divergences)
				}
			}
			for _, op := range tc.want {
				if !ops[op] {
					t.Errorf("%s did not pass", op)
				}
			}
			if len(ops) < 10 {
				t.Errorf("passed over %d operations, want 10 or more: %v", len(ops), slices.Sorted(maps.Keys(ops)))
			}
			if r.Diverged() {
				t.Errorf("diverged: %+v", r.Divergences())
			}
		})
	}
}

// TestWords: the words given are held to what the deployment lists; a
// fake of another portal word lists another referral kind and audit field.
func TestWords(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithWords(deployment.Words{PortalWord: "acme_portal"}))
	cfg := fakeConfig(srv)
	cfg.Connection.Words.PortalWord = ""
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := members(r)
	want := []string{"GetEventList /events/[]/name", "GetObjectEventSchema /schema/properties"}
	if !slices.Equal(got, want) {
		t.Errorf("divergences %v, want %v", got, want)
	}
	for _, d := range r.Divergences() {
		if !strings.Contains(d.Deployment, "acme_portal") || !strings.Contains(d.Fake, "partner_portal") {
			t.Errorf("%+v: want the deployment's word and the stand-in", d)
		}
	}
	cfg.Connection.Words.PortalWord = "acme_portal"
	if r, err = Run(context.Background(), cfg); err != nil || r.Diverged() {
		t.Errorf("with the deployment's word: %v %+v", err, r.Divergences())
	}
}

// members names each divergence of r by operation and member, sorted.
func members(r *Report) []string {
	var out []string
	for _, d := range r.Divergences() {
		out = append(out, d.Operation+" "+d.Member)
	}
	slices.Sort(out)
	return out
}

// deploymentOf is a connection to base with made-up credentials.
func deploymentOf(base string) deployment.Connection {
	return deployment.Connection{BaseURL: base, ClientID: "id", ClientSecret: "secret"}
}
