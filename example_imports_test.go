package partner_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/internal/testkit/gosrc"
)

// exampleFile reports whether f is documentation a user copies: a file
// named example_test.go (or *_example_test.go), a test file with an
// Example function, or any file of a program under examples/, its tests
// included (they are copied with it).
func exampleFile(path string, f *ast.File) bool {
	base := filepath.Base(path)
	if base == "example_test.go" || strings.HasSuffix(base, "_example_test.go") {
		return true
	}
	if strings.HasPrefix(filepath.ToSlash(path), "examples/") {
		return true
	}
	if !strings.HasSuffix(base, "_test.go") {
		return false
	}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && (fn.Name.Name == "Example" || strings.HasPrefix(fn.Name.Name, "Example_") ||
			(strings.HasPrefix(fn.Name.Name, "Example") && len(fn.Name.Name) > len("Example") && fn.Name.Name[len("Example")] >= 'A' && fn.Name.Name[len("Example")] <= 'Z')) {
			return true
		}
	}
	return false
}

// internalImports returns the imports of f that a user's module cannot
// import: any path with an internal element.
func internalImports(f *ast.File) []string {
	var bad []string
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		if p == "internal" || strings.HasPrefix(p, "internal/") || strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/internal") {
			bad = append(bad, p)
		}
	}
	return bad
}

// TestExamplesImportNoInternalPackage: every example (the example_test.go
// files and any test file with an Example function, pkg.go.dev's "the way
// to use the package", and the programs under examples/) compiles when a
// user copies it into their own module, so none imports an internal
// package ("use of internal package ... not allowed"). Examples of the
// internal packages themselves are not copied and not checked.
func TestExamplesImportNoInternalPackage(t *testing.T) {
	t.Parallel()
	paths, err := gosrc.GoFiles(".", func(dir string) bool { return filepath.Base(dir) == "internal" })
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, p := range paths {
		f, err := gosrc.Parse(p)
		if err != nil {
			t.Fatal(err)
		}
		if !exampleFile(p, f) {
			continue
		}
		checked++
		for _, imp := range internalImports(f) {
			t.Errorf("%s imports %s: copied into a user's module the example fails with \"use of internal package not allowed\"; use the public fake or net/http/httptest", p, imp)
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d example files: the scan finds too few to mean anything", checked)
	}
}

// TestExampleScanFindsInternalImports: the scan recognises an example file
// by its name or its Example functions, and an internal import.
func TestExampleScanFindsInternalImports(t *testing.T) {
	src := `package reports_test
import (
	"fmt"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)
func ExampleService_List() { fmt.Println(mocktest.BaseURL) }
`
	f, err := parser.ParseFile(token.NewFileSet(), "reports/list_test.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	if !exampleFile("reports/list_test.go", f) {
		t.Error("a test file with ExampleService_List is not taken for an example")
	}
	if got := internalImports(f); len(got) != 1 || got[0] != "github.com/partnerapi/partner-go/internal/testkit/mocktest" {
		t.Errorf("internal imports %v", got)
	}
	g, _ := parser.ParseFile(token.NewFileSet(), "x_test.go", "package x_test\nfunc Examplefoo() {}\nfunc TestX() {}\n", 0)
	if exampleFile("x_test.go", g) {
		t.Error("Examplefoo (not an example name) and a Test make an example file")
	}
	if !exampleFile("examples/crm-sync/main_test.go", g) {
		t.Error("a test of a program under examples/ is not taken for an example: it is copied with the program")
	}
}
