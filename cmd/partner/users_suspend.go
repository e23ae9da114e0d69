package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
)

func (a *app) usersSuspendCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "suspend ID",
		Short:   "Suspend a user (active: false)",
		Example: `  partner users suspend usr-demo-0001`,
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				u, err := c.SCIM.Suspend(ctx, args[0])
				if err != nil {
					return fmt.Errorf("suspend user %s: %w", args[0], err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "suspended %s %s\n", u.ID, u.UserName)
				return nil
			})
		},
	}
}
