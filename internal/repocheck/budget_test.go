package repocheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// budgetFuncs start a clock: a deadline, a timer, or a start time that a
// test later compares with the time.
var budgetFuncs = []string{
	"context.WithTimeout", "context.WithDeadline", "context.WithTimeoutCause", "context.WithDeadlineCause",
	"time.After", "time.AfterFunc", "time.NewTimer", "time.Tick", "time.NewTicker", "time.Now",
}

// budgetCall names the clock call starts, or is "".
func budgetCall(call *ast.CallExpr) string {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	if n := x.Name + "." + sel.Sel.Name; slices.Contains(budgetFuncs, n) {
		return n
	}
	return ""
}

// budgetsBeforeParallel returns a message for each clock started where it
// counts the wait for a parallel slot: in a test function before its (or
// its subtests') t.Parallel() call, or at package level.
func budgetsBeforeParallel(fset *token.FileSet, f *ast.File) []string {
	var out []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.GenDecl:
			ast.Inspect(d, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok && budgetCall(c) != "" {
					out = append(out, fmt.Sprintf("%s: %s at package level: it counts the time before the test that reads it runs", fset.Position(c.Pos()), budgetCall(c)))
				}
				return true
			})
		case *ast.FuncDecl:
			if d.Body == nil {
				continue
			}
			var budgets []*ast.CallExpr
			var parallel token.Pos // the last .Parallel() call, subtests' included
			ast.Inspect(d.Body, func(n ast.Node) bool {
				c, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if budgetCall(c) != "" {
					budgets = append(budgets, c)
				}
				if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Parallel" && len(c.Args) == 0 && c.Pos() > parallel {
					parallel = c.Pos()
				}
				return true
			})
			for _, b := range budgets {
				if b.Pos() < parallel {
					out = append(out, fmt.Sprintf("%s: %s in %s before its t.Parallel() at line %d: the budget counts the wait for a parallel slot",
						fset.Position(b.Pos()), budgetCall(b), d.Name.Name, fset.Position(parallel).Line))
				}
			}
		}
	}
	return out
}

// TestNoBudgetBeforeParallel: no test of the module starts a deadline, a
// timer or a stopwatch before t.Parallel(), nor at package level, where it
// would count the time the test waits for a parallel slot (on a loaded
// 2-CPU machine, minutes). A budget made by a helper called before
// t.Parallel() is not seen: start budgets after it.
func TestNoBudgetBeforeParallel(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		for _, m := range budgetsBeforeParallel(fset, f) {
			t.Error(m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d test files: the walk finds too few to mean anything", checked)
	}
}

// TestBudgetScanFindsBudgetsBeforeParallel: the scan reports a deadline, a
// timer and a start time made before a test's or its subtests'
// t.Parallel(), and one at package level, and none made after.
func TestBudgetScanFindsBudgetsBeforeParallel(t *testing.T) {
	// The fixture is a file of its own, so that no scan of the module's
	// sources takes its budgets for the module's.
	src, err := os.ReadFile(filepath.Join("internal", "repocheck", "testdata", "budgets.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x_test.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := budgetsBeforeParallel(fset, f)
	want := []string{
		"x_test.go:2:13: time.Now at package level",
		"x_test.go:4:17: context.WithTimeout in TestA before its t.Parallel() at line 6",
		"x_test.go:10:14: time.After in TestB before its t.Parallel() at line 13",
	}
	if len(got) != len(want) {
		t.Fatalf("reported\n%s\nwant %d reports", strings.Join(got, "\n"), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("report %d: %q, want it to start %q", i, got[i], w)
		}
	}
}
