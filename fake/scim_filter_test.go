package fake

import (
	"strings"
	"testing"
	"time"
)

func scimFilterRecord() *scimRecord {
	return &scimRecord{
		user: scimUser{
			ID: "usr-AbC", UserName: "Ada@Example.com", DisplayName: `Ada "the first" Lovelace`,
			Name:       &scimName{GivenName: "Ada", FamilyName: "Lovelace"},
			Emails:     []scimEmail{{Value: "ada@work.example", Type: "work", Primary: true}, {Value: "ada@home.example", Type: "home"}},
			Active:     new(true),
			Enterprise: &scimEnterprise{Department: "Engineering"},
		},
		created:  time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		modified: time.Date(2026, 2, 2, 3, 4, 5, 0, time.UTC),
	}
}

func TestSCIMFilterMatch(t *testing.T) {
	u := scimFilterRecord()
	for _, tc := range []struct {
		filter string
		want   bool
	}{
		{`userName eq "ada@example.com"`, true},
		{`USERNAME EQ "ADA@EXAMPLE.COM"`, true},
		{`userName eq "bob@example.com"`, false},
		{`userName ne "bob@example.com"`, true},
		{`urn:ietf:params:scim:schemas:core:2.0:User:userName eq "ada@example.com"`, true},
		{`id eq "usr-abc"`, false}, // id is case-exact
		{`id eq "usr-AbC"`, true},
		{`active eq true`, true},
		{`active eq false`, false},
		{`active ne false`, true},
		{`displayName co "\"the first\""`, true},
		{`displayName sw "ada"`, true},
		{`displayName ew "lovelace"`, true},
		{`name.familyName eq "Lovelace" and name.givenName eq "Ada"`, true},
		{`emails eq "ada@home.example"`, true},
		{`emails.value ew "@work.example"`, true},
		{`emails.type eq "other"`, false},
		{`emails.primary eq true`, true},
		{`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "engineering"`, true},
		{`meta.resourceType eq "User"`, true},
		{`meta.created lt "2026-01-02T03:04:06Z"`, true},
		{`meta.lastModified gt "2026-03-01T00:00:00+01:00"`, false},
		{`userName gt "a" and userName lt "b"`, true},
		{`displayName pr`, true},
		{`not (displayName pr)`, false},
		{`userName eq "x" or (active eq true and emails.type eq "home")`, true},
		{`userName eq "x" or active eq true and emails.type eq "none"`, false},
		{`(((userName pr)))`, true},
	} {
		f, err := parseSCIMFilter(tc.filter)
		if err != nil {
			t.Errorf("%s: %v", tc.filter, err)
			continue
		}
		if got := f.match(u); got != tc.want {
			t.Errorf("%s: match = %v, want %v", tc.filter, got, tc.want)
		}
	}
	// Unassigned attributes match nothing but "ne".
	bare := &scimRecord{user: scimUser{ID: "x", UserName: "bare"}}
	for filter, want := range map[string]bool{
		`name.givenName eq "Ada"`: false, `name.givenName pr`: false, `name.givenName ne "Ada"`: true,
		`emails pr`: false, `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department sw "E"`: false,
	} {
		if f, err := parseSCIMFilter(filter); err != nil || f.match(bare) != want {
			t.Errorf("%s on a bare user: err %v, want match %v", filter, err, want)
		}
	}
}

func TestSCIMFilterErrors(t *testing.T) {
	for filter, want := range map[string]string{
		``:                                "expected an attribute",
		`   `:                             "expected an attribute",
		`userName`:                        "expected an operator",
		`userName eq`:                     "quoted value",
		`userName eq "x`:                  "unterminated string",
		`userName eq "\q"`:                "malformed string",
		`userName eq "a` + "\x01" + `"`:   "malformed string",
		`userName eq x`:                   "quoted value",
		`userName eq 42`:                  "quoted value",
		`userName eq null`:                "null",
		`userName like "x"`:               "unknown operator",
		`nickName eq "x"`:                 "unknown or unsupported attribute",
		`active eq "true"`:                "true or false",
		`active co true`:                  "only eq and ne",
		`meta.created eq "yesterday"`:     "RFC 3339",
		`meta.created sw "2026"`:          "does not apply",
		`meta.created eq 1`:               "dateTime",
		`emails[type eq "work"]`:          "not supported",
		`not userName pr`:                 `must be followed by "("`,
		`(userName pr`:                    `expected ")"`,
		`userName pr)`:                    `unexpected ")"`,
		`userName pr and`:                 "expected an attribute",
		`userName pr userName pr`:         "unexpected",
		strings.Repeat("(", 40) + "id pr": "deeper than",
		strings.Repeat("x", 5000):         "longer than",
	} {
		_, err := parseSCIMFilter(filter)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", filter, err, want)
		}
	}
}

// FuzzSCIMFilter checks that any input either parses into a filter that
// evaluates without panicking or fails with an error.
func FuzzSCIMFilter(f *testing.F) {
	for _, s := range []string{
		`userName eq "ada@example.com"`, `active eq false`, `not (emails.value co "\u0041") or id pr`,
		`meta.created ge "2026-01-01T00:00:00Z" and displayName sw "A"`, `(`, `"`, `a eq "\`, `emails[`,
		`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department ne ""`,
	} {
		f.Add(s)
	}
	recs := []*scimRecord{scimFilterRecord(), {user: scimUser{ID: "x", UserName: "y"}}}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := parseSCIMFilter(s)
		if err != nil {
			if flt != nil {
				t.Fatalf("%q: a filter and an error", s)
			}
			return
		}
		for _, r := range recs {
			flt.match(r)
		}
	})
}
