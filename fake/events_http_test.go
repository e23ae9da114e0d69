package fake

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake/demo"
)

// evClient calls the fake over raw HTTP with a token of the default client.
type evClient struct {
	t     *testing.T
	srv   *Server
	token string
}

func newEvClient(t *testing.T, srv *Server) *evClient {
	t.Helper()
	c := &evClient{t: t, srv: srv}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	body := `{"grant_type":"client_credentials","client_id":"` + DefaultClientID + `","client_secret":"` + DefaultClientSecret + `"}`
	if st := c.do("POST", "/oauth/token", body, &tok); st != http.StatusOK {
		t.Fatalf("token: status %d", st)
	}
	c.token = tok.AccessToken
	return c
}

// do sends a request with a JSON body (none when "") and decodes the
// answer into out when out is non-nil. It returns the status.
func (c *evClient) do(method, path, body string, out any) int {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.srv.URL+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s: decoding %q: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode
}

// subscribe registers a subscriber and returns its id.
func (c *evClient) subscribe(body string) string {
	c.t.Helper()
	var out map[string]any
	if st := c.do("POST", "/event/v1/subscriber", body, &out); st != http.StatusOK {
		c.t.Fatalf("subscribe: status %d: %v", st, out)
	}
	id, _ := out["subscriber_id"].(string)
	if id == "" {
		c.t.Fatalf("subscribe: no subscriber_id in %v", out)
	}
	return id
}

func TestEventsSubscriberLifecycle(t *testing.T) {
	srv := NewServer(WithDemoData())
	defer srv.Close()
	c := newEvClient(t, srv)

	id := c.subscribe(`{"subscriber_type":"webhook","event":["object.update","object.create"],"name":"crm sync",
		"filters":"stage in [\"won\"]","integration_id":"` + demo.OpportunityIntegration + `","object_ids":["o1"],
		"webhook_settings":{"callback_url":"https://hooks.example.com/x"}}`)

	var list map[string][]map[string]any
	if st := c.do("GET", "/event/v1/subscriber", "", &list); st != http.StatusOK {
		t.Fatalf("list: status %d", st)
	}
	want := map[string]any{
		"subscriber_id": id, "name": "crm sync", "objectids": []any{"o1"}, "integration_id": demo.OpportunityIntegration,
		"filters": `stage in ["won"]`, "subscriber_type": "webhook",
	}
	if len(list["items"]) != 1 || !evJSONEqual(list["items"][0], want) {
		t.Fatalf("list = %v, want one item %v", list, want)
	}

	var one map[string]any
	if st := c.do("GET", "/event/v1/subscriber/"+id, "", &one); st != http.StatusOK {
		t.Fatalf("get: status %d", st)
	}
	// Exactly the members the deployed service returns: the listing's
	// and event, no webhook_settings.
	want["event"] = []any{"object.create", "object.update"}
	if !evJSONEqual(one, want) {
		t.Fatalf("get = %v, want %v", one, want)
	}

	// The deployed service answers the delete 200 with an empty body.
	req, _ := http.NewRequest("DELETE", srv.URL+"/event/v1/subscriber/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(body) != 0 {
		t.Fatalf("delete: %d %q, want 200 with an empty body", resp.StatusCode, body)
	}
	for _, m := range []string{"GET", "DELETE"} {
		var e map[string]string
		if st := c.do(m, "/event/v1/subscriber/"+id, "", &e); st != http.StatusNotFound || !strings.Contains(e["message"], id) {
			t.Errorf("%s after delete: status %d, body %v; want 404 naming the id", m, st, e)
		}
	}
	if st := c.do("GET", "/event/v1/subscriber", "", &list); st != http.StatusOK || len(list["items"]) != 0 {
		t.Fatalf("list after delete: status %d, %v", st, list)
	}
}

func evJSONEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestEventsSubscribeValidation(t *testing.T) {
	srv := NewServer(WithDemoData())
	defer srv.Close()
	c := newEvClient(t, srv)
	const ok = `"event":["object.update"],"name":"n","webhook_settings":{"callback_url":"http://127.0.0.1:9/x"}`
	tests := []struct {
		name, body string
		want       []string
	}{
		{"empty object", `{}`, []string{"event must name at least one event kind", "name is required", "webhook_settings.callback_url is required"}},
		{"not JSON", `{"event":`, []string{"malformed JSON"}},
		{"wrong type", `{"event":7}`, []string{`member "event" must be an event kind (a string) or an array of event kinds`}},
		{"wrong member type", `{"name":["n"]}`, []string{`member "name" must be a string, not array`}},
		{"not an object", `"subscribe"`, []string{`body must be a JSON object (the subscribe request: event, name, webhook_settings`, "not string"}},
		{"misspelled member", `{"objectids":["o-1"],` + ok + `}`, []string{`unknown member "objectids" (the published member is "object_ids")`}},
		{"misspelled nested member", `{"event":["object.update"],"name":"n","webhook_settings":{"callbackurl":"http://h/x"}}`, []string{`unknown member "webhook_settings.callbackurl" (the published member is "webhook_settings.callback_url")`}},
		{"subscriber type", `{"subscriber_type":"email",` + ok + `}`, []string{`subscriber_type must be webhook, not "email"`}},
		{"unknown kind", `{"event":["object.update","object.explode"],"name":"n","webhook_settings":{"callback_url":"http://h/x"}}`, []string{`event kind "object.explode" is not defined`}},
		{"blank name", `{"event":["object.update"],"name":"  ","webhook_settings":{"callback_url":"http://h/x"}}`, []string{"name is required"}},
		{"relative url", `{"event":["object.update"],"name":"n","webhook_settings":{"callback_url":"/hook"}}`, []string{"must be an absolute http or https URL"}},
		{"ftp url", `{"event":["object.update"],"name":"n","webhook_settings":{"callback_url":"ftp://h/x"}}`, []string{"must be an absolute http or https URL"}},
		{"no host", `{"event":["object.update"],"name":"n","webhook_settings":{"callback_url":"http:///x"}}`, []string{"has no host"}},
		{"bad filter", `{"filters":"stage = won",` + ok + `}`, []string{"filters: at offset 8: expected a value"}},
		{"unknown integration", `{"integration_id":"int-nope",` + ok + `}`, []string{`integration_id "int-nope" is not defined`}},
		{"empty object id", `{"object_ids":[""],` + ok + `}`, []string{"object_ids must not hold an empty id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e map[string]string
			st := c.do("POST", "/event/v1/subscriber", tt.body, &e)
			if st != http.StatusBadRequest {
				t.Fatalf("status %d, want 400 (%v)", st, e)
			}
			for _, w := range tt.want {
				if !strings.Contains(e["message"], w) {
					t.Errorf("message %q lacks %q", e["message"], w)
				}
			}
		})
	}
	if n := len(srv.Subscribers()); n != 0 {
		t.Fatalf("%d subscribers stored after invalid registrations", n)
	}
	// subscriber_type may be left out: it defaults to webhook.
	c.subscribe(`{` + ok + `}`)
}

func TestEventsScope(t *testing.T) {
	srv := NewServer(WithClient("reports-only", "s3cret", scopeReports), WithScopeChecks())
	defer srv.Close()
	c := &evClient{t: t, srv: srv}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	c.do("POST", "/oauth/token", `{"grant_type":"client_credentials","client_id":"reports-only","client_secret":"s3cret"}`, &tok)
	c.token = tok.AccessToken
	if st := c.do("GET", "/event/v1/subscriber", "", nil); st != http.StatusForbidden {
		t.Fatalf("status %d without the events scope, want 403", st)
	}
	c.token = ""
	if st := c.do("GET", "/event/v1/metadata/event", "", nil); st != http.StatusUnauthorized {
		t.Fatalf("status %d without a token, want 401", st)
	}
}

func TestEventsMetadata(t *testing.T) {
	srv := NewServer(WithDemoData(), WithDeliveryEnvelope()) // the schema with the fake's envelope
	defer srv.Close()
	c := newEvClient(t, srv)

	var ins struct {
		Integrations []map[string]string `json:"integrations"`
	}
	if st := c.do("GET", "/event/v1/metadata/integration", "", &ins); st != http.StatusOK {
		t.Fatalf("integrations: status %d", st)
	}
	want := map[string]string{
		"integration_id": demo.AccountIntegration, "integration_type": "CRM",
		"description": "Accounts synced from the demo CRM", "name": "Demo CRM accounts",
	}
	if len(ins.Integrations) != 2 || !evJSONEqual(ins.Integrations[0], want) || ins.Integrations[1]["integration_id"] != demo.OpportunityIntegration {
		t.Fatalf("integrations = %v", ins.Integrations)
	}

	var kinds struct {
		Events []map[string]string `json:"events"`
	}
	if st := c.do("GET", "/event/v1/metadata/event", "", &kinds); st != http.StatusOK {
		t.Fatalf("events: status %d", st)
	}
	var names []string
	for _, k := range kinds.Events {
		if k["description"] == "" {
			t.Errorf("event kind %q has no description", k["name"])
		}
		names = append(names, k["name"])
	}
	if got := strings.Join(names, " "); got != "object.all object.create object.update object.delete object.stage_change report.submit object.partner_portal_referral_submit" {
		t.Fatalf("event kinds = %s", got)
	}

	var schema struct {
		Schema struct {
			Type       string                    `json:"type"`
			Properties map[string]map[string]any `json:"properties"`
			Required   []string                  `json:"required"`
		} `json:"schema"`
	}
	if st := c.do("GET", "/event/v1/metadata/event/object.stage_change", "", &schema); st != http.StatusOK {
		t.Fatalf("schema: status %d", st)
	}
	s := schema.Schema
	if s.Type != "object" || s.Properties["event"]["const"] != "object.stage_change" ||
		s.Properties["occurred_at"]["format"] != "date-time" || strings.Join(s.Required, ",") != "event,subscriber_id,delivery_id,occurred_at,object_id" {
		t.Fatalf("schema = %+v", s)
	}
	var e map[string]string
	if st := c.do("GET", "/event/v1/metadata/event/object.explode", "", &e); st != http.StatusNotFound || !strings.Contains(e["message"], "object.explode") {
		t.Fatalf("unknown kind: status %d, %v", st, e)
	}
}
