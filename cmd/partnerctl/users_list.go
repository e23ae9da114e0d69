package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/scim"
)

func (a *app) usersListCmd() *cobra.Command {
	var filter string
	var asJSON bool
	var columns []string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List users",
		Long: `list prints the users as a table of the columns the service returns in a
listing (id, username, active). The service's listing does not return display
names or e-mail addresses: --columns asks for those columns too (blank where
the service does not return them), and --json prints what it returns: an
array of users in the SCIM core schema's names,
  [{"id": "usr-1", "userName": "ada@example.com", "active": true, ...}].`,
		Example: `  partnerctl users list
  partnerctl users list --filter 'userName eq "ada@example.com"'
  partnerctl users list --columns id,username,display-name,email,active`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, col := range columns {
				if _, ok := userColumns[col]; !ok {
					return usagef("--columns: unknown column %q: give some of id, username, display-name, email, active", col)
				}
			}
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				var users []scim.User
				for u, err := range c.SCIM.List(ctx, scim.ListParams{Filter: filter}) {
					if err != nil {
						return fmt.Errorf("list users: %w", err)
					}
					users = append(users, u)
				}
				if asJSON {
					if users == nil {
						users = []scim.User{}
					}
					return writeJSON(cmd.OutOrStdout(), users)
				}
				header := make([]string, len(columns))
				for i, col := range columns {
					header[i] = strings.ToUpper(strings.ReplaceAll(col, "-", " "))
				}
				t := newTable(cmd.OutOrStdout(), header...)
				for _, u := range users {
					cells := make([]string, len(columns))
					for i, col := range columns {
						cells[i] = userColumns[col](u)
					}
					t.row(cells...)
				}
				return t.flush()
			})
		},
	}
	cmd.Flags().StringVar(&filter, "filter", "", "SCIM filter `EXPR`, such as 'userName eq \"ada@example.com\"'")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	cmd.Flags().StringSliceVar(&columns, "columns", []string{"id", "username", "active"}, "table `COLUMNS`, of id, username, display-name, email, active")
	return cmd
}

// userColumns are the columns users list can show, by name.
var userColumns = map[string]func(scim.User) string{
	"id":           func(u scim.User) string { return u.ID },
	"username":     func(u scim.User) string { return u.UserName },
	"display-name": func(u scim.User) string { return u.DisplayName },
	"email":        func(u scim.User) string { return u.PrimaryEmail() },
	"active":       func(u scim.User) string { return strconv.FormatBool(u.IsActive()) },
}
