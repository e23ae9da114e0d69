// Package version holds the SDK's version, a leaf below core (the root
// package's Version, the User-Agent's, and the instrumentation version
// of the spans and metrics of core and events), and the version line
// the module's programs (partnerctl, partnerfake) print from it.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is the SDK's version (partner.Version).
const Version = "1.1.0"

// modulePath is the module the programs are built from.
const modulePath = "github.com/partnerapi/partner-go"

// Module is the version of the module a program was built from: the one
// the go command stamped (v1.2.3 from go install ...@v1.2.3, a
// pseudo-version from a clone), else "v" + Version.
func Module() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path == modulePath && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "v" + Version
}

// Line is the line a program's --version prints: "partnerctl v1.2.3
// (go1.26.1 linux/amd64)", with program the program's name.
func Line(program string) string {
	return fmt.Sprintf("%s %s (%s %s/%s)", program, Module(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
