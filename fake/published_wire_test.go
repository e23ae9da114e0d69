package fake_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)

// wire is a fake under the contract's check, spoken to as a published
// client would, with a token of the default client.
type wire struct {
	t     *testing.T
	srv   *fake.Server
	token string
}

func newWire(t *testing.T, opts ...fake.Option) *wire {
	t.Helper()
	return newWireOf(t, append([]fake.Option{mocktest.ContractCheck(t)}, opts...)...)
}

// newWireOf is newWire without the contract's check, for an option that
// accepts more than the contract (WithUnknownMembers).
func newWireOf(t *testing.T, opts ...fake.Option) *wire {
	t.Helper()
	srv := fake.NewServer(append([]fake.Option{fake.WithDemoData()}, opts...)...)
	t.Cleanup(srv.Close)
	w := &wire{t: t, srv: srv}
	status, body, _ := w.do("POST", "/oauth/token", `{"grant_type":"client_credentials","client_id":"`+fake.DefaultClientID+`","client_secret":"`+fake.DefaultClientSecret+`"}`)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &tok); status != 200 || err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %d %s", status, body)
	}
	w.token = tok.AccessToken
	return w
}

// do sends body ("" for none) as JSON and returns the answer.
func (w *wire) do(method, path, body string, header ...string) (int, []byte, http.Header) {
	w.t.Helper()
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, w.srv.URL+path, rd)
	if err != nil {
		w.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if w.token != "" {
		req.Header.Set("Authorization", "Bearer "+w.token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := wireClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header
}

// wireClient follows no redirect: a 302 is an answer to check.
var wireClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestSubscribeEventAsString: the connector's Subscribe and referral
// subscribe bodies send event as a string (apiDefinition.swagger.json,
// Subscribe and the referral operation): the fake takes it as one kind.
func TestSubscribeEventAsString(t *testing.T) {
	w := newWire(t)
	for _, kind := range []string{"object.update", w.srv.Connection().Words.ReferralEvent()} {
		body := `{"subscriber_type": "webhook", "event": "` + kind + `", "name": "n", "integration_id": "` + demo.OpportunityIntegration + `",
			"webhook_settings": {"callback_url": "https://hooks.example.com/x"}}`
		status, answer, _ := w.do("POST", "/event/v1/subscriber", body)
		if status != 200 {
			t.Fatalf("event %q as a string: %d %s", kind, status, answer)
		}
	}
	subs := w.srv.Subscribers()
	if len(subs) != 2 || !slices.Equal(subs[0].Events, []string{"object.update"}) || !slices.Equal(subs[1].Events, []string{w.srv.Connection().Words.ReferralEvent()}) {
		t.Fatalf("subscribers = %+v", subs)
	}
}

// TestReportBodiesOptional: the connector declares the bodies of report
// list and data not required (GetReportList body required false), the
// gateway export those of chart data and chart metadata likewise: an
// absent body takes the interface's defaults (page 0, size 100).
func TestReportBodiesOptional(t *testing.T) {
	w := newWire(t)
	data := "/report/v1/" + strconv.FormatInt(demo.ReportPartners, 10) + "/data"
	chart := "/report/v1/" + strconv.FormatInt(demo.ReportPipeline, 10)
	for _, path := range []string{"/report/v1/list", data, chart + "/chart-data", chart + "/chart-metadata"} {
		status, body, _ := w.do("POST", path, "")
		if status != 200 {
			t.Errorf("%s without a body: %d %s", path, status, body)
		}
	}
	_, withDefaults, _ := w.do("POST", data, `{"page": {"number": 0, "size": 100}}`)
	_, without, _ := w.do("POST", data, "")
	if string(withDefaults) != string(without) {
		t.Errorf("no body answered\n%s\nthe defaults answer\n%s", without, withDefaults)
	}
}

// TestPublishedAuditExample: the gateway export's audit request example
// (object: audit_object), its portal word made the test's own, is
// accepted though its integration_id names no integration the fake
// knows: nothing published says the service checks it.
func TestPublishedAuditExample(t *testing.T) {
	w := newWire(t, fake.WithWords(deployment.Words{PortalWord: "acme_portal"}))
	body := "{\r\n  \"field_name\": \"acme_portal.integration_status\",\r\n  \"integration_id\": \"WS-Integration_XYZabc123\",\r\n  \"external_id\": \"000owa24575\",\r\n  \"status_code\": \"CREATE_FAILED\",\r\n  \"message\": \"Successfully created Referral in the portal.\"\r\n}"
	status, answer, _ := w.do("PATCH", "/app/v1/object/"+demo.Opportunity1+"/audit", body)
	if status != 200 || !strings.Contains(string(answer), `"status_code":"CREATE_FAILED"`) {
		t.Fatalf("published audit example: %d %s", status, answer)
	}
}

// TestMaxErrorsIsANumber: the gateway export declares max_errors a number
// (bulk: status): 10.0 is ten, 1.5 is refused with a message saying what
// is wanted.
func TestMaxErrorsIsANumber(t *testing.T) {
	w := newWire(t)
	status, body, _ := w.do("POST", "/bulk/v1/bulkload?integration_id="+demo.OpportunityIntegration+"&data_format=JSON", `[{"name": "no key"}]`)
	var ack struct {
		ExecutionID string `json:"execution_id"`
	}
	if err := json.Unmarshal(body, &ack); status != 200 || err != nil {
		t.Fatalf("load: %d %s", status, body)
	}
	base := "/bulk/v1/status/" + demo.OpportunityIntegration + "?execution_id=" + ack.ExecutionID + "&max_errors="
	for _, v := range []string{"10.0", "10", "0", "1e1"} {
		if status, body, _ := w.do("GET", base+v, ""); status != 200 {
			t.Errorf("max_errors=%s: %d %s", v, status, body)
		}
	}
	for _, v := range []string{"1.5", "-1", "ten"} {
		status, body, _ := w.do("GET", base+v, "")
		if status != 400 || !strings.Contains(string(body), "max_errors must be a whole number of at least 0") || !strings.Contains(string(body), v) {
			t.Errorf("max_errors=%s: %d %s, want 400 saying what max_errors must be", v, status, body)
		}
	}
}

// TestEventSchemaEnvironmentHeader: the gateway export lists the
// environment header on the event schema operation (events:
// GetEventSchema); the fake reads it there as on every request.
func TestEventSchemaEnvironmentHeader(t *testing.T) {
	w := newWire(t, fake.WithWords(deployment.Words{EnvHeader: "x-acme-env"}))
	status, body, _ := w.do("GET", "/event/v1/metadata/event/object.update", "", "x-acme-env", "sandbox.example.com")
	if status != 200 {
		t.Fatalf("event schema: %d %s", status, body)
	}
	reqs := w.srv.Requests()
	if last := reqs[len(reqs)-1]; last.Path != "/event/v1/metadata/event/object.update" || last.Env != "sandbox.example.com" {
		t.Fatalf("logged %+v", last)
	}
}

// TestUnknownMembersOption: by default a write body's unknown member is
// refused naming it and the published member it resembles; with
// WithUnknownMembers it is ignored.
func TestUnknownMembersOption(t *testing.T) {
	const body = `{"subscriber_type": "webhook", "event": ["object.update"], "name": "n", "objectids": ["o-1"], "webhook_settings": {"callback_url": "https://hooks.example.com/x"}}`
	strict := newWire(t)
	status, answer, _ := strict.do("POST", "/event/v1/subscriber", body)
	if status != 400 || !strings.Contains(string(answer), `unknown member \"objectids\" (the published member is \"object_ids\")`) {
		t.Fatalf("default: %d %s", status, answer)
	}
	if n := len(strict.srv.Subscribers()); n != 0 {
		t.Fatalf("%d subscribers stored", n)
	}
	lax := newWireOf(t, fake.WithUnknownMembers())
	if status, answer, _ := lax.do("POST", "/event/v1/subscriber", strings.Replace(body, `"objectids"`, `"x_test_member"`, 1)); status != 200 {
		t.Fatalf("WithUnknownMembers: %d %s", status, answer)
	}
}

// TestSCIMUniqueByEmail: the published create ("Create the user if user
// doesnt exist with the same email", scim: createUser) makes the e-mail
// the uniqueness: the published example, then another userName with its
// primary e-mail, is a 409 uniqueness; SCIM answers are application/json,
// the only media type the gateway export shows.
func TestSCIMUniqueByEmail(t *testing.T) {
	w := newWire(t)
	before := len(w.srv.Users())
	const example = `{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
		"userName": "scim_user@test.com", "name": {"givenName": "scim user", "familyName": "scim family"},
		"emails": [{"primary": true, "value": "scim_user@test.com", "type": "work"}], "displayName": "scim_user_display_name",
		"meta": {"resourceType": "User"}, "active": true,
		"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"department": "Sales"}}`
	status, body, h := w.do("POST", "/api/scim/v2/Users", example)
	if status != 201 || h.Get("Content-Type") != "application/json" {
		t.Fatalf("published create: %d %q %s", status, h.Get("Content-Type"), body)
	}
	other := strings.Replace(example, `"userName": "scim_user@test.com"`, `"userName": "another-name"`, 1)
	status, body, h = w.do("POST", "/api/scim/v2/Users", other)
	if status != 409 || !strings.Contains(string(body), `"scimType":"uniqueness"`) || !strings.Contains(string(body), "scim_user@test.com") || h.Get("Content-Type") != "application/json" {
		t.Fatalf("same e-mail, another userName: %d %q %s", status, h.Get("Content-Type"), body)
	}
	// A userName in e-mail form is one of the user's e-mails.
	byName := `{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "third", "emails": [{"primary": true, "value": "Name@Example.com"}]}`
	if status, body, _ := w.do("POST", "/api/scim/v2/Users", `{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "name@example.com"}`); status != 201 {
		t.Fatalf("userName in e-mail form: %d %s", status, body)
	}
	if status, body, _ := w.do("POST", "/api/scim/v2/Users", byName); status != 409 {
		t.Fatalf("primary e-mail equal to another user's userName: %d %s", status, body)
	}
	if n := len(w.srv.Users()) - before; n != 2 {
		t.Fatalf("%d users stored, want 2", n)
	}
}

// TestSCIMUniqueByEveryEmail: a user is unique by every one of its
// e-mails, not only the primary: a create or a replace that gives a user
// an e-mail another user holds (as any of its emails or as its userName)
// is 409 uniqueness; a replace that drops an e-mail frees it.
func TestSCIMUniqueByEveryEmail(t *testing.T) {
	w := newWire(t)
	user := func(name string, emails ...string) string {
		var list []string
		for i, e := range emails {
			list = append(list, fmt.Sprintf(`{"value": %q, "primary": %t}`, e, i == 0))
		}
		return fmt.Sprintf(`{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": %q, "emails": [%s]}`, name, strings.Join(list, ", "))
	}
	status, body, _ := w.do("POST", "/api/scim/v2/Users", user("ada", "ada@example.com", "Ada.Work@Example.com"))
	var ada struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &ada); status != 201 || err != nil {
		t.Fatalf("create: %d %s", status, body)
	}
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"another's secondary e-mail as primary", user("grace", "ada.work@example.com"), 409},
		{"another's secondary e-mail as secondary", user("grace", "grace@example.com", "ADA.WORK@example.com"), 409},
		{"another's secondary e-mail as userName", user("ada.work@example.com"), 409},
		{"e-mails of its own", user("grace", "grace@example.com", "grace.work@example.com"), 201},
		{"another's userName as secondary e-mail", user("alan", "alan@example.com", "grace"), 201}, // grace is no e-mail
	} {
		if status, body, _ := w.do("POST", "/api/scim/v2/Users", tc.body); status != tc.status ||
			status == 409 && !strings.Contains(string(body), `"scimType":"uniqueness"`) {
			t.Errorf("%s: %d %s, want %d", tc.name, status, body, tc.status)
		}
	}
	// Ada's replace keeps her own e-mails, may not take Grace's, and frees
	// the one it drops.
	put := func(emails ...string) int {
		b := strings.Replace(user("ada", emails...), `{"schemas"`, `{"id": "`+ada.ID+`", "schemas"`, 1)
		status, body, _ := w.do("PUT", "/api/scim/v2/Users/"+ada.ID, b)
		if status != 200 && status != 409 {
			t.Fatalf("replace: %d %s", status, body)
		}
		return status
	}
	if put("ada@example.com", "ada.work@example.com") != 200 || put("ada@example.com", "grace.work@example.com") != 409 || put("ada@example.com") != 200 {
		t.Fatal("replaces of Ada's e-mails: want 200, 409 (Grace's), 200")
	}
	if status, body, _ := w.do("POST", "/api/scim/v2/Users", user("ada-work", "ada.work@example.com")); status != 201 {
		t.Errorf("an e-mail a replace dropped: %d %s, want 201", status, body)
	}
}

// TestMessagesAndTimesAsPublished: a 400 names the published body in
// JSON's words, never a Go type; timestamps carry milliseconds, as every
// published bulk example does ("2020-05-18T14:06:57.572Z").
func TestMessagesAndTimesAsPublished(t *testing.T) {
	w := newWire(t)
	status, body, _ := w.do("PATCH", "/app/v1/object/"+demo.Opportunity1+"/audit", `"linked"`)
	if status != 400 || !strings.Contains(string(body), "body must be a JSON object (the audit request: field_name, integration_id, external_id, status_code, message), not string") {
		t.Errorf("audit with a string body: %d %s", status, body)
	}
	for _, goWord := range []string{"fake.", "[]string", "int64", "*string"} {
		if strings.Contains(string(body), goWord) {
			t.Errorf("message names a Go type (%s): %s", goWord, body)
		}
	}
	status, body, _ = w.do("POST", "/bulk/v1/bulkload?integration_id="+demo.OpportunityIntegration+"&data_format=JSON", `[{"name": "x"}]`)
	var ack struct {
		CreatedAt string `json:"created_at"`
	}
	json.Unmarshal(body, &ack)
	if status != 200 || len(ack.CreatedAt) != len("2020-05-18T14:06:57.572Z") || !strings.HasSuffix(ack.CreatedAt, "Z") || ack.CreatedAt[19] != '.' {
		t.Errorf("created_at %q, want milliseconds as published (%d %s)", ack.CreatedAt, status, body)
	}
}

// TestReportListTimesAsPublished: the report list writes createdAt and
// modifiedAt as its published example does ("2021-05-10T14:25:04.96388Z",
// gateway export report: getReports): UTC, to the microsecond, no
// trailing zeros in the fraction, none for a whole second.
func TestReportListTimesAsPublished(t *testing.T) {
	w := newWire(t)
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2021, 5, 10, 14, 25, 4, 963880000, time.UTC), "2021-05-10T14:25:04.96388Z"},
		{time.Date(2021, 5, 10, 16, 25, 4, 123456789, time.FixedZone("", 2*3600)), "2021-05-10T14:25:04.123456Z"},
		{time.Date(2021, 5, 10, 14, 25, 4, 0, time.UTC), "2021-05-10T14:25:04Z"},
	} {
		id := w.srv.AddReport(fake.Report{Name: tc.want, CreatedAt: tc.at, ModifiedAt: tc.at, Columns: []fake.Column{{ID: "a"}}})
		status, body, _ := w.do("POST", "/report/v1/list", `{"page": {"number": 0, "size": 10000}}`)
		type entry struct {
			ID         int64  `json:"id"`
			CreatedAt  string `json:"createdAt"`
			ModifiedAt string `json:"modifiedAt"`
		}
		var list struct {
			Results []entry `json:"results"`
		}
		if err := json.Unmarshal(body, &list); status != 200 || err != nil {
			t.Fatalf("list: %d %s", status, body)
		}
		i := slices.IndexFunc(list.Results, func(r entry) bool { return r.ID == id })
		if i < 0 || list.Results[i].CreatedAt != tc.want || list.Results[i].ModifiedAt != tc.want {
			t.Errorf("report at %v listed as %+v, want %s", tc.at, list.Results, tc.want)
		}
	}
	_, body, _ := w.do("POST", "/report/v1/list", `{}`)
	if !strings.Contains(string(body), `"createdAt":"2026-01-15T09:30:04.96388Z"`) {
		t.Errorf("the demo reports' times: %s", body)
	}
}
