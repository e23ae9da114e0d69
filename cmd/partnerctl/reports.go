package main

import "github.com/spf13/cobra"

func (a *app) reportsCmd() *cobra.Command {
	return group("reports", "List, export and chart reports", "  partnerctl reports list\n  partnerctl reports export 104 -o deals.csv",
		a.reportsListCmd(), a.reportsExportCmd(), a.reportsChartsCmd())
}
