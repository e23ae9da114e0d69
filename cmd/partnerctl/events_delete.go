package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
)

func (a *app) eventsDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "delete ID",
		Short:   "Remove a subscriber",
		Example: `  partnerctl events delete sub_4f2a9c`,
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				if err := c.Events.Unsubscribe(ctx, args[0]); err != nil {
					return fmt.Errorf("delete subscriber %s: %w", args[0], err)
				}
				printf(cmd.OutOrStdout(), "deleted %s\n", args[0])
				return nil
			})
		},
	}
}
