package events_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)

// testSecret is a well-formed secret for wire tests.
const testSecret events.Secret = "S3cr3t_token-0123456789abcdef"

func TestNewSecret(t *testing.T) {
	seen := map[events.Secret]bool{}
	for range 100 {
		s := events.NewSecret()
		if len(s) < events.MinSecretLen || strings.Trim(string(s), "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
			t.Fatalf("secret %q is not %d+ URL-safe characters", string(s), events.MinSecretLen)
		}
		if seen[s] {
			t.Fatalf("secret %q made twice", string(s))
		}
		seen[s] = true
	}
}

// TestSecretRedacted: a Secret, a SecretSet and SubscribeParams holding a
// secret print without it, with fmt and slog.
func TestSecretRedacted(t *testing.T) {
	p := events.SubscribeParams{Name: "n", CallbackURL: "https://hooks.example.com/p", Secret: testSecret}
	set := events.NewSecretSet(testSecret)
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("m", "secret", testSecret, "set", set, "params", p)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("m", "secret", testSecret, "set", set)
	out := fmt.Sprintf("%v %s %+v %#v %v %+v %#v %q", testSecret, testSecret, p, p, set, set, set, testSecret) + logs.String()
	if strings.Contains(out, string(testSecret)) {
		t.Fatalf("the secret shows: %s", out)
	}
	if !strings.Contains(out, "[redacted]") || !strings.Contains(out, "secrets: 1") {
		t.Fatalf("printed as %s", out)
	}
	// Marshalled it is redacted too; a stored secret is read back.
	var conf struct{ Secret events.Secret }
	if b, _ := json.Marshal(events.SubscribeParams{Secret: testSecret}); strings.Contains(string(b), string(testSecret)) {
		t.Fatalf("marshalled as %s", b)
	}
	if err := json.Unmarshal([]byte(`{"Secret":"`+string(testSecret)+`"}`), &conf); err != nil || conf.Secret != testSecret {
		t.Fatalf("unmarshalled %q, %v", string(conf.Secret), err)
	}
}

// TestSubscribeSecretWire: the secret is sent as the callback URL's last
// path segment, before a query; a malformed secret is refused before
// anything is sent, by an error that does not show it.
func TestSubscribeSecretWire(t *testing.T) {
	for _, tt := range []struct{ callback, want string }{
		{"https://hooks.example.com/partner", "https://hooks.example.com/partner/" + string(testSecret)},
		{"https://hooks.example.com/partner/", "https://hooks.example.com/partner/" + string(testSecret)},
		{"https://hooks.example.com", "https://hooks.example.com/" + string(testSecret)},
		{"https://hooks.example.com/p?tenant=7", "https://hooks.example.com/p/" + string(testSecret) + "?tenant=7"},
	} {
		c, mt := mocktest.New(t)
		mt.RegisterResponder(http.MethodPost, base+"/event/v1/subscriber", mocktest.JSONResponder(t,
			`{"subscriber_type":"webhook","event":["object.update"],"name":"n","webhook_settings":{"callback_url":"`+tt.want+`"}}`,
			200, `{"subscriber_id":"sub-1"}`))
		id, err := c.Events.Subscribe(context.Background(), events.SubscribeParams{Name: "n", Events: []events.Kind{events.KindObjectUpdate},
			CallbackURL: tt.callback, Secret: testSecret})
		if err != nil || id != "sub-1" {
			t.Errorf("%s: %q, %v", tt.callback, id, err)
		}
	}

	c, mt := mocktest.New(t)
	for _, bad := range []events.Secret{"short-but-secret", "has a space and is long enough!", "slash/in/the/secret/is/long/enough"} {
		_, err := c.Events.Subscribe(context.Background(), events.SubscribeParams{Name: "n", Events: []events.Kind{events.KindObjectUpdate},
			CallbackURL: "https://hooks.example.com/p", Secret: bad})
		if err == nil || !strings.HasPrefix(err.Error(), "partner: events: secret") || strings.Contains(err.Error(), string(bad)) {
			t.Errorf("secret %q: %v", string(bad), err)
		}
	}
	// A refused callback URL is shown without the secret.
	_, err := c.Events.Subscribe(context.Background(), events.SubscribeParams{Name: "n", Events: []events.Kind{events.KindObjectUpdate},
		CallbackURL: "http://hooks.example.com/p", Secret: testSecret})
	if err == nil || strings.Contains(err.Error(), string(testSecret)) {
		t.Errorf("plain http callback: %v", err)
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Errorf("%d requests sent for refused subscriptions", n)
	}
}

// TestHandlerSecrets: with Secrets, only a path ending in one of them is
// served; anything else is answered 401 before the method or the body
// is looked at, and neither the answer nor the log shows a secret, good
// or wrong.
func TestHandlerSecrets(t *testing.T) {
	other := events.NewSecret()
	var delivered atomic.Int32
	var logs bytes.Buffer
	h := &events.Handler{
		Deliver:      func(context.Context, *events.Delivery) error { delivered.Add(1); return nil },
		Secrets:      events.NewSecretSet(testSecret, other),
		MaxBodyBytes: 100,
		Logger:       slog.New(slog.NewTextHandler(&logs, nil)),
	}
	wrong := strings.Repeat("x", len(testSecret))
	for _, tt := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/hook/" + string(testSecret), `{"a":"1"}`, 204},
		{"POST", "/hook/" + string(other), `{"a":"1"}`, 204},
		{"POST", "/" + string(testSecret), `{"a":"1"}`, 204},
		{"POST", "/hook/" + wrong, `{"a":"1"}`, 401},
		{"POST", "/hook/" + string(testSecret)[1:], `{"a":"1"}`, 401},
		{"POST", "/hook/" + string(testSecret) + "x", `{"a":"1"}`, 401},
		{"POST", "/hook/" + string(testSecret) + "/", `{"a":"1"}`, 401},
		{"POST", "/hook/", `{"a":"1"}`, 401},
		{"POST", "/hook?s=" + string(testSecret), `{"a":"1"}`, 401},
		{"GET", "/hook/" + wrong, "", 401},
		{"POST", "/hook/" + wrong, strings.Repeat("x", 200), 401},
		{"GET", "/hook/" + string(testSecret), "", 405},
		{"POST", "/hook/" + string(testSecret), strings.Repeat("x", 200), 413},
		{"POST", "/hook/" + string(testSecret), `[]`, 400},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body)))
		if rec.Code != tt.status {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, rec.Code, tt.status)
		}
		if tt.status == 405 && rec.Header().Get("Allow") != "POST" {
			t.Errorf("405 without Allow: POST")
		}
		if b := rec.Body.String(); strings.Contains(b, string(testSecret)) || strings.Contains(b, wrong) {
			t.Errorf("%s %s: the answer shows the secret: %q", tt.method, tt.path, b)
		}
	}
	if n := delivered.Load(); n != 3 {
		t.Errorf("%d deliveries handled, want 3", n)
	}
	if l := logs.String(); strings.Contains(l, string(testSecret)) || strings.Contains(l, string(other)) || strings.Contains(l, wrong) ||
		!strings.Contains(l, "status=401") || !strings.Contains(l, "path=/hook/***") {
		t.Errorf("log:\n%s", l)
	}

	// Rotation: the old secret removed, its URL is refused.
	h.Secrets.Remove(testSecret)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/hook/"+string(testSecret), strings.NewReader(`{}`)))
	if rec.Code != 401 || h.Secrets.Len() != 1 {
		t.Errorf("after removing the secret: %d, %d secrets left", rec.Code, h.Secrets.Len())
	}
	// An empty set refuses everything.
	h.Secrets.Remove(other)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/hook/", strings.NewReader(`{}`)))
	if rec.Code != 401 {
		t.Errorf("empty set: %d", rec.Code)
	}
}

// TestSecretAgainstFake: a subscriber registered with a secret gets its
// deliveries through a Handler with that secret, a request without it is
// refused, the secret can be rotated without losing a delivery, and the
// secret shows neither in the fake's request log nor in its delivery
// log.
func TestSecretAgainstFake(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	var got []string
	var refused atomic.Int32
	set := events.NewSecretSet()
	h := &events.Handler{Secrets: set, Deliver: func(_ context.Context, d *events.Delivery) error {
		got = append(got, d.ObjectID+":"+d.Fields["note"])
		return nil
	}}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code == 401 {
			refused.Add(1)
		}
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	defer rc.Close()

	subscribe := func(s events.Secret) string {
		t.Helper()
		id, err := c.Events.Subscribe(ctx, events.SubscribeParams{Name: "crm", Events: []events.Kind{events.KindObjectUpdate},
			CallbackURL: rc.URL + "/partner", Secret: s})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	old := events.NewSecret()
	set.Add(old)
	oldID := subscribe(old)
	srv.UpdateObject(demo.Opportunity1, map[string]any{"note": "one"})
	settle(t, srv)

	// Rotation: a second subscriber with a new secret, then the old one
	// removed, then its secret.
	next := events.NewSecret()
	set.Add(next)
	newID := subscribe(next)
	if err := c.Events.Unsubscribe(ctx, oldID); err != nil {
		t.Fatal(err)
	}
	set.Remove(old)
	srv.UpdateObject(demo.Opportunity1, map[string]any{"note": "two"})
	settle(t, srv)
	if want := []string{demo.Opportunity1 + ":one", demo.Opportunity1 + ":two"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("delivered %v, want %v", got, want)
	}

	// Whoever knows the endpoint but not the secret is refused.
	for _, u := range []string{rc.URL + "/partner", rc.URL + "/partner/", rc.URL + "/partner/" + string(old)} {
		resp, err := http.Post(u, "application/json", strings.NewReader(`{"object_id":"forged"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("POST %s without the secret: %d", u, resp.StatusCode)
		}
	}
	if refused.Load() != 3 || len(got) != 2 {
		t.Errorf("%d refused, %d delivered", refused.Load(), len(got))
	}
	if subs := srv.Subscribers(); len(subs) != 1 || subs[0].ID != newID || !strings.HasSuffix(subs[0].CallbackURL, "/partner/"+string(next)) {
		t.Fatalf("the fake's subscribers: %+v", subs)
	}

	// A subscriber whose callback fails: the delivery log's error names
	// the URL masked.
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	downSecret := events.NewSecret()
	if _, err := c.Events.Subscribe(ctx, events.SubscribeParams{Name: "down", Events: []events.Kind{events.KindObjectUpdate},
		CallbackURL: downURL + "/partner", Secret: downSecret}); err != nil {
		t.Fatal(err)
	}
	srv.UpdateObject(demo.Opportunity2, map[string]any{"note": "three"})
	settle(t, srv)

	var log strings.Builder
	for _, r := range srv.Requests() {
		fmt.Fprintf(&log, "%+v\n", r)
	}
	sawErr := false
	for _, d := range srv.Deliveries() {
		fmt.Fprintf(&log, "%+v\n", d)
		if !strings.HasSuffix(d.URL, "/partner/***") {
			t.Errorf("delivery log URL %q", d.URL)
		}
		sawErr = sawErr || strings.Contains(d.Err, "/partner/***")
	}
	if !sawErr {
		t.Errorf("no failed delivery names its masked URL:\n%s", log.String())
	}
	for _, s := range []events.Secret{old, next, downSecret} {
		if strings.Contains(log.String(), string(s)) {
			t.Errorf("the fake's logs show a secret:\n%s", log.String())
		}
	}
}

// FuzzHandler sends arbitrary methods, URLs, headers and bodies to a
// Handler with Secrets: it never panics, answers one of its documented
// statuses, calls Deliver only for a POST to a path ending in its secret
// whose body is a JSON object within the limit, with that body, and
// shows the secret in neither the answer, its log nor its span. The seed
// corpus is in testdata/fuzz/FuzzHandler.
func FuzzHandler(f *testing.F) {
	secret := string(testSecret)
	f.Add("POST", "/hook/"+secret, "Content-Type: application/json", []byte(`{"event":"object.update","object_id":"o1"}`))
	f.Add("POST", "/hook/"+secret[:10], "", []byte(`{}`))
	f.Add("GET", "/hook/"+secret, "", []byte(nil))
	f.Fuzz(func(t *testing.T, method, target, header string, body []byte) {
		u, err := url.Parse(target)
		if err != nil || method == "" {
			return
		}
		req := (&http.Request{Method: method, URL: u, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)),
			ContentLength: int64(len(body)), Host: "hooks.example.com"}).WithContext(context.Background())
		if k, v, ok := strings.Cut(header, ":"); ok {
			req.Header[k] = []string{strings.TrimSpace(v)}
		}
		var logs bytes.Buffer
		var got *events.Delivery
		sr := tracetest.NewSpanRecorder()
		h := &events.Handler{
			Deliver:        func(_ context.Context, d *events.Delivery) error { got = d; return nil },
			Secrets:        events.NewSecretSet(testSecret),
			MaxBodyBytes:   1 << 10,
			Logger:         slog.New(slog.NewTextHandler(&logs, nil)),
			TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr)),
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		allowed := strings.HasSuffix(u.Path, "/"+secret) || u.Path == secret
		switch rec.Code {
		case 204:
			if !allowed || method != "POST" || got == nil || !bytes.Equal(got.Raw, body) || len(body) > 1<<10 {
				t.Fatalf("%s %q delivered %+v", method, target, got)
			}
		case 401:
			if allowed {
				t.Fatalf("%s %q: 401 with the secret", method, target)
			}
		case 400, 405, 413:
			if !allowed {
				t.Fatalf("%s %q: %d without the secret", method, target, rec.Code)
			}
		default:
			t.Fatalf("%s %q: status %d", method, target, rec.Code)
		}
		if rec.Code != 204 && got != nil {
			t.Fatalf("%s %q: answered %d after delivering", method, target, rec.Code)
		}
		var spans strings.Builder
		for _, s := range sr.Ended() {
			fmt.Fprintf(&spans, "%s %s %v\n", s.Name(), s.Status().Description, s.Attributes())
		}
		if strings.Contains(rec.Body.String(), secret) || strings.Contains(logs.String(), secret) || strings.Contains(spans.String(), secret) {
			t.Fatalf("%s %q: the secret shows:\n%s\n%s\n%s", method, target, rec.Body.String(), logs.String(), spans.String())
		}
	})
}
