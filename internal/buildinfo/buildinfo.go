// Package buildinfo is the version the module's programs (partnerctl,
// partnerfake) print and the SDK reports, from one source.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/partnerapi/partner-go/internal/version"
)

// SDK is the SDK's version, partner.Version, whose source is
// internal/version.
const SDK = version.Version

// modulePath is the module the programs are built from.
const modulePath = "github.com/partnerapi/partner-go"

// Module is the version of the module a program was built from: the one
// the go command stamped (v1.2.3 from go install ...@v1.2.3, a
// pseudo-version from a clone), else "v" + SDK.
func Module() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path == modulePath && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "v" + SDK
}

// Line is the line a program's --version prints: "partnerctl v1.2.3
// (go1.26.1 linux/amd64)", with program the program's name.
func Line(program string) string {
	return fmt.Sprintf("%s %s (%s %s/%s)", program, Module(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
