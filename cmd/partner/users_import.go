package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
)

func (a *app) usersImportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE.csv",
		Short: "Create or update users from a CSV file, by userName",
		Long: `import reads a CSV file whose header row names the columns userName (required),
displayName, givenName, familyName, email, department and active, in any
order. Each user whose userName is unknown is created; a known one is updated
when a non-empty cell differs from what is stored, and left alone otherwise.
Running the same file again changes nothing, so an interrupted import is
safely re-run.

It prints one line per row and the counts of created, updated, unchanged and
failed users; it exits 1 when a row failed.`,
		Example: `  printf 'userName,displayName,email\nada@example.com,Ada,ada@example.com\n' > people.csv
  partner users import people.csv`,
		Args: exactArgs("FILE.csv"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				out := cmd.OutOrStdout()
				counts := map[string]int{}
				rows := 0
				err := importUsers(ctx, c, f, func(r importResult) {
					counts[r.Outcome]++
					rows++
					switch {
					case r.Err != nil && r.UserName == "":
						fmt.Fprintf(out, "line %d: %s: %v\n", r.Line, r.Outcome, r.Err)
					case r.Err != nil:
						fmt.Fprintf(out, "line %d: %s %s: %v\n", r.Line, r.Outcome, r.UserName, r.Err)
					default:
						fmt.Fprintf(out, "line %d: %s %s %s\n", r.Line, r.Outcome, r.UserName, r.ID)
					}
				})
				if err == nil || rows > 0 { // not after a bad header row: nothing was read
					fmt.Fprintf(out, "%d created, %d updated, %d unchanged, %d failed\n",
						counts[importCreated], counts[importUpdated], counts[importUnchanged], counts[importFailed])
				}
				if err != nil {
					return fmt.Errorf("import %s: %w", args[0], err)
				}
				if counts[importFailed] > 0 {
					return fmt.Errorf("import %s: %d rows failed", args[0], counts[importFailed])
				}
				return nil
			})
		},
	}
}
