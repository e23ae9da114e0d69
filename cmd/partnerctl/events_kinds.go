package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
)

func (a *app) eventsKindsCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "kinds",
		Short:   "List the event kinds the service offers",
		Example: `  partnerctl events kinds`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				t := newTable(cmd.OutOrStdout(), "KIND", "DESCRIPTION")
				for k, err := range c.Events.Kinds(ctx) {
					if err != nil {
						return fmt.Errorf("list event kinds: %w", err)
					}
					t.row(string(k.Name), k.Description)
				}
				return t.flush()
			})
		},
	}
}
