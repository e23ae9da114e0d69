package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/partnerapi/partner-go/scim"
)

func (a *app) usersCmd() *cobra.Command {
	return group("users", "Provision users (SCIM)", "  partnerctl users list\n  partnerctl users get ada@example.com\n  partnerctl users import people.csv",
		a.usersListCmd(), a.usersGetCmd(), a.usersCreateCmd(), a.usersSuspendCmd(), a.usersReactivateCmd(), a.usersImportCmd())
}

// userFields are the attributes the CLI sets on a user. Empty fields are
// left as they are.
type userFields struct {
	UserName, DisplayName, GivenName, FamilyName, Email, Department string
	Active                                                          *bool
}

// apply sets the non-empty fields on u, a new user.
func (in userFields) apply(u *scim.User) { in.set(u, false) }

// update sets the non-empty fields on u, a user as a read returned it. It
// reports whether a member the read returned differs (differs) and
// whether the fields set a member the read did not return (unread). The
// published reads return the userName, active and the enterprise
// extension (department), not displayName, name or emails: such a member
// cannot be compared, so it is set and u is to be written whenever the
// fields carry it (the service keeps a member a PUT does not carry, so
// writing it is the only way to set it, and writing the same value again
// is harmless). Emails the read returned are compared, and replaced only
// when the primary one differs; when the read returned none, the fields'
// email is set and counts as unread.
func (in userFields) update(u *scim.User) (differs, unread bool) { return in.set(u, true) }

// set is apply, or update when read.
func (in userFields) set(u *scim.User, read bool) (differs, unread bool) {
	set := func(dst *string, v string) {
		switch {
		case v == "" || *dst == v:
		case read && *dst == "": // not returned by the read
			*dst, unread = v, true
		default:
			*dst, differs = v, true
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
		if read && len(u.Emails) == 0 { // not returned by the read
			unread = true
		} else {
			differs = true
		}
		emails := []scim.Email{{Value: in.Email, Type: "work", Primary: true}}
		for _, e := range u.Emails {
			if !strings.EqualFold(e.Value, in.Email) {
				e.Primary = false
				emails = append(emails, e)
			}
		}
		u.Emails = emails
	}
	if in.Department != "" && (u.Enterprise == nil || u.Enterprise.Department != in.Department) {
		if u.Enterprise == nil {
			u.Enterprise = &scim.EnterpriseUser{}
		}
		u.Enterprise.Department, differs = in.Department, true
	}
	if in.Active != nil && u.IsActive() != *in.Active {
		v := *in.Active
		u.Active, differs = &v, true
	}
	return differs, unread
}
