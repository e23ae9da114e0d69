package scim

import (
	"reflect"
	"strings"
	"testing"
)

// TestFastUserHasUsersFields: the fast path's target has every field of
// User but Extra, of the same name, type and JSON tag (the extension's
// type aside, decoded without its UnmarshalJSON), so that a field added
// to User is decoded by the fast path too (fastUser.user copies them).
func TestFastUserHasUsersFields(t *testing.T) {
	user, fast := reflect.TypeFor[User](), reflect.TypeFor[fastUser]()
	if got, want := fast.NumField(), user.NumField()-1; got != want {
		t.Fatalf("fastUser has %d fields, User %d besides Extra", got, want)
	}
	for i := range fast.NumField() {
		f, u := fast.Field(i), user.Field(i)
		ft := f.Type
		if f.Name == "Enterprise" {
			ft = reflect.TypeFor[*EnterpriseUser]()
		}
		// The extension's tag leaves out omitempty: a user decoded has one or none.
		tag, _ := strings.CutSuffix(u.Tag.Get("json"), ",omitempty")
		if f.Name != u.Name || ft != u.Type || (f.Tag.Get("json") != u.Tag.Get("json") && f.Tag.Get("json") != tag) {
			t.Errorf("fastUser field %d: %s %s %q, User's %s %s %q", i, f.Name, f.Type, f.Tag, u.Name, u.Type, u.Tag)
		}
	}
	full := fastUser{Schemas: []Schema{SchemaUser}, ID: "i", UserName: "u", Name: &Name{}, DisplayName: "d",
		Emails: []Email{{}}, Active: new(true), Meta: &Meta{}, Enterprise: &enterpriseJSON{Department: "x"}}
	got := reflect.ValueOf(full.user())
	for i := range got.NumField() {
		if name := user.Field(i).Name; name != "Extra" && got.Field(i).IsZero() {
			t.Errorf("fastUser.user leaves %s out", name)
		}
	}
}
