package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/reports"
)

func (a *app) reportsChartsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "charts REPORT_ID",
		Short:   "Print the data of a report's charts as tables",
		Example: `  partnerctl reports charts 101`,
		Args:    exactArgs("REPORT_ID"),
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
							cells[j] = text(v)
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
	return cmd
}
