package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/partnerapi/partner-go/internal/version"
)

// buildVersion is the module's version this binary was built from
// (version.Module), as partnerfake -version prints it too.
func buildVersion() string { return version.Module() }

// versionInfo is what partnerctl version prints with --json.
type versionInfo struct {
	Version  string `json:"version"`  // of the module, v1.2.3
	Go       string `json:"go"`       // the Go release it was built with, go1.26.1
	Platform string `json:"platform"` // GOOS/GOARCH, linux/amd64
}

func currentVersion() versionInfo {
	return versionInfo{Version: buildVersion(), Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
}

// String is the line --version prints: partnerctl v1.2.3 (go1.26.1
// linux/amd64), as version.Line writes it for every program.
func (v versionInfo) String() string {
	return fmt.Sprintf("partnerctl %s (%s %s)", v.Version, v.Go, v.Platform)
}

// userAgent is the product token the command adds to the SDK's
// User-Agent: partnerctl/v1.2.3.
func userAgent() string { return "partnerctl/" + buildVersion() }

func (a *app) versionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print partnerctl's version, the Go release it was built with and the platform",
		Long: `Version prints the version of the module partnerctl was built from (as go
install stamped it, else the SDK's own), the Go release that built it and
the platform. --version on the command line prints the same.

With --json: {"version": "v1.1.0", "go": "go1.26.8", "platform": "linux/amd64"}.`,
		Example: `  partnerctl version
  partnerctl --version
  partnerctl version --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := currentVersion()
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), v)
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), v)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
