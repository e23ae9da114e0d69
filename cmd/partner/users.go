package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/partnerapi/partner-go/scim"
)

func (a *app) usersCmd() *cobra.Command {
	return group("users", "Provision users (SCIM)", "  partner users list\n  partner users import people.csv",
		a.usersListCmd(), a.usersCreateCmd(), a.usersSuspendCmd(), a.usersImportCmd())
}

// userFields are the attributes the CLI sets on a user. Empty fields are
// left as they are.
type userFields struct {
	UserName, DisplayName, GivenName, FamilyName, Email, Department string
	Active                                                          *bool
}

// apply sets the non-empty fields on u and reports whether u changed.
func (in userFields) apply(u *scim.User) bool {
	changed := false
	set := func(dst *string, v string) {
		if v != "" && *dst != v {
			*dst, changed = v, true
		}
	}
	set(&u.UserName, in.UserName)
	set(&u.DisplayName, in.DisplayName)
	if in.GivenName != "" || in.FamilyName != "" {
		if u.Name == nil {
			u.Name = &scim.Name{}
		}
		set(&u.Name.GivenName, in.GivenName)
		set(&u.Name.FamilyName, in.FamilyName)
	}
	if in.Email != "" && !strings.EqualFold(u.PrimaryEmail(), in.Email) {
		emails := []scim.Email{{Value: in.Email, Type: "work", Primary: true}}
		for _, e := range u.Emails {
			if !strings.EqualFold(e.Value, in.Email) {
				e.Primary = false
				emails = append(emails, e)
			}
		}
		u.Emails, changed = emails, true
	}
	if in.Department != "" {
		if u.Enterprise == nil {
			u.Enterprise = &scim.EnterpriseUser{}
		}
		set(&u.Enterprise.Department, in.Department)
	}
	if in.Active != nil && u.IsActive() != *in.Active {
		v := *in.Active
		u.Active, changed = &v, true
	}
	return changed
}
