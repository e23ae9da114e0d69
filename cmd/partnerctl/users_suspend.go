package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/scim"
)

func (a *app) usersSuspendCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "suspend ID|USERNAME",
		Short: "Suspend a user (active: false), named by id or userName",
		Long: `suspend sets a user's active attribute to false. The user is named by its
userName (looked up first, without regard to case) or by its id.`,
		Example: `  partnerctl users suspend ada@example.com
  partnerctl users suspend usr-demo-0001`,
		Args: exactArgs("ID|USERNAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				id := args[0]
				switch u, err := c.SCIM.FindByUserName(ctx, args[0]); {
				case err == nil:
					id = u.ID
				case !errors.Is(err, scim.ErrNotFound):
					return fmt.Errorf("suspend user %s: %w", args[0], err)
				}
				u, err := c.SCIM.Suspend(ctx, id)
				if partner.IsNotFound(err) && id == args[0] {
					return fmt.Errorf("suspend user %s: no user has that userName or id", args[0])
				}
				if err != nil {
					return fmt.Errorf("suspend user %s: %w", args[0], err)
				}
				printf(cmd.OutOrStdout(), "suspended %s %s\n", u.ID, u.UserName)
				return nil
			})
		},
	}
}
