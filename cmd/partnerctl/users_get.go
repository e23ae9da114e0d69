package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/scim"
)

func (a *app) usersGetCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "get ID|USERNAME",
		Short: "Show a user, named by id or userName",
		Long: `get reads one user and prints its attributes, one per line. The user is named
by its userName (looked up first, without regard to case) or by its id.
The service's reads return the id, the userName, active, the department
(enterprise extension) and the times of creation and last change; an
attribute the service did not return is not printed.

With --json it prints the user as 'users create --json' does:
{"id": "...", "userName": "...", "active": true, ...} (the SCIM core
schema's names).`,
		Example: `  partnerctl users get ada@example.com
  partnerctl users get usr-demo-0001 --json`,
		Args: exactArgs("ID|USERNAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				id, err := userID(ctx, c, args[0])
				if err != nil {
					return fmt.Errorf("get user %s: %w", args[0], err)
				}
				u, err := c.SCIM.Get(ctx, id)
				if partner.IsNotFound(err) && id == args[0] {
					return fmt.Errorf("get user %s: no user has that userName or id", args[0])
				}
				if err != nil {
					return fmt.Errorf("get user %s: %w", args[0], err)
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), u)
				}
				return printUser(cmd, u)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the user as JSON for scripts")
	return cmd
}

// userID returns the id of the user named by arg: the id of the user
// whose userName is arg (compared without regard to case by the
// service), else arg itself, taken as an id.
func userID(ctx context.Context, c *partner.Client, arg string) (string, error) {
	u, err := c.SCIM.FindByUserName(ctx, arg)
	switch {
	case err == nil:
		return u.ID, nil
	case errors.Is(err, scim.ErrNotFound):
		return arg, nil
	}
	return "", err
}

// printUser prints u as a table of attribute and value, leaving out
// those the service did not return.
func printUser(cmd *cobra.Command, u *scim.User) error {
	t := newTable(cmd.OutOrStdout(), "ID", u.ID)
	t.row("USERNAME", u.UserName)
	t.row("ACTIVE", strconv.FormatBool(u.IsActive()))
	for _, f := range []struct{ name, value string }{
		{"DISPLAY NAME", u.DisplayName},
		{"GIVEN NAME", nameOf(u, func(n *scim.Name) string { return n.GivenName })},
		{"FAMILY NAME", nameOf(u, func(n *scim.Name) string { return n.FamilyName })},
		{"EMAIL", u.PrimaryEmail()},
		{"DEPARTMENT", departmentOf(u)},
		{"CREATED", metaTime(u, func(m *scim.Meta) *time.Time { return m.Created })},
		{"LAST MODIFIED", metaTime(u, func(m *scim.Meta) *time.Time { return m.LastModified })},
	} {
		if f.value != "" {
			t.row(f.name, f.value)
		}
	}
	return t.flush()
}

// nameOf returns the part of u's name that part reads, or "" when u has
// no name.
func nameOf(u *scim.User, part func(*scim.Name) string) string {
	if u.Name == nil {
		return ""
	}
	return part(u.Name)
}

// metaTime returns the time of u's metadata that field reads, in RFC
// 3339, or "" when the service sent none.
func metaTime(u *scim.User, field func(*scim.Meta) *time.Time) string {
	if u.Meta == nil || field(u.Meta) == nil {
		return ""
	}
	return field(u.Meta).Format(time.RFC3339)
}

// departmentOf returns u's department (enterprise extension), or "".
func departmentOf(u *scim.User) string {
	if u.Enterprise == nil {
		return ""
	}
	return u.Enterprise.Department
}
