package repocheck

import (
	"strings"
	"testing"
)

// TestLibraryImportsOnlyOTelAPI: the SDK's packages (tests aside) depend
// on the OpenTelemetry API, never on its SDK or an exporter. Programs
// (cmd/, examples/) may: a program installs the OTel SDK.
func TestLibraryImportsOnlyOTelAPI(t *testing.T) {
	t.Parallel()
	var libs []string
	for p, lp := range listed(t) {
		if (p == modulePath || strings.HasPrefix(p, modulePath+"/")) && lp.Name != "main" {
			libs = append(libs, p)
		}
	}
	api := false
	for p := range deps(t, libs...) {
		switch {
		case p == "go.opentelemetry.io/otel/trace":
			api = true
		case strings.HasPrefix(p, "go.opentelemetry.io/otel/sdk"), strings.HasPrefix(p, "go.opentelemetry.io/otel/exporters"),
			strings.HasPrefix(p, "go.opentelemetry.io/contrib"):
			t.Errorf("a package of the SDK depends on %s", p)
		}
	}
	if !api {
		t.Error("no package depends on go.opentelemetry.io/otel/trace: has the check gone stale?")
	}
}
