package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
)

func (a *app) usersSuspendCmd() *cobra.Command {
	cmd := a.usersActiveCmd("suspend", false, `suspend (or deactivate, its other name) sets a user's active attribute to
false; 'partnerctl users reactivate' sets it back. The user is named by its
userName (looked up first, without regard to case) or by its id.`,
		`  partnerctl users suspend ada@example.com
  partnerctl users deactivate usr-demo-0001 --json`)
	cmd.Aliases = []string{"deactivate"}
	return cmd
}

func (a *app) usersReactivateCmd() *cobra.Command {
	return a.usersActiveCmd("reactivate", true, `reactivate sets a suspended user's active attribute back to true. The user
is named by its userName (looked up first, without regard to case) or by
its id.`,
		`  partnerctl users reactivate ada@example.com
  partnerctl users reactivate usr-demo-0001 --json`)
}

// usersActiveCmd is users suspend (active false) or users reactivate
// (active true).
func (a *app) usersActiveCmd(verb string, active bool, long, example string) *cobra.Command {
	var asJSON bool
	done := map[bool]string{false: "suspended", true: "reactivated"}[active]
	cmd := &cobra.Command{
		Use:     verb + " ID|USERNAME",
		Short:   fmt.Sprintf("Set a user's active attribute to %t, named by id or userName", active),
		Long:    long + "\n\nWith --json it prints the user as 'users create --json' does.",
		Example: example,
		Args:    exactArgs("ID|USERNAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				id, err := userID(ctx, c, args[0])
				if err != nil {
					return fmt.Errorf("%s user %s: %w", verb, args[0], err)
				}
				set := c.SCIM.Suspend
				if active {
					set = c.SCIM.Reactivate
				}
				u, err := set(ctx, id)
				if partner.IsNotFound(err) && id == args[0] {
					return fmt.Errorf("%s user %s: no user has that userName or id", verb, args[0])
				}
				if err != nil {
					return fmt.Errorf("%s user %s: %w", verb, args[0], err)
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), u)
				}
				printf(cmd.OutOrStdout(), "%s %s %s\n", done, u.ID, u.UserName)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the user as JSON for scripts")
	return cmd
}
