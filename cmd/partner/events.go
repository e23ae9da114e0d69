package main

import "github.com/spf13/cobra"

func (a *app) eventsCmd() *cobra.Command {
	return group("events", "Manage webhook subscriptions and watch deliveries", "  partner events kinds\n  partner events integrations\n  partner events listen --events object.update",
		a.eventsKindsCmd(), a.eventsIntegrationsCmd(), a.eventsListCmd(), a.eventsDeleteCmd(), a.eventsListenCmd())
}
