package main

import "github.com/spf13/cobra"

func (a *app) usersCmd() *cobra.Command {
	return group("users", "Provision users (SCIM)",
		a.usersListCmd(), a.usersCreateCmd(), a.usersSuspendCmd(), a.usersImportCmd())
}
