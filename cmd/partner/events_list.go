package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/events"
)

func (a *app) eventsListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the registered subscribers",
		Example: `  partner events list`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				var subs []events.Subscriber
				for s, err := range c.Events.Subscribers(ctx) {
					if err != nil {
						return fmt.Errorf("list subscribers: %w", err)
					}
					subs = append(subs, s)
				}
				if asJSON {
					if subs == nil {
						subs = []events.Subscriber{}
					}
					return writeJSON(cmd.OutOrStdout(), subs)
				}
				t := newTable(cmd.OutOrStdout(), "ID", "NAME", "INTEGRATION", "OBJECTS", "FILTERS")
				for _, s := range subs {
					t.row(s.ID, s.Name, s.IntegrationID, strings.Join(s.ObjectIDs, ","), s.Filters)
				}
				return t.flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}
