package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/scim"
)

func (a *app) usersListCmd() *cobra.Command {
	var filter string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List users",
		Example: `  partnerctl users list
  partnerctl users list --filter 'userName eq "ada@example.com"'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
				t := newTable(cmd.OutOrStdout(), "ID", "USERNAME", "DISPLAY NAME", "EMAIL", "ACTIVE")
				for _, u := range users {
					t.row(u.ID, u.UserName, u.DisplayName, u.PrimaryEmail(), strconv.FormatBool(u.IsActive()))
				}
				return t.flush()
			})
		},
	}
	cmd.Flags().StringVar(&filter, "filter", "", "SCIM filter `EXPR`, such as 'userName eq \"ada@example.com\"'")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}
