package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/fakeserver/fakeadmin"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)

func TestEventsKindsListDelete(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData())
	defer srv.Close()
	c := newCLI(srv)
	r := c.must(t, "events", "kinds")
	for _, k := range []string{"object.update", "object.all"} {
		if !strings.Contains(r.stdout, k) {
			t.Errorf("kinds lack %s:\n%s", k, r.stdout)
		}
	}
	before := len(srv.Subscribers())
	body := `{"name":"cli-test","event":["object.update"],"subscriber_type":"webhook","webhook_settings":{"callback_url":"http://127.0.0.1:9/x"}}`
	tok := fakeToken(t, srv)
	req, _ := http.NewRequest("POST", srv.URL+"/event/v1/subscriber", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("subscribe: %v %v", err, resp)
	}
	resp.Body.Close()
	subs := srv.Subscribers()
	id := subs[len(subs)-1].ID

	r = c.must(t, "events", "list")
	if !strings.Contains(r.stdout, id) || !strings.Contains(r.stdout, "cli-test") {
		t.Fatalf("list:\n%s", r.stdout)
	}
	c.must(t, "events", "delete", id)
	if len(srv.Subscribers()) != before {
		t.Fatal("subscriber not deleted")
	}
	if r := c.run(t, "events", "delete", id); r.code != exitFail || !strings.Contains(r.stderr, id) {
		t.Fatalf("delete again: exit %d, stderr %q", r.code, r.stderr)
	}
}

func fakeToken(t *testing.T, srv *fake.Server) string {
	t.Helper()
	resp, err := http.Post(srv.URL+"/oauth/token", "application/json", strings.NewReader(
		`{"grant_type":"client_credentials","client_id":"`+fake.DefaultClientID+`","client_secret":"`+fake.DefaultClientSecret+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	json.NewDecoder(resp.Body).Decode(&tok)
	return tok.AccessToken
}

// TestEventsListen runs listen until "Ctrl-C": it subscribes, prints a
// delivery as a JSON line, forwards it, and unsubscribes on the way out.
func TestEventsListen(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData(), fake.WithDeliveryPolicy(fake.DeliveryPolicy{Backoff: time.Millisecond}))
	defer srv.Close()
	var mu sync.Mutex
	var forwarded []string
	fail := true
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		forwarded = append(forwarded, string(b))
		if fail { // the first forward fails: the service must send it again
			fail = false
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer target.Close()

	c := newCLI(srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- c.runCtx(ctx, t, &stdout, &stderr, "events", "listen", "--local", "--events", "object.update,object.create",
			"--integration", demo.OpportunityIntegration, "--forward", target.URL)
	}()
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "listening on") }, &stderr)
	subs := srv.Subscribers()
	if len(subs) < 2 {
		t.Fatalf("subscribers: %+v", subs)
	}
	subs = subs[len(subs)-2:] // one per kind, each at its own path
	for i, kind := range []string{"object.update", "object.create"} {
		if sub := subs[i]; strings.Join(sub.Events, ",") != kind || sub.IntegrationID != demo.OpportunityIntegration ||
			!strings.HasPrefix(sub.CallbackURL, "http://127.0.0.1:") || !strings.Contains(sub.CallbackURL, "/hooks/partner/"+kind+"/") {
			t.Fatalf("subscriber for %s: %+v", kind, sub)
		}
	}
	sub := subs[0]

	srv.UpdateObject(demo.Opportunity2, map[string]any{"stage": "listen-test"})
	opp, _ := srv.Object(demo.Opportunity2)
	waitFor(t, func() bool { return strings.Count(stdout.String(), "\n") >= 2 }, &stderr)
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var got struct {
		Event        string         `json:"event"`
		SubscriberID string         `json:"subscriber_id"`
		Body         map[string]any `json:"body"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil || got.Body["stage"] != "listen-test" || got.Body["name"] != opp.Fields["name"] ||
		got.Event != "object.update" || got.SubscriberID != sub.ID {
		t.Fatalf("printed delivery %q: %v", lines[0], err)
	}
	if lines[0] != lines[1] {
		t.Fatalf("the retried delivery differs:\n%s\n%s", lines[0], lines[1])
	}
	mu.Lock()
	if len(forwarded) != 2 || forwarded[1] != forwarded[0] {
		t.Errorf("forwarded: %q", forwarded)
	}
	mu.Unlock()
	if !strings.Contains(stderr.String(), "forward failed: forward answered 503 Service Unavailable; answered the service 503") ||
		!strings.Contains(stderr.String(), "forwarded: 204") {
		t.Errorf("forward outcomes on stderr: %q", stderr.String())
	}
	if err := srv.WaitDeliveries(ctx); err != nil {
		t.Fatal(err)
	}
	if ds := srv.Deliveries(); len(ds) != 2 || ds[0].Status != 503 || ds[1].Status != 204 || !ds[1].Delivered {
		t.Errorf("the service saw %+v, want 503 then 204", ds)
	}

	cancel() // Ctrl-C
	select {
	case code := <-done:
		if code != exitInterrupted {
			t.Fatalf("exit %d, stderr %q", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("listen did not stop")
	}
	for _, s := range srv.Subscribers() {
		if s.ID == subs[0].ID || s.ID == subs[1].ID {
			t.Fatal("a subscriber was not removed on exit")
		}
	}
	if !strings.Contains(stderr.String(), "unsubscribed "+subs[0].ID) || !strings.Contains(stderr.String(), "unsubscribed "+subs[1].ID) {
		t.Errorf("stderr: %q", stderr.String())
	}
}

// TestEventsListenForwardStatus: the service is answered with the
// forward's own 4xx, so it gives up as it would with the forward itself,
// and with 502 when the forward cannot be reached.
func TestEventsListenForwardStatus(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData(), fake.WithDeliveryPolicy(fake.DeliveryPolicy{Backoff: time.Millisecond, Attempts: 2}))
	defer srv.Close()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such record", http.StatusUnprocessableEntity)
	}))
	defer target.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // nothing listens there any more

	for _, tc := range []struct {
		forward  string
		statuses []int // what the service saw, attempt by attempt
		stderr   string
	}{
		{target.URL, []int{422}, "answered the service 422"},
		{gone.URL, []int{502, 502}, "answered the service 502"},
	} {
		srv.ResetDeliveries()
		c := newCLI(srv)
		ctx, cancel := context.WithCancel(context.Background())
		var stdout, stderr syncBuffer
		done := make(chan int, 1)
		go func() {
			done <- c.runCtx(ctx, t, &stdout, &stderr, "events", "listen", "--local", "--events", "object.update", "--forward", tc.forward)
		}()
		waitFor(t, func() bool { return strings.Contains(stderr.String(), "listening on") }, &stderr)
		srv.UpdateObject(demo.Opportunity1, map[string]any{"stage": "forward " + tc.stderr}) // a change each time
		// The CLI tells of its answer once it has sent it: wait for both.
		waitFor(t, func() bool {
			ds := srv.Deliveries()
			return len(ds) > 0 && ds[len(ds)-1].Final && strings.Contains(stderr.String(), tc.stderr)
		}, &stderr)
		var got []int
		for _, d := range srv.Deliveries() {
			got = append(got, d.Status)
		}
		if !slices.Equal(got, tc.statuses) || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("--forward %s: the service saw %v, want %v; stderr %q", tc.forward, got, tc.statuses, stderr.String())
		}
		cancel()
		if code := <-done; code != exitInterrupted {
			t.Errorf("exit %d", code)
		}
	}
}

// TestEventsListenSecret: listen registers its callback with a secret as
// the last path segment, refuses with 401 a POST that does not carry it,
// takes one that does, and prints the secret nowhere.
func TestEventsListenSecret(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData())
	defer srv.Close()
	stdout, stderr, stop := listening(t, newCLI(srv), "--events", "object.update")
	subs := srv.Subscribers()
	callback := subs[len(subs)-1].CallbackURL
	dir, secret := callback[:strings.LastIndexByte(callback, '/')], callback[strings.LastIndexByte(callback, '/')+1:]
	if !strings.HasSuffix(dir, "/hooks/partner/object.update") || len(secret) < events.MinSecretLen {
		t.Fatalf("callback URL %q has no secret segment", callback)
	}
	if !strings.Contains(stderr.String(), dir+"/<secret>") {
		t.Errorf("stderr does not show where deliveries go: %q", stderr.String())
	}
	post := func(u, body string) int {
		t.Helper()
		resp, err := http.Post(u, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, u := range []string{dir + "/", dir + "/" + string(events.NewSecret()), dir + "/" + secret[1:], dir + "/" + secret + "x", dir + "/?s=" + secret} {
		if code := post(u, `{"stage":"forged"}`); code != http.StatusUnauthorized {
			t.Errorf("forged POST to %s: %d, want 401", u, code)
		}
	}
	if code := post(callback, `{"stage":"genuine"}`); code != http.StatusNoContent {
		t.Fatalf("POST to the callback URL: %d, want 204", code)
	}
	waitFor(t, func() bool { return strings.Contains(stdout.String(), "\n") }, stderr)
	if got := strings.TrimSpace(stdout.String()); got != `{"event":"object.update","subscriber_id":"`+subs[len(subs)-1].ID+`","body":{"stage":"genuine"}}` {
		t.Fatalf("printed %q, want only the genuine delivery", got)
	}
	if code := stop(); code != exitInterrupted {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if strings.Contains(stdout.String()+stderr.String(), secret) {
		t.Fatalf("the secret was printed: stdout %q stderr %q", stdout.String(), stderr.String())
	}
}

// listening runs partnerctl events listen with args, and returns once it
// listens; stop is Ctrl-C and returns the exit status.
func listening(t *testing.T, c *cli, args ...string) (stdout, stderr *syncBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- c.runCtx(ctx, t, stdout, stderr, append([]string{"events", "listen", "--local"}, args...)...)
	}()
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "listening on") }, stderr)
	return stdout, stderr, func() int { cancel(); return <-done }
}

// TestEventsListenNeedsPublicURLOrLocal: without --public-url or --local,
// listen refuses to guess where the service is, toward a remote host and
// toward 127.0.0.1 alike (a base URL on this machine may be a proxy to a
// service elsewhere); the two together are refused too.
func TestEventsListenNeedsPublicURLOrLocal(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"https://api.example.com", "http://127.0.0.1:15001"} {
		c := &cli{env: map[string]string{"PARTNER_BASE_URL": base, "PARTNER_CLIENT_ID": "x", "PARTNER_CLIENT_SECRET": "y"}}
		if r := c.run(t, "events", "listen", "--events", "object.update"); r.code != exitUsage || !strings.Contains(r.stderr, "--public-url") || !strings.Contains(r.stderr, "--local") {
			t.Errorf("%s: exit %d, stderr %q", base, r.code, r.stderr)
		}
		if r := c.run(t, "events", "listen", "--events", "object.update", "--local", "--public-url", "https://hooks.example.com/p"); r.code != exitUsage || !strings.Contains(r.stderr, "exclude") {
			t.Errorf("%s, both: exit %d, stderr %q", base, r.code, r.stderr)
		}
	}
}

func waitFor(t *testing.T, cond func() bool, stderr *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out; stderr: %q", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestToken(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithTokenLifetime(30*time.Minute))
	defer srv.Close()
	c := newCLI(srv)
	r := c.must(t, "token")
	if !strings.Contains(r.stdout, "expires: ") || !strings.Contains(r.stdout, "(in 30m0s)") && !strings.Contains(r.stdout, "(in 29m59s)") ||
		!strings.Contains(r.stdout, "scopes:") || strings.Contains(r.stdout, "token:") {
		t.Fatalf("token:\n%s", r.stdout)
	}
	r = c.must(t, "token", "--show", "--scope", "reports")
	i := strings.Index(r.stdout, "token:   ")
	if i < 0 || !strings.Contains(r.stdout, "scopes:  reports (requested)") {
		t.Fatalf("token --show:\n%s", r.stdout)
	}
	tok := strings.TrimSpace(r.stdout[i+len("token:   "):])
	req, _ := http.NewRequest("POST", srv.URL+"/report/v1/list", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the shown token does not work: %v %v", err, resp.Status)
	}
	resp.Body.Close()
}

// TestEventsIntegrations lists the integrations bulk loads and
// subscriptions name.
func TestEventsIntegrations(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData())
	defer srv.Close()
	c := newCLI(srv)
	r := c.must(t, "events", "integrations")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "ID TYPE NAME DESCRIPTION" ||
		!strings.HasPrefix(lines[1], demo.AccountIntegration+" ") || !strings.HasPrefix(lines[2], demo.OpportunityIntegration+" ") {
		t.Fatalf("integrations:\n%s", r.stdout)
	}
	r = c.must(t, "events", "integrations", "--json")
	var list []map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 2 || list[0]["integration_id"] != demo.AccountIntegration {
		t.Fatalf("json: %v %s", err, r.stdout)
	}
}

func TestTokenJSON(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithTokenLifetime(30*time.Minute))
	defer srv.Close()
	c := newCLI(srv)
	var info struct {
		ExpiresAt   time.Time `json:"expires_at"`
		ExpiresIn   int64     `json:"expires_in"`
		Scopes      []string  `json:"scopes"`
		ScopesFrom  string    `json:"scopes_from"`
		AccessToken *string   `json:"access_token"`
	}
	r := c.must(t, "token", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &info); err != nil || info.ExpiresIn < 1700 || info.ExpiresIn > 1800 ||
		info.ExpiresAt.IsZero() || info.ScopesFrom != "client" || info.Scopes == nil || info.AccessToken != nil {
		t.Fatalf("token --json: %v %s", err, r.stdout)
	}
	r = c.must(t, "token", "--json", "--show", "--scope", "reports")
	info.AccessToken = nil
	if err := json.Unmarshal([]byte(r.stdout), &info); err != nil || info.ScopesFrom != "requested" ||
		len(info.Scopes) != 1 || info.Scopes[0] != "reports" || info.AccessToken == nil || *info.AccessToken == "" {
		t.Fatalf("token --json --show: %v %s", err, r.stdout)
	}
}

// TestEventsListenAdminUpdate follows the README: partnerctl events listen
// --events object.update against partnerfake's handler receives the
// change that the admin API's PATCH /_fake/objects/{id} makes.
func TestEventsListenAdminUpdate(t *testing.T) {
	t.Parallel()
	admin := fakeadmin.New(func() *fake.Fake {
		return fake.New(mocktest.ContractCheck(t), fake.WithDemoData(), fake.WithDeliveryPolicy(fake.DeliveryPolicy{Backoff: time.Millisecond}))
	})
	ts := httptest.NewServer(admin)
	admin.SetURL(ts.URL)
	defer func() { ts.Close(); admin.Close() }()
	c := &cli{env: map[string]string{"PARTNER_BASE_URL": ts.URL,
		"PARTNER_CLIENT_ID": fake.DefaultClientID, "PARTNER_CLIENT_SECRET": fake.DefaultClientSecret}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- c.runCtx(ctx, t, &stdout, &stderr, "events", "listen", "--local", "--events", "object.update")
	}()
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "listening on") }, &stderr)

	req, _ := http.NewRequest(http.MethodPatch, ts.URL+"/_fake/objects/"+demo.Opportunity2, strings.NewReader(`{"fields":{"stage":"won"}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("PATCH: %v %v", err, resp)
	}
	resp.Body.Close()
	waitFor(t, func() bool { return strings.Contains(stdout.String(), "\n") }, &stderr)
	var got struct{ Body map[string]any }
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout.String())), &got); err != nil || got.Body["stage"] != "won" {
		t.Fatalf("delivery %q: %v", stdout.String(), err)
	}
	cancel()
	if code := <-done; code != exitInterrupted {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestEventsListenNamesKindAndSubscriber: a stage change delivered for
// object.update and object.stage_change prints two lines that say which
// kind and subscriber each came for (the body alone is the same).
func TestEventsListenNamesKindAndSubscriber(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData())
	defer srv.Close()
	stdout, stderr, stop := listening(t, newCLI(srv), "--events", "object.update,object.stage_change")
	subs := srv.Subscribers()
	byKind := map[string]string{}
	for _, s := range subs[len(subs)-2:] {
		byKind[strings.Join(s.Events, ",")] = s.ID
	}
	srv.UpdateObject(demo.Opportunity1, map[string]any{"stage": "kinds-test"})
	waitFor(t, func() bool { return strings.Count(stdout.String(), "\n") >= 2 }, stderr)
	seen := map[string]string{}
	var bodies []string
	for line := range strings.SplitSeq(strings.TrimSpace(stdout.String()), "\n") {
		var d struct {
			Event        string          `json:"event"`
			SubscriberID string          `json:"subscriber_id"`
			Body         json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		seen[d.Event] = d.SubscriberID
		bodies = append(bodies, string(d.Body))
	}
	if len(seen) != 2 || seen["object.update"] != byKind["object.update"] || seen["object.stage_change"] != byKind["object.stage_change"] ||
		bodies[0] != bodies[1] {
		t.Fatalf("printed kinds and subscribers %v, want %v; bodies %q", seen, byKind, bodies)
	}
	if code := stop(); code != exitInterrupted || !strings.Contains(stderr.String(), "partnerctl: interrupted") {
		t.Fatalf("Ctrl-C: exit %d, stderr %q", code, stderr.String())
	}
}
