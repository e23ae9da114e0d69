package fake

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/fake/demo"
)

// TestSubscriptionKeyRequired: with WithSubscriptionKey every route but
// the signed upload answers 401 in the gateway's shape until the key comes
// in the header or the query; the key never reaches the request log.
func TestSubscriptionKeyRequired(t *testing.T) {
	const key = "sk-41c7e2"
	tf := newTestFake(t, WithDeployment(Deployment{SubscriptionKey: key}))
	tokenBody := `{"grant_type":"client_credentials","client_id":"` + DefaultClientID + `","client_secret":"` + DefaultClientSecret + `"}`

	a := tf.do(t, "POST", "/oauth/token", "application/json", tokenBody)
	if a.status != 401 || a.body["statusCode"] != float64(401) || !strings.Contains(a.raw, "missing subscription key") {
		t.Fatalf("token without the key: %d %s", a.status, a.raw)
	}
	a = tf.do(t, "POST", "/oauth/token", "application/json", tokenBody, "Ocp-Apim-Subscription-Key", "other")
	if a.status != 401 || !strings.Contains(a.raw, "invalid subscription key") {
		t.Fatalf("token with a wrong key: %d %s", a.status, a.raw)
	}
	a = tf.do(t, "POST", "/oauth/token", "application/json", tokenBody, "Ocp-Apim-Subscription-Key", key)
	if a.status != 200 {
		t.Fatalf("token with the key: %d %s", a.status, a.raw)
	}
	tok, _ := a.body["access_token"].(string)
	if a := tf.do(t, "GET", "/testonly/v1/ping", "", "", "Authorization", "Bearer "+tok); a.status != 401 || tf.pings.Load() != 0 {
		t.Fatalf("API call without the key: %d %s", a.status, a.raw)
	}
	if a := tf.do(t, "GET", "/testonly/v1/ping?subscription-key="+key, "", "", "Authorization", "Bearer "+tok); a.status != 200 {
		t.Fatalf("API call with the key in the query: %d %s", a.status, a.raw)
	}
	// The signed upload URL is storage, not behind the gateway: it
	// answers on its own terms (404 for an unknown upload), not 401.
	if a := tf.do(t, "POST", "/upload/nope", "text/csv", "a\n1\n"); a.status == 401 {
		t.Fatalf("upload URL asked for the subscription key: %s", a.raw)
	}
	dump := fmt.Sprintf("%+v", tf.Requests())
	if strings.Contains(dump, key) {
		t.Fatalf("request log holds the key: %s", dump)
	}
	if !strings.Contains(dump, "subscription-key=%2A%2A%2A") || !strings.Contains(dump, "Fault:subscription-key") {
		t.Fatalf("request log does not show the masked key and the refusals: %s", dump)
	}
}

// TestSubscriptionKeyHeaderName: the header the key is read from can be
// renamed; the default one then does not count.
func TestSubscriptionKeyHeaderName(t *testing.T) {
	tf := newTestFake(t, WithDeployment(Deployment{SubscriptionKey: "k1", SubscriptionKeyHeader: "X-Gateway-Key"}))
	body := `{"grant_type":"client_credentials","client_id":"` + DefaultClientID + `","client_secret":"` + DefaultClientSecret + `"}`
	if a := tf.do(t, "POST", "/oauth/token", "application/json", body, "Ocp-Apim-Subscription-Key", "k1"); a.status != 401 {
		t.Fatalf("default header after renaming: %d", a.status)
	}
	if a := tf.do(t, "POST", "/oauth/token", "application/json", body, "X-Gateway-Key", "k1"); a.status != 200 {
		t.Fatalf("renamed header: %d %s", a.status, a.raw)
	}
}

// TestNoScopesByDefault: the interface defines no scopes, so a client
// registered with scopes and a token asking for any scope may use every
// area unless WithScopeChecks is given.
func TestNoScopesByDefault(t *testing.T) {
	tf := newTestFake(t, WithClient("narrow", "s", scopeReports))
	a := tf.do(t, "POST", "/oauth/token", "application/json", `{"grant_type":"client_credentials","client_id":"narrow","client_secret":"s","scope":"anything at-all"}`)
	if a.status != 200 {
		t.Fatalf("token with unknown scopes: %d %s", a.status, a.raw)
	}
	tok, _ := a.body["access_token"].(string)
	if a := tf.do(t, "POST", "/testonly/v1/bump", "", "", "Authorization", "Bearer "+tok); a.status != 200 {
		t.Fatalf("scim route with a reports-only client: %d %s", a.status, a.raw)
	}

	tf = newTestFake(t, WithClient("narrow", "s", scopeReports), WithScopeChecks())
	a = tf.do(t, "POST", "/oauth/token", "application/json", `{"grant_type":"client_credentials","client_id":"narrow","client_secret":"s"}`)
	tok, _ = a.body["access_token"].(string)
	if a := tf.do(t, "POST", "/testonly/v1/bump", "", "", "Authorization", "Bearer "+tok); a.status != 403 {
		t.Fatalf("scim route with a reports-only client and scope checks: %d %s", a.status, a.raw)
	}
}

// TestPortalWord: the audit field, the referral field and the referral
// event kind follow the fake's portal word, given with WithWords (or the
// deprecated Deployment fields, which keep working); the fake's
// Connection hands out the words it speaks, the interface's stand-ins for
// the ones not given.
func TestPortalWord(t *testing.T) {
	acme := deployment.Words{EnvHeader: "x-acme-env", PortalWord: "acme", SubscriptionKeyHeader: "Ocp-Apim-Subscription-Key"}
	for name, opts := range map[string][]Option{
		"WithWords":          {WithWords(deployment.Words{PortalWord: "acme", EnvHeader: "x-acme-env"})},
		"Deployment":         {WithDeployment(Deployment{PortalWord: "acme", EnvHeader: "x-acme-env"})},
		"one word at a time": {WithWords(deployment.Words{PortalWord: "acme"}), WithWords(deployment.Words{EnvHeader: "x-acme-env"})},
	} {
		f := New(opts...)
		if got := f.Connection().Words; got != acme {
			t.Errorf("%s: Connection().Words = %+v, want %+v", name, got, acme)
		}
		if f.AuditField() != "acme.integration_status" || f.ReferralField() != "acme.referral_id" || f.ReferralEvent() != "object.acme_referral_submit" {
			t.Errorf("%s: words: %s %s %s", name, f.AuditField(), f.ReferralField(), f.ReferralEvent())
		}
		f.Close()
	}
	d := New()
	defer d.Close()
	want := deployment.Words{EnvHeader: "x-svc-env", PortalWord: "partner_portal", SubscriptionKeyHeader: "Ocp-Apim-Subscription-Key"}
	if got := d.Connection().Words; got != want || got.ReferralEvent() != eventPartnerPortalReferralSubmit {
		t.Fatalf("default words: %+v, want %+v", got, want)
	}

	tf := newTestFake(t, WithWords(deployment.Words{PortalWord: "acme", EnvHeader: "x-acme-env"}))
	tok, _ := tf.token(t)
	id := tf.AddObject(Object{Type: "opportunity", Fields: map[string]any{"name": "Deal"}})
	auth := []string{"Authorization", "Bearer " + tok, "x-acme-env", "sbx-1"}
	a := tf.do(t, "PATCH", "/app/v1/object/"+id+"/audit", "application/json",
		`{"field_name":"acme.integration_status","status_code":"LINKED","message":"ok"}`, auth...)
	if a.status != 200 || a.body["field_name"] != "acme.integration_status" {
		t.Fatalf("audit with the portal word: %d %s", a.status, a.raw)
	}
	a = tf.do(t, "PATCH", "/app/v1/object/"+id+"/audit", "application/json",
		`{"field_name":"partner_portal.integration_status","status_code":"LINKED","message":"ok"}`, auth...)
	if a.status != 400 || !strings.Contains(a.raw, "acme.integration_status") {
		t.Fatalf("audit with the stand-in word on a renamed fake: %d %s", a.status, a.raw)
	}
	tf.UpdateObject(id, map[string]any{"acme.referral_id": "R-1"})
	a = tf.do(t, "GET", "/app/v1/object/"+id+"/external_id", "", "", auth...)
	if !strings.Contains(a.raw, `{"field_name":"acme.referral_id","external_id":"R-1"}`) {
		t.Fatalf("external ids: %d %s", a.status, a.raw)
	}
	a = tf.do(t, "GET", "/event/v1/metadata/event", "", "", auth...)
	if !strings.Contains(a.raw, `"object.acme_referral_submit"`) || strings.Contains(a.raw, "partner_portal") {
		t.Fatalf("event kinds: %s", a.raw)
	}
	reqs := tf.Requests()
	if last := reqs[len(reqs)-1]; last.Env != "sbx-1" {
		t.Fatalf("logged env %q, want the renamed header's value", last.Env)
	}
}

// TestDeliveryFlatByDefault: a delivery is the changed object's fields as
// strings and nothing else, as the deployed service sends it; the fake's
// envelope comes only with WithDeliveryEnvelope, and the event schema
// follows.
func TestDeliveryFlatByDefault(t *testing.T) {
	srv := NewServer(WithDeliveryPolicy(DeliveryPolicy{Backoff: time.Millisecond}))
	defer srv.Close()
	c := newEvClient(t, srv)
	rc := newEvReceiver(t, nil)
	c.subscribe(evSubscribeBody(rc.URL+"/h", []string{"object.update"}, ""))
	id := srv.AddObject(Object{Type: "opportunity", Fields: map[string]any{
		"name": "Deal", "amount": 12000, "sales_details": map[string]any{"partner": "P1"}}})
	srv.UpdateObject(id, map[string]any{"stage": "won"})
	evWait(t, srv.Fake)
	got := rc.bodies("/h")
	want := map[string]string{"name": "Deal", "amount": "12000", "sales_details.partner": "P1", "stage": "won"}
	if len(got) != 1 || !maps.Equal(got[0], want) {
		t.Fatalf("deliveries %v, want one flat body %v", got, want)
	}
	var schema struct {
		Schema map[string]any `json:"schema"`
	}
	if st := c.do("GET", "/event/v1/metadata/event/object.update", "", &schema); st != 200 {
		t.Fatalf("schema: %d", st)
	}
	if props, _ := schema.Schema["properties"].(map[string]any); len(props) != 0 || schema.Schema["required"] != nil {
		t.Fatalf("flat schema names envelope members: %v", schema.Schema)
	}

	env := NewServer(WithDeliveryPolicy(DeliveryPolicy{Backoff: time.Millisecond}), WithDeliveryEnvelope())
	defer env.Close()
	ce := newEvClient(t, env)
	sub := ce.subscribe(evSubscribeBody(rc.URL+"/env", []string{"object.update"}, ""))
	id = env.AddObject(Object{Type: "opportunity", Fields: map[string]any{"name": "Deal"}})
	env.UpdateObject(id, map[string]any{"stage": "won"})
	evWait(t, env.Fake)
	got = rc.bodies("/env")
	if len(got) != 1 || got[0]["event"] != "object.update" || got[0]["subscriber_id"] != sub || got[0]["object_id"] != id ||
		got[0]["delivery_id"] == "" || got[0]["occurred_at"] == "" || got[0]["stage"] != "won" {
		t.Fatalf("enveloped deliveries %v", got)
	}
}

// TestReferralEvent: setting an opportunity's referral field sends the
// referral kind of the fake's portal word to its subscribers (object.all
// does not include it).
func TestReferralEvent(t *testing.T) {
	srv := NewServer(WithWords(deployment.Words{PortalWord: "acme"}), WithDeliveryPolicy(DeliveryPolicy{Backoff: time.Millisecond}), WithDeliveryEnvelope())
	defer srv.Close()
	c := newEvClient(t, srv)
	rc := newEvReceiver(t, nil)
	c.subscribe(evSubscribeBody(rc.URL+"/ref", []string{"object.acme_referral_submit"}, ""))
	c.subscribe(evSubscribeBody(rc.URL+"/all", []string{"object.all"}, ""))
	var refusal map[string]any
	if st := c.do("POST", "/event/v1/subscriber", evSubscribeBody(rc.URL+"/x", []string{eventPartnerPortalReferralSubmit}, ""), &refusal); st != 400 ||
		!strings.Contains(fmt.Sprint(refusal), "the fake's referral kind is object.acme_referral_submit") || !strings.Contains(fmt.Sprint(refusal), "fake.WithWords") {
		t.Fatalf("subscribing to the stand-in kind on a renamed fake: %d %v, want 400 naming the fake's kind", st, refusal)
	}
	id := srv.AddObject(Object{Type: "opportunity", Fields: map[string]any{"name": "Deal"}})
	srv.UpdateObject(id, map[string]any{"name": "Deal 2"})
	srv.UpdateObject(id, map[string]any{"acme.referral_id": "R-7"})
	evWait(t, srv.Fake)
	if got := rc.events("/ref"); !slices.Equal(got, []string{"object.acme_referral_submit:" + id}) {
		t.Fatalf("referral subscriber got %v", got)
	}
	if got := rc.events("/all"); !slices.Equal(got, []string{"object.create:" + id, "object.update:" + id, "object.update:" + id}) {
		t.Fatalf("object.all subscriber got %v", got)
	}
}

// TestIntegrationSchema: GET /event/v1/metadata/integration/{id} answers
// {"schema": ...}, the JSON Schema of the fields the integration's object
// deliveries carry (every one a string), titled after the integration;
// 404 for an unknown id. With WithDeliveryEnvelope it names the envelope
// members too.
func TestIntegrationSchema(t *testing.T) {
	for _, envelope := range []bool{false, true} {
		opts := []Option{WithDemoData()}
		if envelope {
			opts = append(opts, WithDeliveryEnvelope())
		}
		srv := NewServer(opts...)
		t.Cleanup(srv.Close)
		c := newEvClient(t, srv)
		var one map[string]map[string]any
		if st := c.do("GET", "/event/v1/metadata/integration/"+demo.OpportunityIntegration, "", &one); st != 200 {
			t.Fatalf("read: %d", st)
		}
		if len(one) != 1 || one["schema"] == nil {
			t.Fatalf("answer %v: want only a schema member", one)
		}
		sch := one["schema"]
		props, _ := sch["properties"].(map[string]any)
		if sch["type"] != "object" || sch["title"] != demo.OpportunityIntegration {
			t.Fatalf("schema %v", sch)
		}
		for _, name := range []string{"amount", "stage", "close_date", "sales_details.crm_opportunity_id", "partner_portal.integration_status"} {
			p, _ := props[name].(map[string]any)
			if p["type"] != "string" {
				t.Fatalf("envelope %v: property %s = %v in %v", envelope, name, props[name], props)
			}
		}
		if _, ok := props["delivery_id"]; ok != envelope {
			t.Fatalf("envelope %v: delivery_id listed %v", envelope, ok)
		}
		var e map[string]string
		if st := c.do("GET", "/event/v1/metadata/integration/nope", "", &e); st != 404 || !strings.Contains(e["message"], "nope") {
			t.Fatalf("unknown: %d %v", st, e)
		}
	}
}

// TestMisspelledIntegrationID: with WithMisspelledIntegrationID the
// subscriber read spells its integration integraion_id, as a deployed
// description does, and nothing else changes; by default it is
// integration_id.
func TestMisspelledIntegrationID(t *testing.T) {
	for _, tc := range []struct {
		opts      []Option
		want, not string
	}{
		{nil, "integration_id", "integraion_id"},
		{[]Option{WithDeployment(Deployment{MisspelledIntegrationID: true})}, "integraion_id", "integration_id"},
	} {
		srv := NewServer(append([]Option{WithDemoData()}, tc.opts...)...)
		c := newEvClient(t, srv)
		id := c.subscribe(evSubscribeBody("https://hooks.example.com/x", []string{"object.update"},
			`,"integration_id":"`+demo.OpportunityIntegration+`"`))
		var one map[string]any
		if st := c.do("GET", "/event/v1/subscriber/"+id, "", &one); st != 200 {
			t.Fatalf("read: %d", st)
		}
		if _, has := one[tc.not]; has || one[tc.want] != demo.OpportunityIntegration || len(one) != 7 {
			t.Errorf("read %v: want %s only", one, tc.want)
		}
		var list map[string][]map[string]any
		c.do("GET", "/event/v1/subscriber", "", &list)
		if len(list["items"]) != 1 || list["items"][0]["integration_id"] != demo.OpportunityIntegration {
			t.Errorf("listing %v: want integration_id", list)
		}
		srv.Close()
	}
}
