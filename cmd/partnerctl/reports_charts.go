package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/reports"
)

func (a *app) reportsChartsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "charts REPORT_ID",
		Short: "Print the data of a report's charts as tables",
		Long: `charts prints each chart of the report as a table of its results.

With --json it prints an array of the charts, each result an object of its
columns in the service's order:
  [{"id": 1, "version": 3, "name": "Deals by zone", "results": [{"Zone": "EMEA", "Deals": 12}]}]`,
		Example: `  partnerctl reports charts 101
  partnerctl reports charts 101 --json | jq '.[0].results'`,
		Args: exactArgs("REPORT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID("REPORT_ID", args[0])
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				data, err := c.Reports.ChartData(ctx, id, reports.ChartDataParams{})
				if err != nil {
					return fmt.Errorf("charts of report %d: %w", id, err)
				}
				w := cmd.OutOrStdout()
				if asJSON {
					charts := data.Charts
					if charts == nil {
						charts = []reports.Chart{}
					}
					return writeJSON(w, charts)
				}
				for i, ch := range data.Charts {
					if i > 0 {
						fmt.Fprintln(w)
					}
					printf(w, "chart %d: %s\n", ch.ID, ch.Name)
					var cols []string
					if len(ch.Results) > 0 {
						cols = ch.Results[0].Columns()
					}
					t := newTable(w, cols...)
					for _, r := range ch.Results {
						cells := make([]string, len(cols))
						for j, name := range cols {
							v, _ := r.Get(name)
							cells[j] = cellText(v)
						}
						t.row(cells...)
					}
					if err := t.flush(); err != nil {
						return err
					}
				}
				if len(data.Charts) == 0 {
					printf(w, "report %d has no charts\n", id)
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}
