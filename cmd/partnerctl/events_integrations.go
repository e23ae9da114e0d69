package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/events"
)

func (a *app) eventsIntegrationsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "integrations",
		Short: "List the integrations that bulk loads and subscriptions name",
		Long: `integrations lists the configured integrations (GET /event/v1/metadata/integration):
the ids that 'partnerctl bulk load --integration' and 'partnerctl events listen
--integration' take, with their type, name and description.

The service's listing does not say which object type an integration loads
or which field its bulk rows are matched on (the key field); that is part of
the integration's configuration. The fake (partnerfake) prints both for each
integration when it starts, and 'go doc github.com/partnerapi/partner-go/fake
WithDemoData' lists those of its demo data.

With --json: [{"integration_id": "int-crm", "integration_type": "...",
"name": "...", "description": "..."}].`,
		Example: `  partnerctl events integrations
  partnerctl events integrations --json | jq -r '.[].integration_id'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				list := []events.Integration{}
				for in, err := range c.Events.Integrations(ctx) {
					if err != nil {
						return fmt.Errorf("list integrations: %w", err)
					}
					list = append(list, in)
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), list)
				}
				t := newTable(cmd.OutOrStdout(), "ID", "TYPE", "NAME", "DESCRIPTION")
				for _, in := range list {
					t.row(in.ID, in.Type, in.Name, in.Description)
				}
				return t.flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}
