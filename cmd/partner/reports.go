package main

import "github.com/spf13/cobra"

func (a *app) reportsCmd() *cobra.Command {
	return group("reports", "List, export and chart reports", "  partner reports list\n  partner reports export 104 -o deals.csv",
		a.reportsListCmd(), a.reportsExportCmd(), a.reportsChartsCmd())
}
