package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/scim"
)

func (a *app) usersCreateCmd() *cobra.Command {
	var in userFields
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create --user-name NAME",
		Short: "Create a user",
		Long: `create provisions one user and prints its id. A create that fails after the
service may have acted on it is not repeated: look the user up with
'partnerctl users list --filter' before trying again.

With --json it prints the user the service returned, as the elements of
'users list --json' are: {"id": "...", "userName": "...", "active": true, ...}
(the SCIM core schema's names).`,
		Example: `  partnerctl users create --user-name ada@example.com --display-name "Ada Lovelace" --email ada@example.com`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if in.UserName == "" {
				return usagef("--user-name is required")
			}
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				u := &scim.User{}
				in.apply(u)
				created, err := c.SCIM.Create(ctx, u)
				if err != nil {
					return fmt.Errorf("create user %s: %w", in.UserName, err)
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), created)
				}
				printf(cmd.OutOrStdout(), "created %s %s\n", created.ID, created.UserName)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&in.UserName, "user-name", "", "user name, an e-mail address form (required)")
	f.StringVar(&in.DisplayName, "display-name", "", "display name")
	f.StringVar(&in.GivenName, "given-name", "", "given name")
	f.StringVar(&in.FamilyName, "family-name", "", "family name")
	f.StringVar(&in.Email, "email", "", "primary work e-mail address")
	f.StringVar(&in.Department, "department", "", "department (enterprise extension)")
	f.BoolVar(&asJSON, "json", false, "print the user as JSON for scripts")
	return cmd
}
