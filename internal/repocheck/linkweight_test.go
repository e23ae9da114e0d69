package repocheck

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestRootAndAreasLinkLight: a program that imports the root package and
// areas (scim, events, every one) links neither golang.org/x/net nor
// golang.org/x/text, and no OpenTelemetry instrumentation library (the
// tests' otelhttp); go list -deps of the packages is what such a program
// links besides the runtime and its own code. The copies that net/http
// vendors (vendor/golang.org/x/...) are the standard library's and do not
// count.
func TestRootAndAreasLinkLight(t *testing.T) {
	t.Parallel()
	args := []string{"list", "-deps", modulePath}
	for _, area := range []string{"scim", "events", "reports", "bulk", "oauth", "users", "objects"} {
		args = append(args, modulePath+"/"+area)
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for p := range strings.FieldsSeq(string(out)) {
		for _, heavy := range []string{"golang.org/x/net/", "golang.org/x/text/", "go.opentelemetry.io/contrib/", "github.com/felixge/httpsnoop"} {
			if strings.HasPrefix(p, heavy) {
				t.Errorf("a program importing the root package and the areas links %s", p)
			}
		}
	}
	if !strings.Contains(string(out), modulePath+"/scim\n") {
		t.Fatalf("go list did not list scim:\n%s", out)
	}
	// The listing holds what the packages link, not only the packages
	// named: the standard library's and the SDK's own dependencies.
	for _, dep := range []string{"net/http", "go.opentelemetry.io/otel/trace", "github.com/hashicorp/go-retryablehttp"} {
		if !slices.Contains(strings.Fields(string(out)), dep) {
			t.Errorf("go list -deps did not list %s: has the check gone stale?", dep)
		}
	}
}
