package main

import "github.com/spf13/cobra"

func (a *app) bulkCmd() *cobra.Command {
	return group("bulk", "Load records in bulk", `  partnerctl bulk load deals.csv --integration int-crm --wait
  partnerctl bulk status exe_01 --integration int-crm --wait`, a.bulkLoadCmd(), a.bulkStatusCmd())
}
