package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/events"
)

func (a *app) eventsKindsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "kinds",
		Short: "List the event kinds the service offers",
		Long: `kinds lists the event kinds subscribers can receive, with a description.

With --json: [{"name": "object.update", "description": "..."}].`,
		Example: `  partnerctl events kinds
  partnerctl events kinds --json | jq -r '.[].name'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				kinds := []events.KindInfo{}
				for k, err := range c.Events.Kinds(ctx) {
					if err != nil {
						return fmt.Errorf("list event kinds: %w", err)
					}
					kinds = append(kinds, k)
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), kinds)
				}
				t := newTable(cmd.OutOrStdout(), "KIND", "DESCRIPTION")
				for _, k := range kinds {
					t.row(string(k.Name), k.Description)
				}
				return t.flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}
