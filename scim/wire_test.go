package scim_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/internal/paging"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/scim"
)

const base = mocktest.BaseURL

// specUser is a user as section 2 of the interface describes it.
const specUser = mocktest.SpecUser

func TestUserJSONRoundTrip(t *testing.T) {
	var u scim.User
	if err := json.Unmarshal([]byte(specUser), &u); err != nil {
		t.Fatal(err)
	}
	want := scim.User{
		Schemas:     []scim.Schema{scim.SchemaUser, scim.SchemaEnterpriseUser},
		ID:          "2819c223-7f76-453a-919d-413861904646",
		UserName:    "bjensen@example.com",
		Name:        &scim.Name{GivenName: "Barbara", FamilyName: "Jensen"},
		Emails:      []scim.Email{{Primary: true, Value: "bjensen@example.com", Type: "work"}},
		DisplayName: "Babs Jensen",
		Meta:        &scim.Meta{ResourceType: "User"},
		Active:      new(true),
		Enterprise:  &scim.EnterpriseUser{Department: "Tour Operations"},
	}
	if !reflect.DeepEqual(u, want) {
		t.Errorf("decoded\n%+v\nwant\n%+v", u, want)
	}
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	mocktest.JSONEqual(t, b, specUser)

	// Members the SDK does not model survive, at both levels.
	const extended = `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"a",
		"title":"Tour Guide","phoneNumbers":[{"value":"555-0100"}],"urn:example:ext":{"x":1},
		"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"D","costCenter":"42"}}`
	var e scim.User
	if err := json.Unmarshal([]byte(extended), &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Extra) != 3 || string(e.Extra["title"]) != `"Tour Guide"` || e.Enterprise.Department != "D" || string(e.Enterprise.Extra["costCenter"]) != `"42"` {
		t.Errorf("decoded %+v", e)
	}
	b, _ = json.Marshal(e)
	mocktest.JSONEqual(t, b, extended)

	// A modelled field wins over an Extra member of the same name.
	e.Extra["userName"] = json.RawMessage(`"shadow"`)
	b, _ = json.Marshal(e)
	if strings.Contains(string(b), "shadow") {
		t.Errorf("Extra overrode a field: %s", b)
	}
	e.Extra["bad"] = json.RawMessage(`{`)
	if _, err := json.Marshal(e); err == nil {
		t.Error("invalid Extra JSON was encoded")
	}

	// Member names match without regard to case, on both decoding paths.
	for _, in := range []string{`{"USERNAME":"a","Active":false}`, `{"USERNAME":"a","Active":false,"other":1}`} {
		var c scim.User
		if err := json.Unmarshal([]byte(in), &c); err != nil || c.UserName != "a" || c.IsActive() {
			t.Errorf("%s decoded to %+v, %v", in, c, err)
		}
	}
	for _, in := range []string{`{"userName":5}`, `{"userName":5,"other":1}`, `{"active":"yes"}`} {
		var c scim.User
		if err := json.Unmarshal([]byte(in), &c); err == nil {
			t.Errorf("%s decoded without error", in)
		}
	}
}

func TestCreateWire(t *testing.T) {
	c, mt := mocktest.New(t)
	// The body: schemas filled in, no id, no active (left to the service).
	mt.RegisterResponder(http.MethodPost, base+"/api/scim/v2/Users", mocktest.JSONResponder(t, `{
		"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
		"userName": "bjensen@example.com",
		"name": {"givenName": "Barbara", "familyName": "Jensen"},
		"emails": [{"primary": true, "value": "bjensen@example.com", "type": "work"}],
		"displayName": "Babs Jensen",
		"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"department": "Tour Operations"}
	}`, 201, specUser))
	in := &scim.User{
		UserName:    "bjensen@example.com",
		Name:        &scim.Name{GivenName: "Barbara", FamilyName: "Jensen"},
		Emails:      []scim.Email{{Primary: true, Value: "bjensen@example.com", Type: "work"}},
		DisplayName: "Babs Jensen",
		Enterprise:  &scim.EnterpriseUser{Department: "Tour Operations"},
	}
	u, err := c.SCIM.Create(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if u.ID != "2819c223-7f76-453a-919d-413861904646" || !u.IsActive() || u.PrimaryEmail() != "bjensen@example.com" {
		t.Errorf("created %+v", u)
	}
	if in.Schemas != nil {
		t.Error("Create modified its argument")
	}
}

func TestGetUpdateWire(t *testing.T) {
	c, mt := mocktest.New(t)
	ctx := context.Background()
	mt.RegisterResponder(http.MethodGet, base+"/api/scim/v2/Users/u%2F1", mocktest.JSONResponder(t, "", 200, specUser))
	u, err := c.SCIM.Get(ctx, "u/1") // the id is one escaped path segment
	if err != nil {
		t.Fatal(err)
	}
	u.DisplayName = "Barbara J."
	u.Active = new(false)
	mt.RegisterResponder(http.MethodPut, base+"/api/scim/v2/Users/2819c223-7f76-453a-919d-413861904646", mocktest.JSONResponder(t, `{
		"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
		"id": "2819c223-7f76-453a-919d-413861904646",
		"userName": "bjensen@example.com",
		"name": {"givenName": "Barbara", "familyName": "Jensen"},
		"emails": [{"primary": true, "value": "bjensen@example.com", "type": "work"}],
		"displayName": "Barbara J.",
		"meta": {"resourceType": "User"},
		"active": false,
		"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"department": "Tour Operations"}
	}`, 200, strings.Replace(specUser, `"active": true`, `"active": false`, 1)))
	got, err := c.SCIM.Update(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if got.IsActive() {
		t.Error("updated user is still active")
	}
}

func TestSuspendKeepsUnknownMembers(t *testing.T) {
	c, mt := mocktest.New(t)
	const stored = `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"id":"u1","userName":"a@example.com",
		"active":true,"name":{"givenName":"A","middleName":"B"},"x-custom":[1,2]}`
	mt.RegisterResponder(http.MethodGet, base+"/api/scim/v2/Users/u1", mocktest.JSONResponder(t, "", 200, stored))
	want := strings.Replace(stored, `"active":true`, `"active":false`, 1)
	mt.RegisterResponder(http.MethodPut, base+"/api/scim/v2/Users/u1", mocktest.JSONResponder(t, want, 200, want))
	u, err := c.SCIM.Suspend(context.Background(), "u1")
	if err != nil {
		t.Fatal(err)
	}
	if u.IsActive() || string(u.Extra["x-custom"]) != "[1,2]" {
		t.Errorf("suspended user %+v", u)
	}
	// Suspending again reads and does not write.
	mt.RegisterResponder(http.MethodGet, base+"/api/scim/v2/Users/u1", mocktest.JSONResponder(t, "", 200, want))
	if _, err := c.SCIM.Suspend(context.Background(), "u1"); err != nil {
		t.Fatal(err)
	}
	if n := mt.GetCallCountInfo()["PUT "+base+"/api/scim/v2/Users/u1"]; n != 1 {
		t.Errorf("%d PUTs, want 1", n)
	}
}

func TestListWire(t *testing.T) {
	c, mt := mocktest.New(t)
	page := func(start string, body string) {
		mt.RegisterResponderWithQuery(http.MethodGet, base+"/api/scim/v2/Users",
			map[string]string{"filter": `active eq true`, "startIndex": start, "count": "2"},
			mocktest.JSONResponder(t, "", 200, body))
	}
	page("1", `{"schemas":["urn:ietf:params:scim:api:messages:2.0:ListResponse"],"totalResults":3,"startIndex":1,"itemsPerPage":2,
		"Resources":[{"id":"a","userName":"a@example.com"},{"id":"b","userName":"b@example.com"}]}`)
	page("3", `{"schemas":["urn:ietf:params:scim:api:messages:2.0:ListResponse"],"totalResults":3,"startIndex":3,"itemsPerPage":1,
		"Resources":[{"id":"c","userName":"c@example.com"}]}`)
	users, err := paging.Collect(c.SCIM.List(context.Background(), scim.ListParams{Filter: "active eq true", Count: 2}))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, u := range users {
		ids = append(ids, u.ID)
	}
	if strings.Join(ids, ",") != "a,b,c" {
		t.Errorf("listed %v", ids)
	}
	if n := mt.GetTotalCallCount(); n != 3 { // token + 2 pages
		t.Errorf("%d calls, want 3", n)
	}
}

func TestListStopsOnEmptyPage(t *testing.T) {
	c, mt := mocktest.New(t)
	// A server whose totalResults overstates the listing must not make
	// the iterator loop.
	mt.RegisterResponder(http.MethodGet, base+"/api/scim/v2/Users", func(req *http.Request) (*http.Response, error) {
		if req.URL.Query().Get("startIndex") == "1" {
			return httpmock.NewStringResponse(200, `{"totalResults":10,"startIndex":1,"itemsPerPage":1,"Resources":[{"id":"a","userName":"a"}]}`), nil
		}
		return httpmock.NewStringResponse(200, `{"totalResults":10,"startIndex":2,"itemsPerPage":0,"Resources":[]}`), nil
	})
	users, err := paging.Collect(c.SCIM.List(context.Background(), scim.ListParams{}))
	if err != nil || len(users) != 1 {
		t.Fatalf("users %v, err %v", users, err)
	}
}

func TestFindByUserNameQuotes(t *testing.T) {
	c, mt := mocktest.New(t)
	const name = `o"brien\x@example.com`
	mt.RegisterResponderWithQuery(http.MethodGet, base+"/api/scim/v2/Users",
		map[string]string{"filter": `userName eq "o\"brien\\x@example.com"`, "startIndex": "1", "count": "1"},
		mocktest.JSONResponder(t, "", 200, `{"totalResults":1,"startIndex":1,"itemsPerPage":1,"Resources":[{"id":"ob","userName":"o\"brien\\x@example.com"}]}`))
	u, err := c.SCIM.FindByUserName(context.Background(), name)
	if err != nil || u.ID != "ob" || u.UserName != name {
		t.Fatalf("found %+v, %v", u, err)
	}
	mt.RegisterResponder(http.MethodGet, base+"/api/scim/v2/Users",
		mocktest.JSONResponder(t, "", 200, `{"totalResults":0,"startIndex":1,"itemsPerPage":0,"Resources":[]}`))
	if _, err := c.SCIM.FindByUserName(context.Background(), "nobody@example.com"); !errors.Is(err, scim.ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		`a@b.com`:       `"a@b.com"`,
		`say "hi"`:      `"say \"hi\""`,
		`back\slash`:    `"back\\slash"`,
		"tab\tnl\n\x01": `"tab\tnl\n\u0001"`,
		"é ü":           `"é ü"`,
		"bad\xffutf8":   `"bad\ufffdutf8"`,
		"del\x7f":       `"del\u007f"`,
	} {
		got := scim.Quote(in)
		if got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("Quote(%q) = %s is not a JSON string: %v", in, got, err)
		}
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		status   int
		body     string
		is       func(error) bool
		scimType scim.ErrorType
	}{
		{400, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"400","scimType":"invalidValue","detail":"userName is required"}`, partner.IsBadRequest, scim.ErrorTypeInvalidValue},
		{401, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"401","detail":"bad token"}`, partner.IsUnauthorized, ""},
		{403, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"403","detail":"denied"}`, partner.IsForbidden, ""},
		{404, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"404","detail":"not found"}`, partner.IsNotFound, ""},
		{409, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"409","scimType":"uniqueness","detail":"userName is taken"}`, partner.IsConflict, scim.ErrorTypeUniqueness},
		{500, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"500","detail":"boom"}`, partner.IsServerError, ""},
	} {
		c, mt := mocktest.New(t)
		mt.RegisterResponder(http.MethodPost, base+"/api/scim/v2/Users", httpmock.NewStringResponder(tc.status, tc.body))
		_, err := c.SCIM.Create(context.Background(), &scim.User{UserName: "a@example.com"})
		var perr *partner.Error
		if !errors.As(err, &perr) || !tc.is(err) {
			t.Errorf("%d: err %v", tc.status, err)
			continue
		}
		var detail struct{ Detail string }
		json.Unmarshal([]byte(tc.body), &detail)
		if scim.ErrorTypeOf(err) != tc.scimType || perr.SCIMType != string(tc.scimType) || perr.Message != detail.Detail || perr.Path != "/api/scim/v2/Users" {
			t.Errorf("%d: %+v", tc.status, perr)
		}
	}
}

func TestValidation(t *testing.T) {
	c, mt := mocktest.New(t)
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"partner: scim: user is nil":          func() error { _, err := c.SCIM.Create(ctx, nil); return err },
		"partner: scim: userName is required": func() error { _, err := c.SCIM.Create(ctx, &scim.User{UserName: " "}); return err },
		"leave it empty on create":            func() error { _, err := c.SCIM.Create(ctx, &scim.User{ID: "x", UserName: "a"}); return err },
		`schema "core" is not a URN`: func() error {
			_, err := c.SCIM.Create(ctx, &scim.User{UserName: "a", Schemas: []scim.Schema{"core"}})
			return err
		},
		"emails[0]: value is required": func() error {
			_, err := c.SCIM.Create(ctx, &scim.User{UserName: "a", Emails: []scim.Email{{Type: "work"}}})
			return err
		},
		"id is required for update":            func() error { _, err := c.SCIM.Update(ctx, &scim.User{UserName: "a"}); return err },
		"userName is required":                 func() error { _, err := c.SCIM.Update(ctx, &scim.User{ID: "x"}); return err },
		"user id is required":                  func() error { _, err := c.SCIM.Get(ctx, ""); return err },
		"user id is required ":                 func() error { _, err := c.SCIM.Suspend(ctx, ""); return err },
		"startIndex must be 1 or more":         func() error { _, err := paging.Collect(c.SCIM.List(ctx, scim.ListParams{StartIndex: -1})); return err },
		"count must not be negative":           func() error { _, err := paging.Collect(c.SCIM.List(ctx, scim.ListParams{Count: -1})); return err },
		"partner: scim: userName is required ": func() error { _, err := c.SCIM.FindByUserName(ctx, ""); return err },
	} {
		err := call()
		if err == nil || !strings.Contains(err.Error(), strings.TrimSpace(name)) {
			t.Errorf("err %v, want %q", err, name)
		}
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Errorf("invalid calls sent %d requests", n)
	}
}

func TestPrimaryEmail(t *testing.T) {
	for _, tc := range []struct {
		emails []scim.Email
		want   string
	}{
		{nil, ""},
		{[]scim.Email{{Value: "a@x"}, {Value: "b@x"}}, "a@x"},
		{[]scim.Email{{Value: "a@x"}, {Value: "b@x", Primary: true}}, "b@x"},
	} {
		if got := (&scim.User{Emails: tc.emails}).PrimaryEmail(); got != tc.want {
			t.Errorf("PrimaryEmail of %+v = %q, want %q", tc.emails, got, tc.want)
		}
	}
}

// deployedListExample is the list answer of the deployed service's
// published example: totalResults and startIndex 0 beside one resource.
const deployedListExample = `{
	"schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
	"totalResults": 0,
	"startIndex": 0,
	"Resources": [
		{
			"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
			"userName": "jane.doe@example.com",
			"meta": {"resourceType": "User"},
			"id": "2819c223-7f76-453a-919d-413861904646",
			"active": true,
			"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"department": "Sales"}
		}
	]
}`

// TestListDeployedExample feeds the published example: its totalResults
// of 0 does not end the listing, which goes on by resources until a page
// comes back shorter than asked.
func TestListDeployedExample(t *testing.T) {
	c, mt := mocktest.New(t)
	var starts []string
	mt.RegisterResponder(http.MethodGet, base+"/api/scim/v2/Users", func(req *http.Request) (*http.Response, error) {
		q := req.URL.Query()
		starts = append(starts, q.Get("startIndex"))
		if q.Get("count") != "1" {
			t.Errorf("count = %q", q.Get("count"))
		}
		switch q.Get("startIndex") {
		case "1", "2":
			return httpmock.NewStringResponse(200, strings.Replace(deployedListExample, "2819c223", "user"+q.Get("startIndex"), 1)), nil
		}
		return httpmock.NewStringResponse(200, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:ListResponse"],"totalResults":0,"startIndex":0,"Resources":[]}`), nil
	})
	users, err := paging.Collect(c.SCIM.List(context.Background(), scim.ListParams{Count: 1}))
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 2 || !strings.HasPrefix(users[0].ID, "user1-") || !strings.HasPrefix(users[1].ID, "user2-") ||
		users[0].UserName != "jane.doe@example.com" || !users[0].IsActive() || users[0].Enterprise == nil || users[0].Enterprise.Department != "Sales" {
		t.Fatalf("users = %+v", users)
	}
	if strings.Join(starts, ",") != "1,2,3" {
		t.Errorf("startIndex sent: %v, want 1,2,3", starts)
	}

	// FindByUserName reads the user out of the same answer.
	mt.RegisterResponder(http.MethodGet, base+"/api/scim/v2/Users", httpmock.NewStringResponder(200, deployedListExample))
	u, err := c.SCIM.FindByUserName(context.Background(), "jane.doe@example.com")
	if err != nil || u.ID != "2819c223-7f76-453a-919d-413861904646" {
		t.Fatalf("FindByUserName = %+v, %v", u, err)
	}
}

// TestListShortPageEnds: a page shorter than asked ends the listing
// without another request, unless totalResults says more users follow.
func TestListShortPageEnds(t *testing.T) {
	for name, tc := range map[string]struct {
		total, wantCalls int
	}{
		"total 0 (deployed example)": {0, 1},
		"total matches":              {1, 1},
		"total says more":            {3, 2},
	} {
		t.Run(name, func(t *testing.T) {
			c, mt := mocktest.New(t)
			calls := 0
			mt.RegisterResponder(http.MethodGet, base+"/api/scim/v2/Users", func(req *http.Request) (*http.Response, error) {
				calls++
				if calls > 1 {
					return httpmock.NewStringResponse(200, `{"totalResults":0,"startIndex":0,"Resources":[]}`), nil
				}
				return httpmock.NewStringResponse(200, fmt.Sprintf(`{"totalResults":%d,"startIndex":0,"Resources":[{"id":"a","userName":"a"}]}`, tc.total)), nil
			})
			users, err := paging.Collect(c.SCIM.List(context.Background(), scim.ListParams{Count: 5}))
			if err != nil || len(users) != 1 || calls != tc.wantCalls {
				t.Errorf("users %d, err %v, %d list calls; want 1 user, %d calls", len(users), err, calls, tc.wantCalls)
			}
		})
	}
}

// TestListRepeatedPageEnds feeds the published example again and again,
// as a service that ignores startIndex answers: the listing yields its
// user once and ends with ErrPageRepeated after the second request, with
// or without a page size.
func TestListRepeatedPageEnds(t *testing.T) {
	for _, count := range []int{0, 1} {
		c, mt := mocktest.New(t)
		calls := 0
		mt.RegisterResponder(http.MethodGet, base+"/api/scim/v2/Users", func(*http.Request) (*http.Response, error) {
			calls++
			if calls > 10 {
				t.Fatalf("count %d: %d list calls: the listing does not end", count, calls)
			}
			return httpmock.NewStringResponse(200, deployedListExample), nil
		})
		var users []scim.User
		var err error
		for u, e := range c.SCIM.List(context.Background(), scim.ListParams{Count: count}) {
			if e != nil {
				err = e
				break
			}
			users = append(users, u)
		}
		if len(users) != 1 || users[0].ID != "2819c223-7f76-453a-919d-413861904646" || calls != 2 {
			t.Errorf("count %d: users %+v after %d calls; want the one user after 2", count, users, calls)
		}
		if !errors.Is(err, scim.ErrPageRepeated) || !strings.HasPrefix(err.Error(), "partner: scim: ") ||
			!strings.Contains(err.Error(), "startIndex 2") || !strings.Contains(err.Error(), "ignore startIndex") {
			t.Errorf("count %d: error %v", count, err)
		}
	}
}

// TestListSkipsUsersSeenBefore: a page that overlaps the one before
// yields only its new users, and the listing goes on.
func TestListSkipsUsersSeenBefore(t *testing.T) {
	c, mt := mocktest.New(t)
	mt.RegisterResponder(http.MethodGet, base+"/api/scim/v2/Users", func(req *http.Request) (*http.Response, error) {
		switch req.URL.Query().Get("startIndex") {
		case "1":
			return httpmock.NewStringResponse(200, `{"totalResults":3,"startIndex":1,"Resources":[{"id":"a","userName":"a"},{"id":"b","userName":"b"}]}`), nil
		case "3":
			return httpmock.NewStringResponse(200, `{"totalResults":3,"startIndex":2,"Resources":[{"id":"b","userName":"b"},{"id":"c","userName":"c"}]}`), nil
		}
		return httpmock.NewStringResponse(200, `{"totalResults":3,"Resources":[]}`), nil
	})
	users, err := paging.Collect(c.SCIM.List(context.Background(), scim.ListParams{Count: 2}))
	var ids []string
	for _, u := range users {
		ids = append(ids, u.ID)
	}
	if err != nil || strings.Join(ids, ",") != "a,b,c" {
		t.Fatalf("users %v, %v; want a,b,c", ids, err)
	}
}

// TestGetAnswerBodies: Get decodes the answers of the service as
// encoding/json reads a body: the first value when more follows it,
// unknown members kept, invalid JSON an error, and no answer leaks into
// the next one (the decoding state is reused between calls).
func TestGetAnswerBodies(t *testing.T) {
	c, mt := mocktest.New(t)
	ctx := context.Background()
	for range 8 {
		for _, tc := range []struct {
			body, id, extra string // extra: a member kept in Extra
			bad             bool
		}{
			{body: specUser + "\n", id: "2819c223-7f76-453a-919d-413861904646"},
			{body: `{"id":"a","userName":"x"} {"id":"b"}`, id: "a"},
			{body: `{"id":"c","userName":"y"}`, id: "c"},
			{body: `{"id":"d","userName":"z","title":"T"} {"id":"e"}`, id: "d", extra: "title"},
			{body: `{"id":"f","userName":"w"}garbage`, id: "f"},
			{body: `{"id":"g","userName":`, bad: true},
			{body: `{"id":"h","userName":"v",}`, bad: true},
			{body: `{"id":"i","title":"T",}`, bad: true},
			{body: " \n ", id: ""},
			{body: `{"id":"j","userName":"u"}`, id: "j"},
		} {
			mt.RegisterResponder(http.MethodGet, base+"/api/scim/v2/Users/1", httpmock.NewStringResponder(200, tc.body))
			u, err := c.SCIM.Get(ctx, "1")
			switch {
			case tc.bad:
				if err == nil || !strings.Contains(err.Error(), "reading response") {
					t.Fatalf("%q: err = %v, want a decoding error", tc.body, err)
				}
			case err != nil:
				t.Fatalf("%q: %v", tc.body, err)
			case u.ID != tc.id:
				t.Fatalf("%q: id %q, want %q", tc.body, u.ID, tc.id)
			case tc.extra != "" && u.Extra[tc.extra] == nil:
				t.Fatalf("%q: Extra %v lacks %q", tc.body, u.Extra, tc.extra)
			}
		}
	}
}
