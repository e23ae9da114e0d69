package main

import "github.com/spf13/cobra"

func (a *app) eventsCmd() *cobra.Command {
	return group("events", "Manage webhook subscriptions and watch deliveries", "  partnerctl events kinds\n  partnerctl events integrations\n  partnerctl events listen --local --events object.update",
		a.eventsKindsCmd(), a.eventsIntegrationsCmd(), a.eventsListCmd(), a.eventsDeleteCmd(), a.eventsListenCmd())
}
