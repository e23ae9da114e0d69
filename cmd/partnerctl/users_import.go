package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/scim"
)

func (a *app) usersImportCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "import FILE.csv",
		Short: "Create or update users from a CSV file, by userName",
		Long: `import reads a CSV file whose header row names the columns userName (required),
displayName, givenName, familyName, email, department and active, in any
order. Each user whose userName is unknown is created; a known one is
compared with a read of it and counted as:

  updated    a member the read returns differs: the user is written (PUT);
  written    the row sets a member the read does not return (the service's
             reads return active and department, not displayName, the name
             or emails): the user is written, since the import cannot tell
             whether that member changed; a re-run writes the same values
             again, which is safe;
  unchanged  everything the row sets was read back equal: nothing is written.

Emails the read returns are compared and replaced only when the primary one
differs. Running the same file again creates and updates nothing, so an
interrupted import is safely re-run.

It prints one line per row and the counts of created, updated, written,
unchanged and failed users; it exits 5 when a row failed (1 when the file
could not be read to its end). When the file
cannot be read to its end (a malformed line) or Ctrl-C stops it, the counts
say the line it stopped after: the rows after it were not imported. A
column active (true or false) suspends or reactivates users, as 'users
suspend' and 'users reactivate' do one at a time.

With --json it prints, once the import ends, one object:
  {"rows": [{"line": 2, "user_name": "ada@example.com", "id": "usr-1",
             "outcome": "created", "error": ""}],
   "created": 1, "updated": 0, "written": 0, "unchanged": 0, "failed": 0,
   "stopped_after_line": 0}
stopped_after_line is the last line read when the file could not be read
to its end or Ctrl-C stopped the import, else 0.`,
		Example: `  printf 'userName,displayName,email\nada@example.com,Ada,ada@example.com\n' > people.csv
  partnerctl users import people.csv`,
		Args: exactArgs("FILE.csv"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkInputFile(args[0]); err != nil {
				return err
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				out := cmd.OutOrStdout()
				if asJSON {
					out = io.Discard
				}
				counts := map[string]int{}
				rows, last := 0, 1
				report := importJSON{Rows: []importRowJSON{}}
				err := importUsers(ctx, c, f, func(r importResult) {
					counts[r.Outcome]++
					rows++
					last = r.Line
					row := importRowJSON{Line: r.Line, UserName: r.UserName, ID: r.ID, Outcome: r.Outcome}
					if r.Err != nil {
						row.Error = r.Err.Error()
					}
					report.Rows = append(report.Rows, row)
					switch {
					case r.Err != nil && r.UserName == "":
						printf(out, "line %d: %s: %v\n", r.Line, r.Outcome, r.Err)
					case r.Err != nil:
						printf(out, "line %d: %s %s: %v\n", r.Line, r.Outcome, r.UserName, r.Err)
					default:
						printf(out, "line %d: %s %s %s\n", r.Line, r.Outcome, r.UserName, r.ID)
					}
				})
				tally := fmt.Sprintf("%d created, %d updated, %d written, %d unchanged, %d failed",
					counts[importCreated], counts[importUpdated], counts[importWritten], counts[importUnchanged], counts[importFailed])
				switch {
				case err == nil:
					printf(out, "%s\n", tally)
				case rows > 0: // not after a bad header row: nothing was read
					printf(out, "stopped after line %d: %s; the rows after line %d were not imported\n", last, tally, last)
					report.StoppedAfterLine = last
				}
				if asJSON && (err == nil || rows > 0) {
					report.Created, report.Updated, report.Written = counts[importCreated], counts[importUpdated], counts[importWritten]
					report.Unchanged, report.Failed = counts[importUnchanged], counts[importFailed]
					if jerr := writeJSON(cmd.OutOrStdout(), report); jerr != nil && err == nil {
						err = jerr
					}
				}
				if err != nil {
					return fmt.Errorf("import %s: %w", args[0], err)
				}
				if counts[importFailed] > 0 {
					return dataFailedf("import %s: %d rows failed", args[0], counts[importFailed])
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the outcome of each row and the counts as JSON for scripts")
	return cmd
}

// importJSON is what users import --json prints.
type importJSON struct {
	Rows             []importRowJSON `json:"rows"`
	Created          int             `json:"created"`
	Updated          int             `json:"updated"`
	Written          int             `json:"written"`
	Unchanged        int             `json:"unchanged"`
	Failed           int             `json:"failed"`
	StoppedAfterLine int             `json:"stopped_after_line"`
}

// importRowJSON is the outcome of one row in importJSON.
type importRowJSON struct {
	Line     int    `json:"line"`
	UserName string `json:"user_name"`
	ID       string `json:"id"`
	Outcome  string `json:"outcome"`
	Error    string `json:"error"`
}

// Outcomes of importing one user.
const (
	importCreated   = "created"
	importUpdated   = "updated"   // a member the read returned differed
	importWritten   = "written"   // the row set members the read did not return
	importUnchanged = "unchanged" // everything the row set was read back equal
	importFailed    = "failed"
)

// importResult is what happened to one row of an import.
type importResult struct {
	Line     int // in the CSV file, the header being line 1
	UserName string
	ID       string
	Outcome  string
	Err      error
}

// importUsers reads users from CSV (a header row naming the columns
// userName, displayName, givenName, familyName, email, department, active,
// in any order and case; userName required) and creates each user whose
// userName is unknown, writes one that differs or whose row sets members
// a read does not return (userFields.update), and leaves one that matches
// alone, so that running it again creates and updates nothing. It calls report
// for every row. A row that fails does not stop the import.
func importUsers(ctx context.Context, c *partner.Client, r io.Reader, report func(importResult)) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("reading the header row: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		key := strings.ToLower(strings.NewReplacer("_", "", " ", "", "-", "").Replace(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))))
		switch key {
		case "username", "displayname", "givenname", "familyname", "email", "department", "active":
			col[key] = i
		default:
			return fmt.Errorf("unknown column %q (known: userName, displayName, givenName, familyName, email, department, active)", h)
		}
	}
	if _, ok := col["username"]; !ok {
		return errors.New("the header row has no userName column")
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		get := func(k string) string {
			if i, ok := col[k]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		in := userFields{UserName: get("username"), DisplayName: get("displayname"), GivenName: get("givenname"),
			FamilyName: get("familyname"), Email: get("email"), Department: get("department")}
		res := importResult{Line: line, UserName: in.UserName}
		if s := get("active"); s != "" {
			b, err := strconv.ParseBool(s)
			if err != nil {
				res.Outcome, res.Err = importFailed, fmt.Errorf("active %q is not true or false", s)
				report(res)
				continue
			}
			in.Active = &b
		}
		if in.UserName == "" {
			res.Outcome, res.Err = importFailed, errors.New("no userName")
			report(res)
			continue
		}
		res.ID, res.Outcome, res.Err = importUser(ctx, c, in)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		report(res)
	}
}

func importUser(ctx context.Context, c *partner.Client, in userFields) (id, outcome string, err error) {
	u, err := c.SCIM.FindByUserName(ctx, in.UserName)
	if errors.Is(err, scim.ErrNotFound) {
		nu := &scim.User{}
		in.apply(nu)
		created, err := c.SCIM.Create(ctx, nu)
		if err != nil {
			return "", importFailed, err
		}
		return created.ID, importCreated, nil
	}
	if err != nil {
		return "", importFailed, err
	}
	in.UserName = "" // matched without regard to case: keep the stored spelling
	differs, unread := in.update(u)
	if !differs && !unread {
		return u.ID, importUnchanged, nil
	}
	if _, err := c.SCIM.Update(ctx, u); err != nil {
		return u.ID, importFailed, err
	}
	if differs {
		return u.ID, importUpdated, nil
	}
	return u.ID, importWritten, nil
}
