package fake

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxExported is the most exported identifiers package fake may have: a
// test writer learns it in minutes when its index is short. What only
// cmd/partnerfake needs lives next to it (internal/fakeserver/fakeadmin), the demo ids
// in package fake/demo. It is the present count, so that each new name is
// a deliberate raise.
const maxExported = 109

// exportedNames lists the package's exported identifiers declared in the
// non-test files of dir: constants, variables, types, functions, and the
// methods of exported types (struct fields are not counted).
func exportedNames(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := gotoken.NewFileSet()
	var names []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					names = append(names, d.Name.Name)
					continue
				}
				typ := d.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				if id, ok := typ.(*ast.Ident); ok && id.IsExported() {
					names = append(names, id.Name+"."+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names = append(names, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names = append(names, n.Name)
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(names)
	return names
}

// TestExportedIdentifiersBounded keeps package fake at most maxExported
// exported identifiers.
func TestExportedIdentifiersBounded(t *testing.T) {
	names := exportedNames(t, ".")
	if len(names) > maxExported {
		t.Errorf("package fake exports %d identifiers, want at most %d:\n%s", len(names), maxExported, strings.Join(names, "\n"))
	}
	// The count sees what a test writer sees.
	for _, want := range []string{"NewServer", "Fake.InjectFault", "ManualClock.Advance", "Fake.Objects", "WithDemoData"} {
		if i := sort.SearchStrings(names, want); i == len(names) || names[i] != want {
			t.Errorf("exported identifiers lack %s", want)
		}
	}
}
