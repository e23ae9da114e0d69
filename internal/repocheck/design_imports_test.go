package repocheck

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// modulePackage is one package of the module as `go list` sees it: its
// path inside the module ("" for the root), its name and the module's
// packages its non-test files import.
type modulePackage struct {
	rel, name string
	imports   []string
}

// modulePackages is the module's packages as the listing has them.
func modulePackages(t *testing.T) []modulePackage {
	t.Helper()
	rel := func(p string) (string, bool) {
		if p == modulePath {
			return "", true
		}
		return strings.CutPrefix(p, modulePath+"/")
	}
	var pkgs []modulePackage
	for _, lp := range listed(t) {
		r, ok := rel(lp.ImportPath)
		if !ok {
			continue
		}
		p := modulePackage{rel: r, name: lp.Name}
		for _, imp := range lp.Imports {
			if ir, ok := rel(imp); ok {
				p.imports = append(p.imports, ir)
			}
		}
		pkgs = append(pkgs, p)
	}
	slices.SortFunc(pkgs, func(a, b modulePackage) int { return strings.Compare(a.rel, b.rel) })
	return pkgs
}

// under reports whether rel is dir or a package below it.
func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

// TestDesignImportRules holds docs/DESIGN.md's claims about who imports
// what ("Arrows only point down") to the packages as they build, so the
// layout's story cannot drift from the code.
func TestDesignImportRules(t *testing.T) {
	t.Parallel()
	pkgs := modulePackages(t)
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages: too few to mean anything", len(pkgs))
	}
	for _, p := range pkgs {
		for _, imp := range p.imports {
			if msg := importRule(p.rel, imp); msg != "" {
				t.Error(msg)
			}
			if msg := layerRule(p.rel, imp); msg != "" {
				t.Error(msg)
			}
		}
		if p.rel == "internal/plumbing" && !slices.Contains(p.imports, "core") {
			// It calls the Client's methods: nothing fills it at start-up.
			t.Errorf("internal/plumbing does not import core: the areas must reach a core.Client through calls the compiler checks")
		}
		if under(p.rel, "internal") && p.name == "main" {
			t.Errorf("%s is a program under internal/: programs live in cmd/ or scripts/", p.rel)
		}
	}
}

// importRule is what is wrong with the package rel importing imp under the
// rules for every package (the root package, test harnesses, the fake's
// server side), or "".
func importRule(rel, imp string) string {
	switch {
	case imp == "" && !under(rel, "cmd") && !under(rel, "examples") && rel != "internal/testkit/mocktest":
		return fmt.Sprintf("%s imports the root package: only programs, tests and internal/testkit/mocktest may", rel)
	case under(imp, "internal/testkit") && !under(rel, "internal/testkit"):
		return fmt.Sprintf("%s imports %s: test harnesses are for tests only", rel, imp)
	case under(imp, "internal/fakeserver") && !under(rel, "fake") && rel != "cmd/partnerfake" && !under(rel, "internal/fakeserver"):
		return fmt.Sprintf("%s imports %s: the fake's server side is for fake and cmd/partnerfake only", rel, imp)
	}
	return ""
}

// layerRule is what is wrong with the package rel importing imp under the
// rules for core, fake and the area packages, or "".
func layerRule(rel, imp string) string {
	sdkHelpers := []string{"internal/errs", "internal/check", "internal/plumbing",
		"internal/paging", "internal/poll", "internal/text", "internal/version"}
	areas := []string{"oauth", "scim", "users", "reports", "objects", "bulk", "events"}
	switch {
	case rel == "core":
		if !slices.Contains([]string{"internal/errs", "internal/check", "internal/version"}, imp) {
			return fmt.Sprintf("core imports %s: it imports no package of the module but errs, check and version", imp)
		}
	case rel == "fake":
		if imp != "deployment" && imp != "fake/demo" && imp != "internal/text" && !under(imp, "internal/fakeserver") {
			return fmt.Sprintf("fake imports %s: it imports no SDK package but deployment", imp)
		}
	case slices.Contains(areas, rel):
		if imp != "core" && !slices.Contains(sdkHelpers, imp) && !under(imp, rel+"/internal") {
			return fmt.Sprintf("%s imports %s: an area package imports core and the SDK's internal helpers only", rel, imp)
		}
	}
	return ""
}
