package main

import "github.com/spf13/cobra"

func (a *app) usersCmd() *cobra.Command {
	return group("users", "Provision users (SCIM)", "  partner users list\n  partner users import people.csv",
		a.usersListCmd(), a.usersCreateCmd(), a.usersSuspendCmd(), a.usersImportCmd())
}
