package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
)

func (a *app) reportsExportCmd() *cobra.Command {
	var format, out string
	cmd := &cobra.Command{
		Use:   "export REPORT_ID",
		Short: "Export every row of a report, read through a consistent view",
		Long: `Export prepares a view of the report (a consistent snapshot), waits for it
and writes every row in the report's column order: CSV with a header row,
JSON lines (one object per row) or an XLSX workbook. A report without rows
gives the header alone (CSV, XLSX), from the report's metadata.

Without -o the rows go to stdout. With -o they are written to a temporary
file beside FILE that is renamed to FILE once the export succeeded, so a
failed export leaves no partial file under that name. A progress line
(rows, rate) goes to stderr when stderr is a terminal.`,
		Example: `  partner reports export 104 -o deals.csv
  partner reports export 104 --format jsonl | head
  partner reports export 104 --format xlsx -o deals.xlsx`,
		Args: exactArgs("REPORT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID("REPORT_ID", args[0])
			if err != nil {
				return err
			}
			format = strings.ToLower(format)
			if format == "" && out != "" {
				format = strings.TrimPrefix(strings.ToLower(filepath.Ext(out)), ".")
				if format == "json" || format == "ndjson" {
					format = formatJSONL
				}
			}
			switch format {
			case "":
				format = formatCSV
			case formatCSV, formatJSONL, formatXLSX:
			default:
				return usagef("--format must be csv, jsonl or xlsx, not %q", format)
			}
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				n, err := a.export(ctx, c, id, format, out)
				if err != nil {
					return fmt.Errorf("export of report %d failed: %w", id, err)
				}
				if out != "" {
					fmt.Fprintf(a.stderr, "exported %s rows of report %d to %s\n", groupDigits(n), id, out)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "csv, jsonl or xlsx (default: from -o's extension, else csv)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to `FILE` instead of stdout")
	cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{formatCSV, formatJSONL, formatXLSX}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// export runs the export to stdout, or to a temporary file renamed to out.
func (a *app) export(ctx context.Context, c *partner.Client, id int64, format, out string) (int64, error) {
	bar := a.newProgress(fmt.Sprintf("report %d", id), 0, false)
	defer bar.Done()
	if out == "" {
		return exportReport(ctx, c, id, format, a.stdout, bar)
	}
	tmp, err := createPartial(out)
	if err != nil {
		// Name the file the operator asked for, not the temporary one.
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return 0, fmt.Errorf("cannot write %s: %w", out, err)
	}
	// A new file has the mode the umask gives; one that replaces a file
	// takes that file's mode.
	var mode os.FileMode
	if fi, err := os.Stat(out); err == nil {
		mode = fi.Mode().Perm()
	}
	committed := false
	defer func() {
		if !committed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	n, err := exportReport(ctx, c, id, format, tmp, bar)
	if err != nil {
		return n, err
	}
	if mode != 0 {
		if err := tmp.Chmod(mode); err != nil {
			return n, err
		}
	}
	if err := tmp.Close(); err != nil {
		return n, err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return n, err
	}
	committed = true
	return n, nil
}

// createPartial creates an empty temporary file beside out, named
// .BASE.NNN.partial, with the mode 0666 less the umask, as the file out
// would get (os.CreateTemp would make it 0600 whatever the umask).
func createPartial(out string) (*os.File, error) {
	dir, base := filepath.Split(out)
	for {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(uint64(rand.Uint32()), 10)+".partial")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
}
