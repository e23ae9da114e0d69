package fake

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/partnerapi/partner-go/fake/demo"
)

// scimTestToken gets a bearer token for the client from srv.
func scimTestToken(t *testing.T, srv *Server, id, secret string) string {
	t.Helper()
	body := fmt.Sprintf(`{"grant_type":"client_credentials","client_id":%q,"client_secret":%q}`, id, secret)
	resp, err := http.Post(srv.URL+"/oauth/token", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&tok) != nil {
		t.Fatalf("token: status %d", resp.StatusCode)
	}
	return tok.AccessToken
}

// scimTestCall sends a request with a token and returns status and body.
func scimTestCall(t *testing.T, srv *Server, tok, method, path, body string) (int, []byte, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != "" {
		req.Header.Set("Content-Type", "application/scim+json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header
}

func scimTestServer(t *testing.T, opts ...Option) (*Server, string) {
	t.Helper()
	srv := NewServer(opts...)
	t.Cleanup(srv.Close)
	return srv, scimTestToken(t, srv, DefaultClientID, DefaultClientSecret)
}

// scimTestError decodes a SCIM error body and checks its shape.
func scimTestError(t *testing.T, body []byte, status int, scimType string) scimError {
	t.Helper()
	var e scimError
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body is not JSON: %s", body)
	}
	if len(e.Schemas) != 1 || e.Schemas[0] != scimErrorSchema || e.Status != fmt.Sprint(status) || e.SCIMType != scimType || e.Detail == "" {
		t.Errorf("error body = %s, want status %d scimType %q with a detail", body, status, scimType)
	}
	return e
}

const scimTestAda = `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
"userName":"ada@example.com","name":{"givenName":"Ada","familyName":"Lovelace"},
"emails":[{"primary":true,"value":"ada@example.com","type":"work"}],"displayName":"Ada Lovelace",
"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"Engineering"},"title":"Countess"}`

func TestSCIMCreateGetReplace(t *testing.T) {
	srv, tok := scimTestServer(t)
	status, body, h := scimTestCall(t, srv, tok, "POST", "/api/scim/v2/Users", scimTestAda)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	var got map[string]any
	json.Unmarshal(body, &got)
	id, _ := got["id"].(string)
	if id == "" || got["active"] != true || got["title"] != "Countess" {
		t.Fatalf("create answered %s", body)
	}
	meta, _ := got["meta"].(map[string]any)
	if len(meta) != 1 || meta["resourceType"] != "User" || h.Get("Location") != srv.URL+"/api/scim/v2/Users/"+id {
		t.Errorf("meta = %v, Location = %q", meta, h.Get("Location"))
	}
	if ent, _ := got["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"].(map[string]any); ent["department"] != "Engineering" {
		t.Errorf("enterprise extension lost: %s", body)
	}
	if ct := h.Get("Content-Type"); ct != "application/json" { // the only media type the gateway export shows
		t.Errorf("Content-Type = %q", ct)
	}

	status, body, _ = scimTestCall(t, srv, tok, "GET", "/api/scim/v2/Users/"+id, "")
	if status != http.StatusOK || !strings.Contains(string(body), `"userName":"ada@example.com"`) {
		t.Fatalf("get: %d %s", status, body)
	}
	// A read answers the published members only.
	var read map[string]any
	json.Unmarshal(body, &read)
	for _, m := range []string{"name", "displayName", "emails", "title"} {
		if _, ok := read[m]; ok {
			t.Errorf("get answered %s: %s", m, body)
		}
	}

	// PUT without "active" keeps it; with false suspends; the id may be omitted.
	put := `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"ada.l@example.com","active":false}`
	status, body, _ = scimTestCall(t, srv, tok, "PUT", "/api/scim/v2/Users/"+id, put)
	if status != http.StatusOK {
		t.Fatalf("put: %d %s", status, body)
	}
	u, _ := srv.User(id)
	if u.IsActive() || u.UserName != "ada.l@example.com" || u.Department != "" || u.GivenName != "Ada" {
		t.Errorf("after PUT the user is %+v, want userName replaced, extension removed, name kept, suspended", u)
	}
	if strings.Contains(string(body), "Countess") || strings.Contains(string(body), "givenName") {
		t.Errorf("PUT answered members it was not sent: %s", body)
	}
	// The old userName is free again, but it is still the user's primary
	// e-mail, by which users are unique too; the new userName is taken.
	if status, body, _ := scimTestCall(t, srv, tok, "POST", "/api/scim/v2/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"ADA@example.com"}`); status != http.StatusConflict || !strings.Contains(string(body), `e-mail \"ada@example.com\"`) {
		t.Errorf("reusing the old userName, the user's primary e-mail: %d %s", status, body)
	}
	if status, body, _ := scimTestCall(t, srv, tok, "POST", "/api/scim/v2/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"ada-2","emails":[{"value":"ada2@example.com","primary":true}]}`); status != http.StatusCreated {
		t.Errorf("another userName and e-mail: %d %s", status, body)
	}
	status, body, _ = scimTestCall(t, srv, tok, "POST", "/api/scim/v2/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"Ada.L@Example.com"}`)
	if status != http.StatusConflict {
		t.Fatalf("duplicate userName: %d %s", status, body)
	}
	scimTestError(t, body, http.StatusConflict, "uniqueness")
}

// scimTestAdaServer starts a fake, with WithSCIMFullResources when full,
// and creates scimTestAda in it.
func scimTestAdaServer(t *testing.T, full bool) (srv *Server, tok, id string) {
	t.Helper()
	var opts []Option
	if full {
		opts = append(opts, WithSCIMFullResources())
	}
	srv, tok = scimTestServer(t, opts...)
	status, body, _ := scimTestCall(t, srv, tok, "POST", "/api/scim/v2/Users", scimTestAda)
	var created struct{ ID string }
	if err := json.Unmarshal(body, &created); status != http.StatusCreated || err != nil || created.ID == "" {
		t.Fatalf("create: %d %s", status, body)
	}
	return srv, tok, created.ID
}

// TestSCIMReplaceKeepsWhatItDoesNotCarry: by default a PUT replaces the
// published members and those it carries, and keeps the stored name,
// displayName, emails and unmodelled members it does not carry (the
// published reads do not return them); with WithSCIMFullResources it
// replaces the whole user.
func TestSCIMReplaceKeepsWhatItDoesNotCarry(t *testing.T) {
	for _, full := range []bool{false, true} {
		srv, tok, id := scimTestAdaServer(t, full)
		path := "/api/scim/v2/Users/" + id

		// What a read-modify-write of the published read sends back.
		put := `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
"id":"` + id + `","userName":"ada@example.com","active":false,"meta":{"resourceType":"User"},
"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"Engineering"}}`
		if status, body, _ := scimTestCall(t, srv, tok, "PUT", path, put); status != http.StatusOK {
			t.Fatalf("full %v: put: %d %s", full, status, body)
		}
		u, _ := srv.User(id)
		kept := u.GivenName == "Ada" && u.FamilyName == "Lovelace" && u.DisplayName == "Ada Lovelace" &&
			len(u.Emails) == 1 && u.Emails[0].Value == "ada@example.com"
		if kept == full || u.IsActive() || u.Department != "Engineering" {
			t.Errorf("full %v: after a PUT of the published members the user is %+v", full, u)
		}
		if full {
			continue
		}
		// The unmodelled member is kept too (no default read shows it).
		srv.scim.mu.RLock()
		title := string(srv.scim.byID[id].extra["title"])
		srv.scim.mu.RUnlock()
		if title != `"Countess"` {
			t.Errorf("unmodelled member after the PUT: %s", title)
		}

		// Members the PUT carries are replaced, null and [] included.
		put = `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"ada@example.com",
"displayName":"Countess of Lovelace","name":null,"emails":[],"title":"Analyst"}`
		if status, body, _ := scimTestCall(t, srv, tok, "PUT", path, put); status != http.StatusOK {
			t.Fatalf("put: %d %s", status, body)
		}
		u, _ = srv.User(id)
		if u.DisplayName != "Countess of Lovelace" || u.GivenName != "" || len(u.Emails) != 0 || u.Department != "" || u.IsActive() {
			t.Errorf("after a PUT carrying name, displayName and emails the user is %+v", u)
		}
		srv.scim.mu.RLock()
		title = string(srv.scim.byID[id].extra["title"])
		srv.scim.mu.RUnlock()
		if title != `"Analyst"` {
			t.Errorf("unmodelled member after a PUT carrying it: %s", title)
		}
	}
}

// TestSCIMPublishedShapes: reads and listings carry the members the
// published answers show; WithSCIMFullResources adds every stored member,
// meta's details and itemsPerPage.
func TestSCIMPublishedShapes(t *testing.T) {
	for _, full := range []bool{false, true} {
		srv, tok, id := scimTestAdaServer(t, full)
		published := []string{"schemas", "id", "userName", "active", "meta", scimSchemaEnterprise}
		want := published
		if full {
			want = append(slices.Clone(published), "name", "displayName", "emails", "title")
		}
		_, body, _ := scimTestCall(t, srv, tok, "GET", "/api/scim/v2/Users/"+id, "")
		var got map[string]json.RawMessage
		json.Unmarshal(body, &got)
		if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(slices.Values(want))) {
			t.Errorf("full %v: get answered %s", full, body)
		}
		var meta map[string]string
		json.Unmarshal(got["meta"], &meta)
		if (len(meta) == 1) == full || meta["resourceType"] != "User" {
			t.Errorf("full %v: meta %v", full, meta)
		}
		_, body, _ = scimTestCall(t, srv, tok, "GET", "/api/scim/v2/Users", "")
		var list map[string]json.RawMessage
		json.Unmarshal(body, &list)
		if _, ok := list["itemsPerPage"]; ok != full || list["Resources"] == nil || list["totalResults"] == nil || list["startIndex"] == nil {
			t.Errorf("full %v: list answered %s", full, body)
		}
	}
}

func TestSCIMBadInput(t *testing.T) {
	srv, tok := scimTestServer(t)
	status, body, _ := scimTestCall(t, srv, tok, "POST", "/api/scim/v2/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"x@example.com"}`)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	var created struct{ ID string }
	json.Unmarshal(body, &created)
	other, _ := srv.AddUser(User{UserName: "y@example.com"})
	core := `"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"]`
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		scimType, detail         string
	}{
		{"no userName", "POST", "", `{` + core + `}`, 400, "invalidValue", "userName is required"},
		{"blank userName", "POST", "", `{` + core + `,"userName":"  "}`, 400, "invalidValue", "userName is required"},
		{"no schemas", "POST", "", `{"userName":"a@example.com"}`, 400, "invalidValue", "schemas is required"},
		{"empty schemas", "POST", "", `{"schemas":[],"userName":"a@example.com"}`, 400, "invalidValue", "schemas is required"},
		{"unknown schema", "POST", "", `{"schemas":["urn:x"],"userName":"a@example.com"}`, 400, "invalidValue", `unknown schema "urn:x"`},
		{"extension without schema", "POST", "", `{` + core + `,"userName":"a@example.com","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"x"}}`, 400, "invalidValue", "does not list"},
		{"two primaries", "POST", "", `{` + core + `,"userName":"a@example.com","emails":[{"value":"a","primary":true},{"value":"b","primary":true}]}`, 400, "invalidValue", "primary"},
		{"email without value", "POST", "", `{` + core + `,"userName":"a@example.com","emails":[{"type":"work"}]}`, 400, "invalidValue", "emails[0].value"},
		{"malformed JSON", "POST", "", `{"userName":`, 400, "invalidSyntax", "malformed JSON"},
		{"array body", "POST", "", `[]`, 400, "invalidSyntax", "JSON object"},
		{"wrong type", "POST", "", `{` + core + `,"userName":"a@example.com","active":"yes"}`, 400, "invalidSyntax", "active must be true or false"},
		{"duplicate", "POST", "", `{` + core + `,"userName":"X@EXAMPLE.COM"}`, 409, "uniqueness", "already taken"},
		{"unknown id", "GET", "/nope", "", 404, "", `"nope" not found`},
		{"put unknown id", "PUT", "/nope", `{` + core + `,"userName":"a@example.com"}`, 404, "", "not found"},
		{"put id mismatch", "PUT", "/" + created.ID, `{` + core + `,"id":"other","userName":"x@example.com"}`, 400, "invalidValue", "differs"},
		{"put taken userName", "PUT", "/" + created.ID, `{` + core + `,"userName":"Y@example.com"}`, 409, "uniqueness", "already taken"},
		{"put no userName", "PUT", "/" + other, `{` + core + `}`, 400, "invalidValue", "userName is required"},
		{"bad filter", "GET", "?filter=userName+eq", "", 400, "invalidFilter", "filter"},
		{"bad startIndex", "GET", "?startIndex=x", "", 400, "invalidValue", "startIndex"},
		{"bad count", "GET", "?count=1.5", "", 400, "invalidValue", "count"},
		{"delete unsupported", "DELETE", "/" + created.ID, "", 405, "", "not supported"},
		{"no such endpoint", "GET", "/../Groups", "", 404, "", "no SCIM endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "/api/scim/v2/Users" + tc.path
			if tc.name == "no such endpoint" {
				path = "/api/scim/v2/Groups"
			}
			status, body, _ := scimTestCall(t, srv, tok, tc.method, path, tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			e := scimTestError(t, body, tc.status, tc.scimType)
			if !strings.Contains(e.Detail, tc.detail) {
				t.Errorf("detail %q lacks %q", e.Detail, tc.detail)
			}
		})
	}
	if n := len(srv.Users()); n != 2 {
		t.Errorf("bad requests changed the store: %d users", n)
	}
}

func TestSCIMScopes(t *testing.T) {
	srv := NewServer(WithClient("scim-only", "s1", scopeSCIM), WithClient("users-only", "s2", scopeUsers), WithScopeChecks())
	defer srv.Close()
	scimTok := scimTestToken(t, srv, "scim-only", "s1")
	usersTok := scimTestToken(t, srv, "users-only", "s2")
	user := `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"a@example.com"}`
	check := `{"email":"a@example.com","namespace":1,"filter_value":{"attribute":"role","value":["x"]}}`

	if status, body, _ := scimTestCall(t, srv, usersTok, "POST", "/api/scim/v2/Users", user); status != 403 {
		t.Errorf("users-only client on SCIM: %d %s", status, body)
	} else {
		scimTestError(t, body, 403, "")
	}
	if status, _, _ := scimTestCall(t, srv, usersTok, "GET", "/api/scim/v2/Users", ""); status != 403 {
		t.Errorf("users-only client listing: %d", status)
	}
	if status, body, _ := scimTestCall(t, srv, scimTok, "POST", "/users/v1/check-attribute", check); status != 403 {
		t.Errorf("scim-only client on check-attribute: %d %s", status, body)
	}
	if status, body, _ := scimTestCall(t, srv, scimTok, "POST", "/api/scim/v2/Users", user); status != 201 {
		t.Errorf("scim-only client on SCIM: %d %s", status, body)
	}
	if status, body, _ := scimTestCall(t, srv, usersTok, "POST", "/users/v1/check-attribute", check); status != 201 {
		t.Errorf("users-only client on check-attribute of a SCIM user: %d %s", status, body)
	}
	if status, body, _ := scimTestCall(t, srv, "bogus", "GET", "/api/scim/v2/Users", ""); status != 401 {
		t.Errorf("bogus token: %d %s", status, body)
	} else {
		scimTestError(t, body, 401, "")
	}
}

func TestSCIMListPaging(t *testing.T) {
	srv, tok := scimTestServer(t, WithFullSCIMFilter(), WithSCIMFullResources())
	for i := range 130 {
		if _, err := srv.AddUser(User{UserName: fmt.Sprintf("u%03d@example.com", i), Active: new(i%10 != 0)}); err != nil {
			t.Fatal(err)
		}
	}
	list := func(query string) scimListResponse {
		t.Helper()
		status, body, _ := scimTestCall(t, srv, tok, "GET", "/api/scim/v2/Users"+query, "")
		if status != 200 {
			t.Fatalf("list %s: %d %s", query, status, body)
		}
		var lr scimListResponse
		if err := json.Unmarshal(body, &lr); err != nil {
			t.Fatal(err)
		}
		if len(lr.Schemas) != 1 || lr.Schemas[0] != scimSchemaList || lr.ItemsPerPage == nil || *lr.ItemsPerPage != len(lr.Resources) {
			t.Errorf("list %s: bad envelope %s", query, body)
		}
		return lr
	}
	name := func(raw json.RawMessage) string {
		var u scimUser
		json.Unmarshal(raw, &u)
		return u.UserName
	}
	for _, tc := range []struct {
		query              string
		total, start, n    int
		firstName, summary string
	}{
		{"", 130, 1, scimDefaultCount, "u000@example.com", "defaults"},
		{"?count=1000", 130, 1, scimMaxCount, "u000@example.com", "count capped"},
		{"?startIndex=0&count=3", 130, 1, 3, "u000@example.com", "startIndex below 1"},
		{"?startIndex=129&count=10", 130, 129, 2, "u128@example.com", "last page"},
		{"?startIndex=500", 130, 500, 0, "", "past the end"},
		{"?count=0", 130, 1, 0, "", "count 0"},
		{"?count=-5", 130, 1, 0, "", "negative count"},
		{`?filter=active+eq+false`, 13, 1, 13, "u000@example.com", "active filter"},
		{`?filter=userName+eq+%22U042%40EXAMPLE.COM%22`, 1, 1, 1, "u042@example.com", "userName filter, any case"},
		{`?filter=userName+sw+%22u12%22+and+not+(active+eq+false)&startIndex=2&count=2`, 9, 2, 2, "u122@example.com", "combined filter, paged"},
	} {
		lr := list(tc.query)
		if lr.TotalResults != tc.total || lr.StartIndex != tc.start || len(lr.Resources) != tc.n {
			t.Errorf("%s: total %d start %d n %d, want %d %d %d", tc.summary, lr.TotalResults, lr.StartIndex, len(lr.Resources), tc.total, tc.start, tc.n)
			continue
		}
		if tc.n > 0 && name(lr.Resources[0]) != tc.firstName {
			t.Errorf("%s: first user %s, want %s", tc.summary, name(lr.Resources[0]), tc.firstName)
		}
	}
	if lr := list("?count=0"); lr.Resources == nil {
		t.Error("Resources must be [] rather than null")
	}
}

func TestSCIMConcurrentCreates(t *testing.T) {
	srv, tok := scimTestServer(t)
	var wg sync.WaitGroup
	statuses := make([]int, 40)
	for i := range statuses {
		wg.Go(func() {
			// Half of the requests race for the same userName, in varying case.
			name := fmt.Sprintf("user%d@example.com", i)
			if i%2 == 1 {
				name = "SAME@example.com"
				if i%4 == 1 {
					name = "same@EXAMPLE.com"
				}
			}
			statuses[i], _, _ = scimTestCall(t, srv, tok, "POST", "/api/scim/v2/Users",
				`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"`+name+`"}`)
		})
	}
	wg.Wait()
	created, conflicts := 0, 0
	for i, s := range statuses {
		switch {
		case s == 201:
			created++
		case s == 409 && i%2 == 1:
			conflicts++
		default:
			t.Errorf("request %d: status %d", i, s)
		}
	}
	if created != 21 || conflicts != 19 {
		t.Errorf("created %d, conflicts %d; want 21 and 19", created, conflicts)
	}
	if n := len(srv.Users()); n != 21 {
		t.Errorf("store holds %d users, want 21", n)
	}
}

func TestSCIMDemoData(t *testing.T) {
	srv, tok := scimTestServer(t, WithDemoData())
	status, body, _ := scimTestCall(t, srv, tok, "GET", "/api/scim/v2/Users/"+demo.User3, "")
	if status != 200 || !strings.Contains(string(body), `"active":false`) || !strings.Contains(string(body), demo.UserEmail3) {
		t.Errorf("demo user 3: %d %s", status, body)
	}
	if n := len(srv.Users()); n != 3 {
		t.Errorf("demo users: %d", n)
	}
}

// TestSCIMFilterDeployedOnly: by default the fake takes only the filter
// the deployed service documents, userName eq "...", and answers any
// other with 400 invalidFilter saying so; WithFullSCIMFilter lifts that.
func TestSCIMFilterDeployedOnly(t *testing.T) {
	srv, tok := scimTestServer(t)
	full, fullTok := scimTestServer(t, WithFullSCIMFilter())
	for _, s := range []*Server{srv, full} {
		if _, err := s.AddUser(User{UserName: "ada@example.com", Active: new(false)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		query    string
		status   int
		fullWant int
	}{
		{`?filter=userName+eq+%22ADA%40example.com%22`, 200, 200},
		{`?filter=urn%3Aietf%3Aparams%3Ascim%3Aschemas%3Acore%3A2.0%3AUser%3AuserName+eq+%22ada%40example.com%22`, 200, 200},
		{`?filter=active+eq+false`, 400, 200},
		{`?filter=userName+sw+%22ada%22`, 400, 200},
		{`?filter=userName+eq+%22a%22+or+userName+eq+%22b%22`, 400, 200},
		{`?filter=not+(userName+eq+%22a%22)`, 400, 200},
		{`?filter=userName+ne+%22a%22`, 400, 200},
		{`?filter=emails.value+eq+%22ada%40example.com%22`, 400, 200},
	} {
		status, body, _ := scimTestCall(t, srv, tok, "GET", "/api/scim/v2/Users"+tc.query, "")
		if status != tc.status {
			t.Errorf("default %s: %d %s, want %d", tc.query, status, body, tc.status)
		}
		if status == 400 {
			e := scimTestError(t, body, 400, "invalidFilter")
			if !strings.Contains(e.Detail, `only userName eq`) || !strings.Contains(e.Detail, "WithFullSCIMFilter") {
				t.Errorf("default %s: detail %q does not say why", tc.query, e.Detail)
			}
		}
		if status, body, _ := scimTestCall(t, full, fullTok, "GET", "/api/scim/v2/Users"+tc.query, ""); status != tc.fullWant {
			t.Errorf("full %s: %d %s, want %d", tc.query, status, body, tc.fullWant)
		}
	}
}

// TestSCIMUnmodelledMembersBounded: a user keeps at most 64 members the
// fake does not model, 64 KiB of them, and 100 emails; a body past a cap,
// or a PUT
// whose members with those the user keeps would pass it, is a 400
// invalidValue that names the cap, and changes nothing.
func TestSCIMUnmodelledMembersBounded(t *testing.T) {
	srv, tok := scimTestServer(t)
	user := func(name string, from, n, size int) string {
		var b strings.Builder
		fmt.Fprintf(&b, `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":%q`, name)
		for i := range n {
			fmt.Fprintf(&b, `,"x%d":%q`, from+i, strings.Repeat("v", size))
		}
		return b.String() + "}"
	}
	status, body, _ := scimTestCall(t, srv, tok, "POST", "/api/scim/v2/Users", user("a@example.com", 0, 64, 10))
	if status != http.StatusCreated {
		t.Fatalf("64 members: %d %s", status, body)
	}
	var created struct{ ID string }
	json.Unmarshal(body, &created)
	for _, tc := range []struct {
		method, path, body, want string
	}{
		{"POST", "/api/scim/v2/Users", user("b@example.com", 0, 65, 10), "more than 64 members the fake does not model"},
		{"POST", "/api/scim/v2/Users", user("b@example.com", 0, 2, 40<<10), "more than 65536 bytes of members the fake does not model"},
		{"POST", "/api/scim/v2/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"c@example.com","emails":[` +
			strings.Repeat(`{"value":"e@example.com"},`, 100) + `{"value":"f@example.com"}]}`, "the user has 101 emails: the fake keeps at most 100"},
		// 64 others than the 64 it keeps: 128 in all.
		{"PUT", "/api/scim/v2/Users/" + created.ID, user("a@example.com", 64, 64, 10), "more than 64 members the fake does not model"},
	} {
		status, body, _ := scimTestCall(t, srv, tok, tc.method, tc.path, tc.body)
		if status != http.StatusBadRequest || !strings.Contains(scimTestError(t, body, 400, "invalidValue").Detail, tc.want) {
			t.Errorf("%s %s: %d %s, want 400 saying %q", tc.method, tc.path, status, body, tc.want)
		}
	}
	srv.scim.mu.RLock()
	kept, users := len(srv.scim.byID[created.ID].extra), len(srv.scim.byID)
	srv.scim.mu.RUnlock()
	if kept != 64 || users != 1 {
		t.Errorf("after the refusals: %d unmodelled members kept, %d users; want 64 and 1", kept, users)
	}
}
