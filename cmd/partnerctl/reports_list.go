package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/reports"
)

func (a *app) reportsListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the exportable reports",
		Long: `list prints the exportable reports: id, name, status and when each was last
modified.

With --json it prints an array of the reports as the service describes them:
  [{"id": 104, "name": "Deals", "description": "...", "reportStatus": "...",
    "createdBy": {...}, "modifiedBy": {...}, "createdAt": "...", "modifiedAt": "..."}]
(members the service did not send are left out).`,
		Example: `  partnerctl reports list
  partnerctl reports list --json | jq '.[].id'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				var list []reports.Report
				for r, err := range c.Reports.List(ctx, reports.ListParams{}) {
					if err != nil {
						return fmt.Errorf("list reports: %w", err)
					}
					list = append(list, r)
				}
				if asJSON {
					if list == nil {
						list = []reports.Report{}
					}
					return writeJSON(cmd.OutOrStdout(), list)
				}
				t := newTable(cmd.OutOrStdout(), "ID", "NAME", "STATUS", "MODIFIED")
				for _, r := range list {
					modified := r.ModifiedAt
					if modified.IsZero() {
						modified = r.CreatedAt
					}
					t.row(strconv.FormatInt(r.ID, 10), r.Name, string(r.Status), cellText(modified))
				}
				return t.flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}
