package main

import "github.com/spf13/cobra"

func (a *app) reportsCmd() *cobra.Command {
	return group("reports", "List, export and chart reports",
		a.reportsListCmd(), a.reportsExportCmd(), a.reportsChartsCmd())
}
