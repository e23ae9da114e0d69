package main

import "github.com/spf13/cobra"

func (a *app) bulkCmd() *cobra.Command {
	return group("bulk", "Load records in bulk", a.bulkLoadCmd())
}
