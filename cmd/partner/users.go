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

// apply sets the non-empty fields on u, a new user, and reports whether
// u changed.
func (in userFields) apply(u *scim.User) bool { return in.set(u, false) }

// update sets the non-empty fields on u, a user as a read returned it, and
// reports whether a member the read returned differs. The published reads
// return the userName, active and the enterprise extension (department),
// not displayName, name or emails: a member the read did not return
// cannot be compared, so it is written along with a change but is no
// change itself (the service keeps a member a PUT does not carry). Emails
// are written only when the read returned them and they differ: a list
// that was not read is never replaced.
func (in userFields) update(u *scim.User) bool { return in.set(u, true) }

// set is apply, or update when read.
func (in userFields) set(u *scim.User, read bool) bool {
	changed := false
	set := func(dst *string, v string) {
		if v != "" && *dst != v {
			changed = changed || !read || *dst != "" // "" after a read: not returned
			*dst = v
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
	if in.Email != "" && (!read || len(u.Emails) > 0) && !strings.EqualFold(u.PrimaryEmail(), in.Email) {
		emails := []scim.Email{{Value: in.Email, Type: "work", Primary: true}}
		for _, e := range u.Emails {
			if !strings.EqualFold(e.Value, in.Email) {
				e.Primary = false
				emails = append(emails, e)
			}
		}
		u.Emails, changed = emails, true
	}
	if in.Department != "" && (u.Enterprise == nil || u.Enterprise.Department != in.Department) {
		if u.Enterprise == nil {
			u.Enterprise = &scim.EnterpriseUser{}
		}
		u.Enterprise.Department, changed = in.Department, true
	}
	if in.Active != nil && u.IsActive() != *in.Active {
		v := *in.Active
		u.Active, changed = &v, true
	}
	return changed
}
