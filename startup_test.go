package partner_test

import (
	"go/ast"
	"go/token"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/internal/testkit/gosrc"
)

// TestNoStartupRegistry holds the SDK's wiring to what the compiler
// checks: no package of the SDK (programs under cmd/, examples/ and
// scripts/ aside) has a func init, or a package-level variable of a
// function type that some other package could fill at start-up. An area
// reaches what it needs of a core.Client through ordinary calls
// (internal/plumbing imports core).
func TestNoStartupRegistry(t *testing.T) {
	t.Parallel()
	fset := gosrc.FileSet()
	paths, err := gosrc.GoFiles(".", func(dir string) bool { return dir == "cmd" || dir == "examples" || dir == "scripts" })
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := gosrc.Parse(path)
		if err != nil {
			t.Fatal(err)
		}
		files++
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.Name == "init" {
					t.Errorf("%s: func init: wire it with an ordinary call the compiler checks", fset.Position(d.Pos()))
				}
			case *ast.GenDecl:
				if d.Tok != token.VAR {
					continue
				}
				for _, spec := range d.Specs {
					vs := spec.(*ast.ValueSpec)
					_, funcType := vs.Type.(*ast.FuncType)
					for i, name := range vs.Names {
						_, funcLit := valueAt(vs.Values, i).(*ast.FuncLit)
						if funcType || funcLit {
							t.Errorf("%s: package-level function variable %s: a side channel some package could set at start-up",
								fset.Position(name.Pos()), name.Name)
						}
					}
				}
			}
		}
	}
	if files < 100 {
		t.Fatalf("read %d files: too few to mean anything", files)
	}
}

func valueAt(values []ast.Expr, i int) ast.Expr {
	if i < len(values) {
		return values[i]
	}
	return nil
}
