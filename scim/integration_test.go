package scim_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/oauth2"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/paging"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/scim"
)

// newFake starts a fake and a client of it with fast retries.
func newFake(t *testing.T, opts ...fake.Option) (*fake.Server, *partner.Client) {
	t.Helper()
	c, srv := mocktest.FakeClient(t, opts, partner.WithRetryWait(time.Millisecond, 2*time.Millisecond))
	return srv, c
}

// TestLifecycle reads users back whole: the fake answers reads with every
// stored member and meta's details only with WithSCIMFullResources (the
// published reads show fewer).
func TestLifecycle(t *testing.T) {
	srv, c := newFake(t, fake.WithFullSCIMFilter(), fake.WithSCIMFullResources())
	ctx := context.Background()

	created, err := c.SCIM.Create(ctx, &scim.User{
		UserName:    "ada@example.com",
		Name:        &scim.Name{GivenName: "Ada", FamilyName: "Lovelace"},
		DisplayName: "Ada Lovelace",
		Emails:      []scim.Email{{Value: "ada@example.com", Type: "work", Primary: true}},
		Enterprise:  &scim.EnterpriseUser{Department: "Engineering"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if created.ID == "" || !created.IsActive() || created.Meta == nil || created.Meta.ResourceType != "User" || created.Meta.Created == nil {
		t.Fatalf("created %+v", created)
	}

	got, err := c.SCIM.Get(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.UserName != "ada@example.com" || got.Enterprise == nil || got.Enterprise.Department != "Engineering" ||
		got.Name.FamilyName != "Lovelace" || got.PrimaryEmail() != "ada@example.com" {
		t.Errorf("read back %+v", got)
	}

	got.DisplayName = "Countess of Lovelace"
	got.Enterprise.Department = "Research"
	updated, err := c.SCIM.Update(ctx, got)
	if err != nil {
		t.Fatal(err)
	}
	if updated.DisplayName != "Countess of Lovelace" || !updated.IsActive() {
		t.Errorf("updated %+v", updated)
	}

	suspended, err := c.SCIM.Suspend(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := srv.User(created.ID)
	if suspended.IsActive() || stored.IsActive() || stored.Department != "Research" || stored.GivenName != "Ada" {
		t.Errorf("after Suspend: returned %+v, stored %+v", suspended, stored)
	}

	found, err := c.SCIM.FindByUserName(ctx, "ADA@example.COM")
	if err != nil || found.ID != created.ID {
		t.Fatalf("FindByUserName: %+v, %v", found, err)
	}
	var inactive []string
	for u, err := range c.SCIM.List(ctx, scim.ListParams{Filter: "active eq false"}) {
		if err != nil {
			t.Fatal(err)
		}
		inactive = append(inactive, u.UserName)
	}
	if strings.Join(inactive, ",") != "ada@example.com" {
		t.Errorf("inactive users %v", inactive)
	}

	if _, err := c.SCIM.Reactivate(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	if u, _ := srv.User(created.ID); !u.IsActive() {
		t.Error("Reactivate left the user suspended")
	}
	if _, err := c.SCIM.FindByUserName(ctx, "nobody@example.com"); !errors.Is(err, scim.ErrNotFound) {
		t.Errorf("FindByUserName of nobody: %v", err)
	}
}

// TestSuspendReactivateKeepMembersTheReadOmits: against the default fake,
// whose reads show the published members only (no name, displayName or
// emails), Suspend and Reactivate write back what they read and the
// user keeps the members the read did not return.
func TestSuspendReactivateKeepMembersTheReadOmits(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	id, err := srv.AddUser(fake.User{
		UserName: "ada@example.com", GivenName: "Ada", FamilyName: "Lovelace", DisplayName: "Ada Lovelace",
		Emails:     []fake.UserEmail{{Value: "ada@example.com", Type: "work", Primary: true}, {Value: "ada@home.example", Type: "home"}},
		Department: "Engineering",
	})
	if err != nil {
		t.Fatal(err)
	}
	read, err := c.SCIM.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if read.Name != nil || read.DisplayName != "" || read.Emails != nil {
		t.Fatalf("the default fake's read carries members the published read does not: %+v", read)
	}
	want, _ := srv.User(id)
	for _, step := range []struct {
		name      string
		call      func(context.Context, string) (*scim.User, error)
		suspended bool
	}{
		{"Suspend", c.SCIM.Suspend, true},
		{"Reactivate", c.SCIM.Reactivate, false},
	} {
		if _, err := step.call(ctx, id); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		got, _ := srv.User(id)
		if got.IsActive() == step.suspended || got.GivenName != "Ada" || got.FamilyName != "Lovelace" ||
			got.DisplayName != "Ada Lovelace" || !slices.Equal(got.Emails, want.Emails) || got.Department != "Engineering" {
			t.Errorf("after %s the stored user is %+v, want %+v with suspended %v", step.name, got, want, step.suspended)
		}
	}
}

func TestListPagesThroughTheFake(t *testing.T) {
	srv, c := newFake(t, fake.WithFullSCIMFilter())
	for i := range 25 {
		if _, err := srv.AddUser(fake.User{UserName: fmt.Sprintf("u%02d@example.com", i)}); err != nil {
			t.Fatal(err)
		}
	}
	users, err := paging.Collect(c.SCIM.List(context.Background(), scim.ListParams{Count: 7}))
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 25 || users[0].UserName != "u00@example.com" || users[24].UserName != "u24@example.com" {
		t.Errorf("listed %d users", len(users))
	}
	if n := srv.CountRequests(http.MethodGet, "/api/scim/v2/Users"); n != 4 {
		t.Errorf("%d list requests, want 4", n)
	}
	// startIndex and a filter with a quoted value.
	users, err = paging.Collect(c.SCIM.List(context.Background(), scim.ListParams{
		Filter: "userName sw " + scim.Quote("u1"), StartIndex: 4, Count: 2,
	}))
	if err != nil || len(users) != 7 || users[0].UserName != "u13@example.com" {
		t.Errorf("filtered listing: %d users, %v", len(users), err)
	}
}

func TestErrorsFromTheFake(t *testing.T) {
	srv, c := newFake(t, fake.WithClient(fake.DefaultClientID, fake.DefaultClientSecret), fake.WithClient("users-only", "s", "users"), fake.WithScopeChecks())
	ctx := context.Background()
	u, err := c.SCIM.Create(ctx, &scim.User{UserName: "dup@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	scimErr := func(err error) *partner.Error {
		t.Helper()
		var perr *partner.Error
		if !errors.As(err, &perr) {
			t.Fatalf("err %v is not a *partner.Error", err)
		}
		return perr
	}

	_, err = c.SCIM.Create(ctx, &scim.User{UserName: "DUP@example.com"})
	if e := scimErr(err); !partner.IsConflict(err) || scim.ErrorTypeOf(err) != scim.ErrorTypeUniqueness || !strings.Contains(e.Message, "already taken") {
		t.Errorf("duplicate: %v", err)
	}
	_, err = c.SCIM.Create(ctx, &scim.User{UserName: "x@example.com", Schemas: []scim.Schema{"urn:example:unknown"}})
	if scimErr(err); !partner.IsBadRequest(err) || scim.ErrorTypeOf(err) != scim.ErrorTypeInvalidValue {
		t.Errorf("unknown schema: %v", err)
	}
	u.ID = "does-not-exist"
	if _, err := c.SCIM.Update(ctx, u); !partner.IsNotFound(err) {
		t.Errorf("update of an unknown id: %v", err)
	}
	if _, err := c.SCIM.Get(ctx, "does-not-exist"); !partner.IsNotFound(err) {
		t.Errorf("get of an unknown id: %v", err)
	}
	if _, err := c.SCIM.Suspend(ctx, "does-not-exist"); !partner.IsNotFound(err) {
		t.Errorf("suspend of an unknown id: %v", err)
	}
	_, err = paging.Collect(c.SCIM.List(ctx, scim.ListParams{Filter: "userName eq"}))
	if scimErr(err); !partner.IsBadRequest(err) || scim.ErrorTypeOf(err) != scim.ErrorTypeInvalidFilter {
		t.Errorf("bad filter: %v", err)
	}

	// 403: a client without the SCIM scope.
	other, _ := partner.New(partner.WithBaseURL(srv.URL), partner.WithClientCredentials("users-only", "s"))
	if _, err := other.SCIM.Get(ctx, u.ID); !partner.IsForbidden(err) {
		t.Errorf("client without the scim scope: %v", err)
	}
	// 401: a token the service does not know (repeated once with a "new" one).
	bogus, _ := partner.New(partner.WithBaseURL(srv.URL),
		partner.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "bogus", TokenType: "Bearer"})))
	if _, err := bogus.SCIM.Get(ctx, u.ID); !partner.IsUnauthorized(err) {
		t.Errorf("bogus token: %v", err)
	}

	// 500 on create: not repeated, since the user may have been created.
	srv.InjectFault(fake.Fault{Method: "POST", Path: "/api/scim/v2/Users", Status: 500, Times: 1})
	srv.ResetRequests()
	if _, err := c.SCIM.Create(ctx, &scim.User{UserName: "five@example.com"}); !partner.IsServerError(err) {
		t.Errorf("create under a 500: %v", err)
	}
	if n := srv.CountRequests("POST", "/api/scim/v2/Users"); n != 1 {
		t.Errorf("create was sent %d times, want 1", n)
	}
	// 503 then success on an idempotent PUT: repeated.
	srv.InjectFault(fake.Fault{Method: "PUT", Path: "/api/scim/v2/Users/*", Status: 503, Times: 1})
	if _, err := c.SCIM.Suspend(ctx, mustFind(t, c, "dup@example.com")); err != nil {
		t.Errorf("suspend under one 503: %v", err)
	}
}

func mustFind(t *testing.T, c *partner.Client, userName string) string {
	t.Helper()
	u, err := c.SCIM.FindByUserName(context.Background(), userName)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// TestConcurrentCreates: 50 goroutines creating distinct users all
// succeed; then every duplicate (in another case) gets 409, and of many
// goroutines racing for one new userName exactly one wins.
func TestConcurrentCreates(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	const n = 50
	name := func(i int) string { return fmt.Sprintf("user%02d@example.com", i) }
	run := func(f func(i int) error) []error {
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = f(i) })
		}
		wg.Wait()
		return errs
	}
	ids := make([]string, n)
	for i, err := range run(func(i int) error {
		u, err := c.SCIM.Create(ctx, &scim.User{UserName: name(i)})
		if err == nil {
			ids[i] = u.ID
		}
		return err
	}) {
		if err != nil {
			t.Errorf("create %d: %v", i, err)
		}
	}
	if len(srv.Users()) != n {
		t.Fatalf("stored %d users, want %d", len(srv.Users()), n)
	}
	for i, err := range run(func(i int) error {
		_, err := c.SCIM.Create(ctx, &scim.User{UserName: strings.ToUpper(name(i))})
		return err
	}) {
		var perr *partner.Error
		if !partner.IsConflict(err) || !errors.As(err, &perr) || perr.SCIMType != string(scim.ErrorTypeUniqueness) {
			t.Errorf("duplicate %d: %v", i, err)
		}
	}
	wins := 0
	for _, err := range run(func(i int) error {
		_, err := c.SCIM.Create(ctx, &scim.User{UserName: "contested@example.com"})
		return err
	}) {
		switch {
		case err == nil:
			wins++
		case !partner.IsConflict(err):
			t.Errorf("racing create: %v", err)
		}
	}
	if wins != 1 {
		t.Errorf("%d racing creates succeeded, want 1", wins)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("id %s given twice", id)
		}
		seen[id] = true
	}
}

// TestListCancel: cancelling the context ends the listing with the
// context's error and leaves no goroutine behind.
func TestListCancel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := fake.NewServer(mocktest.ContractCheck(t))
	defer srv.Close()
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer hc.CloseIdleConnections()
	c, err := partner.New(partner.WithBaseURL(srv.URL), partner.WithHTTPClient(hc),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		srv.AddUser(fake.User{UserName: fmt.Sprintf("c%d@example.com", i)})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := 0
	var last error
	for _, err := range c.SCIM.List(ctx, scim.ListParams{Count: 3}) {
		if err != nil {
			last = err
			break
		}
		if seen++; seen == 2 {
			cancel()
		}
	}
	if !errors.Is(last, context.Canceled) || seen != 3 {
		t.Errorf("after cancel: saw %d users, err %v; want the rest of the page, then context.Canceled", seen, last)
	}
}

// TestListFilterAgainstTheFake: the fake, like the deployed service, takes
// only userName eq "..." by default and refuses other filters with a 400
// invalidFilter.
func TestListFilterAgainstTheFake(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	if _, err := srv.AddUser(fake.User{UserName: "ada@example.com", Active: new(false)}); err != nil {
		t.Fatal(err)
	}
	users, err := paging.Collect(c.SCIM.List(ctx, scim.ListParams{Filter: "userName eq " + scim.Quote("ADA@example.com")}))
	if err != nil || len(users) != 1 || users[0].UserName != "ada@example.com" {
		t.Fatalf("userName eq: %+v, %v", users, err)
	}
	_, err = paging.Collect(c.SCIM.List(ctx, scim.ListParams{Filter: "active eq false"}))
	var perr *partner.Error
	if !partner.IsBadRequest(err) || !errors.As(err, &perr) || perr.SCIMType != string(scim.ErrorTypeInvalidFilter) {
		t.Errorf("active eq false: %v, want 400 invalidFilter", err)
	}
}

// TestListPagesOnResourcesAgainstTheFake lists through a fake that
// answers totalResults 0, as the deployed example does: the listing goes
// on by resources and ends on the short last page.
func TestListPagesOnResourcesAgainstTheFake(t *testing.T) {
	srv, c := newFake(t, fake.WithDeployment(fake.Deployment{SCIMZeroTotals: true}))
	for i := range 10 {
		if _, err := srv.AddUser(fake.User{UserName: fmt.Sprintf("z%02d@example.com", i)}); err != nil {
			t.Fatal(err)
		}
	}
	users, err := paging.Collect(c.SCIM.List(context.Background(), scim.ListParams{Count: 4}))
	if err != nil || len(users) != 10 || users[9].UserName != "z09@example.com" {
		t.Fatalf("listed %d users, %v", len(users), err)
	}
	if n := srv.CountRequests(http.MethodGet, "/api/scim/v2/Users"); n != 3 {
		t.Errorf("%d list requests, want 3 (4+4+2)", n)
	}
	u, err := c.SCIM.FindByUserName(context.Background(), "Z03@example.com")
	if err != nil || u.UserName != "z03@example.com" {
		t.Errorf("FindByUserName = %+v, %v", u, err)
	}
}

// TestListEndsAgainstAFakeIgnoringStartIndex: against a fake that answers
// every page from the first user, as a service ignoring startIndex does,
// the listing yields each user once and ends with ErrPageRepeated, with
// or without a page size.
func TestListEndsAgainstAFakeIgnoringStartIndex(t *testing.T) {
	for _, count := range []int{0, 4} {
		// A listing that does not end is stopped at its 10th request, so
		// that it fails here rather than at the test's timeout.
		ctx, stop := context.WithCancel(context.Background())
		var calls atomic.Int32
		cap10 := fake.WithMiddleware(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/api/scim/v2/Users" && calls.Add(1) >= 10 {
					stop()
				}
				next.ServeHTTP(w, r)
			})
		})
		srv, c := newFake(t, fake.WithDeployment(fake.Deployment{SCIMStartIndexIgnored: true, SCIMZeroTotals: true}), cap10)
		for i := range 6 {
			if _, err := srv.AddUser(fake.User{UserName: fmt.Sprintf("r%02d@example.com", i)}); err != nil {
				t.Fatal(err)
			}
		}
		users, err := paging.Collect(c.SCIM.List(ctx, scim.ListParams{Count: count}))
		stop()
		want := map[int]int{0: 6, 4: 4}[count]
		if !errors.Is(err, scim.ErrPageRepeated) || len(users) != want {
			t.Errorf("count %d: %d users, %v; want %d and ErrPageRepeated", count, len(users), err, want)
		}
		if n := srv.CountRequests(http.MethodGet, "/api/scim/v2/Users"); n != 2 {
			t.Errorf("count %d: %d list requests, want 2", count, n)
		}
	}
}

// TestListResumesFromCheckpoint stops a listing of 11 users in pages of 4
// after every user (a break), keeps the last checkpoint and lists from
// it: every user comes exactly once, in order, and the listing that goes
// on asks the fake for no index before the checkpoint's.
func TestListResumesFromCheckpoint(t *testing.T) {
	srv, c := newFake(t)
	for i := range 11 {
		if _, err := srv.AddUser(fake.User{UserName: fmt.Sprintf("r%02d@example.com", i)}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	all, err := paging.Collect(c.SCIM.List(ctx, scim.ListParams{Count: 4}))
	if err != nil || len(all) != 11 {
		t.Fatalf("listing: %d users, %v", len(all), err)
	}
	for stop := 1; stop <= len(all); stop++ {
		var at scim.ListCheckpoint
		var got []string
		for u, err := range c.SCIM.ListWith(ctx, scim.ListParams{Count: 4}, scim.ListOptions{Checkpoint: func(cp scim.ListCheckpoint) { at = cp }}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, u.UserName)
			if len(got) == stop {
				break
			}
		}
		if at.StartIndex != stop+1 {
			t.Fatalf("stopped after %d users: checkpoint %+v, want startIndex %d", stop, at, stop+1)
		}
		before := len(srv.Requests())
		for u, err := range c.SCIM.ListWith(ctx, scim.ListParams{Count: 4}, scim.ListOptions{From: &at}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, u.UserName)
		}
		var names []string
		for _, u := range all {
			names = append(names, u.UserName)
		}
		if !slices.Equal(got, names) {
			t.Fatalf("stopped after %d and resumed: %v", stop, got)
		}
		if first := srv.Requests()[before]; !strings.Contains(first.Query, fmt.Sprintf("startIndex=%d", at.StartIndex)) {
			t.Fatalf("the resumed listing began with %s?%s", first.Path, first.Query)
		}
	}
}

// TestListRefusesForeignCheckpoint: a checkpoint of a listing with another
// filter is refused before anything is sent.
func TestListRefusesForeignCheckpoint(t *testing.T) {
	srv, c := newFake(t)
	before := len(srv.Requests())
	from := &scim.ListCheckpoint{Filter: `userName eq "a@example.com"`, StartIndex: 3}
	for name, p := range map[string]scim.ListParams{"no filter": {}, "other filter": {Filter: `userName eq "b@example.com"`}} {
		_, err := paging.Collect(c.SCIM.ListWith(context.Background(), p, scim.ListOptions{From: from}))
		if err == nil || !strings.Contains(err.Error(), "checkpoint") {
			t.Errorf("%s: %v, want the checkpoint refused", name, err)
		}
	}
	_, err := paging.Collect(c.SCIM.ListWith(context.Background(), scim.ListParams{}, scim.ListOptions{From: &scim.ListCheckpoint{}}))
	if err == nil || !strings.Contains(err.Error(), "startIndex") {
		t.Errorf("a zero checkpoint: %v, want it refused", err)
	}
	if n := len(srv.Requests()) - before; n != 0 {
		t.Errorf("%d requests sent for refused checkpoints", n)
	}
}

// TestListCheckpointOnError: a listing that fails before yielding a user
// still tells its checkpoint, the StartIndex it began at, to the
// deprecated ListParams.Checkpoint as to ListOptions.Checkpoint.
func TestListCheckpointOnError(t *testing.T) {
	srv, c := newFake(t)
	srv.InjectFault(fake.Fault{Method: "GET", Path: "/api/scim/v2/Users", Status: 400, Times: 1})
	var cp scim.ListCheckpoint
	_, err := paging.Collect(c.SCIM.ListWith(context.Background(), scim.ListParams{StartIndex: 3}, scim.ListOptions{Checkpoint: func(c scim.ListCheckpoint) { cp = c }}))
	if !partner.IsBadRequest(err) || cp.StartIndex != 3 {
		t.Fatalf("listing ended with %v, checkpoint %+v; want a 400 error and startIndex 3", err, cp)
	}
	srv.InjectFault(fake.Fault{Method: "GET", Path: "/api/scim/v2/Users", Status: 400, Times: 1})
	at := -1
	p := scim.ListParams{StartIndex: 3, Checkpoint: func(i int) { at = i }}
	for _, err = range c.SCIM.List(context.Background(), p) {
		break
	}
	if !partner.IsBadRequest(err) || at != 3 {
		t.Fatalf("listing ended with %v, checkpoint %d; want a 400 error and checkpoint 3", err, at)
	}
}
