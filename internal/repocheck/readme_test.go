package repocheck

// The README's Go snippets are type-checked against the module's own
// packages, so a renamed function or a wrong argument in the README fails
// `go test ./...` with the README's line number.

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// snippetPackages are the packages a ```go block may use without
// importing them: the module's own and the standard ones the README
// needs. A block that starts with a package clause imports for itself.
var snippetPackages = map[string]string{
	"partner":    "github.com/partnerapi/partner-go",
	"bulk":       "github.com/partnerapi/partner-go/bulk",
	"deployment": "github.com/partnerapi/partner-go/deployment",
	"events":     "github.com/partnerapi/partner-go/events",
	"fake":       "github.com/partnerapi/partner-go/fake",
	"demo":       "github.com/partnerapi/partner-go/fake/demo",
	"doctor":     "github.com/partnerapi/partner-go/doctor",
	"oauth":      "github.com/partnerapi/partner-go/oauth",
	"redis":      "github.com/redis/go-redis/v9",
	"redisdedup": "github.com/partnerapi/partner-go/events/redisdedup",
	"objects":    "github.com/partnerapi/partner-go/objects",
	"reports":    "github.com/partnerapi/partner-go/reports",
	"scim":       "github.com/partnerapi/partner-go/scim",
	"users":      "github.com/partnerapi/partner-go/users",
	"context":    "context",
	"errors":     "errors",
	"fmt":        "fmt",
	"http":       "net/http",
	"httptest":   "net/http/httptest",
	"io":         "io",
	"json":       "encoding/json",
	"log":        "log",
	"os":         "os",
	"slog":       "log/slog",
	"strings":    "strings",
	"testing":    "testing",
	"time":       "time",
}

// snippetPrelude declares the names a block of statements may use
// without declaring them. Statements run in the body of a function that
// returns an error, so `return err` works.
const snippetPrelude = `
var (
	ctx                         context.Context
	c                           *partner.Client
	clientID, clientSecret, key string
	objectID, integrationID     string
	reportID                    int64
	w                           io.Writer
	t0                          time.Time
)
`

// goBlock is one ```go block of a Markdown file.
type goBlock struct {
	n    int // 1-based among the file's ```go blocks
	line int // line of the block's first code line
	src  string
}

func goBlocks(md string) []goBlock {
	var (
		out  []goBlock
		cur  *goBlock
		code []string
	)
	for i, l := range strings.Split(md, "\n") {
		trimmed := strings.TrimSpace(l)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			if strings.TrimSpace(strings.TrimPrefix(trimmed, "```")) == "go" {
				cur = &goBlock{n: len(out) + 1, line: i + 2}
				code = nil
			} else {
				cur = &goBlock{n: -1} // another language: skipped
			}
		case cur != nil && trimmed == "```":
			if cur.n > 0 {
				cur.src = strings.Join(code, "\n") + "\n"
				out = append(out, *cur)
			}
			cur = nil
		case cur != nil:
			code = append(code, l)
		}
	}
	return out
}

// snippetFile turns a block into a Go file whose positions map back to
// the Markdown file through a //line directive.
func snippetFile(name string, b goBlock) string {
	line := fmt.Sprintf("//line %s:%d:1\n", name, b.line)
	if regexp.MustCompile(`(?m)^package \w+`).MatchString(b.src) {
		// A whole file: the directive goes before it, and the file's
		// own comment lines keep their numbers.
		return line + b.src
	}
	// Declarations parse as a file; statements do not.
	decls, err := parser.ParseFile(token.NewFileSet(), "", "package snippet\n"+b.src, parser.ImportsOnly|parser.AllErrors)
	if err == nil {
		_, err = parser.ParseFile(token.NewFileSet(), "", "package snippet\n"+b.src, 0)
	}
	statements := err != nil
	have := map[string]bool{} // names the block imports itself
	if !statements {
		for _, im := range decls.Imports {
			path := strings.Trim(im.Path.Value, `"`)
			n := filepath.Base(path)
			if im.Name != nil {
				n = im.Name.Name
			}
			have[n] = true
		}
	}
	src := b.src
	if statements {
		src += snippetPrelude // the prelude's imports are needed too
	}
	var imports []string
	for n, path := range snippetPackages {
		if !have[n] && regexp.MustCompile(`\b`+n+`\.`).MatchString(src) {
			imports = append(imports, fmt.Sprintf("%s %q", n, path))
		}
	}
	slices.Sort(imports)
	var f strings.Builder
	f.WriteString("package snippet\n\nimport (\n\t" + strings.Join(imports, "\n\t") + "\n)\n")
	if statements {
		f.WriteString(snippetPrelude + "\nfunc _() error {\n" + line + b.src + "return nil\n}\n")
	} else {
		f.WriteString(line + b.src)
	}
	return f.String()
}

// checkGoBlocks type-checks every ```go block of md (called name in the
// messages) and returns one message per problem. Unused variables and
// imports are allowed: a snippet shows a call, not what follows it.
func checkGoBlocks(t *testing.T, name, md string) []string {
	t.Helper()
	var problems []string
	// One file set and one importer for every block: the importer reads
	// each package's export data once.
	fset := token.NewFileSet()
	imp := exportImporter(fset, listed(t))
	for _, b := range goBlocks(md) {
		where := fmt.Sprintf("%s, ```go block %d (starting at line %d)", name, b.n, b.line-1)
		src := snippetFile(name, b)
		f, err := parser.ParseFile(fset, "snippet.go", src, parser.ParseComments)
		if err != nil {
			if list, ok := errors.AsType[scanner.ErrorList](err); ok {
				for _, e := range list {
					problems = append(problems, fmt.Sprintf("%s: %s: %s", where, e.Pos, e.Msg))
				}
			} else {
				problems = append(problems, fmt.Sprintf("%s: %v", where, err))
			}
			continue
		}
		conf := types.Config{
			Importer: imp,
			Error: func(err error) {
				if te, ok := err.(types.Error); ok {
					if te.Soft {
						return
					}
					problems = append(problems, fmt.Sprintf("%s: %s: %s", where, te.Fset.Position(te.Pos), te.Msg))
					return
				}
				problems = append(problems, fmt.Sprintf("%s: %v", where, err))
			},
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
		before := len(problems)
		conf.Check("snippet", fset, []*ast.File{f}, info)
		if len(problems) == before {
			for _, p := range ignoredErrors(fset, f, info) {
				problems = append(problems, where+": "+p)
			}
		}
	}
	return problems
}

// isFmtPrint reports whether call is fmt.Print or a sibling, whose error
// nobody checks.
func isFmtPrint(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "fmt" && strings.Contains(sel.Sel.Name, "rint")
}

// ignoredErrors finds what a reader should never copy from a README: a
// call whose error result is dropped (a bare call statement, or the error
// assigned to _), an err assigned and not looked at by the very next
// statement (or, at the end of an if's branch, by the statement after the
// if), and a range over (value, err) whose body does not start by
// looking at err. A deferred call is the one exception (defer c.Close).
func ignoredErrors(fset *token.FileSet, f *ast.File, info *types.Info) []string {
	s := &errScan{fset: fset, info: info, follow: map[*ast.BlockStmt]ast.Stmt{}}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ExprStmt:
			s.exprStmt(n)
		case *ast.AssignStmt:
			s.assignStmt(n)
		case *ast.RangeStmt:
			s.rangeStmt(n)
		case *ast.BlockStmt:
			s.blockStmt(n)
		}
		return true
	})
	return s.out
}

// errScan is ignoredErrors' walk of one file.
type errScan struct {
	fset   *token.FileSet
	info   *types.Info
	follow map[*ast.BlockStmt]ast.Stmt // an if's branch: the statement after the if
	out    []string
}

func (s *errScan) report(n ast.Node, msg string) {
	s.out = append(s.out, fmt.Sprintf("%s: %s", s.fset.Position(n.Pos()), msg))
}

// results returns the types a call expression yields.
func (s *errScan) results(e ast.Expr) []types.Type {
	tv, ok := s.info.Types[e]
	if !ok || tv.Type == nil {
		return nil
	}
	if tup, ok := tv.Type.(*types.Tuple); ok {
		var out []types.Type
		for v := range tup.Variables() {
			out = append(out, v.Type())
		}
		return out
	}
	return []types.Type{tv.Type}
}

func isErrType(t types.Type) bool {
	return t != nil && types.Identical(t, types.Universe.Lookup("error").Type())
}

// isErrIdent reports whether e is the identifier err.
func isErrIdent(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "err"
}

// mentionsErr reports whether n uses the identifier err.
func mentionsErr(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok && isErrIdent(e) {
			found = true
		}
		return !found
	})
	return found
}

// exprStmt: a bare call whose last result is an error drops it.
func (s *errScan) exprStmt(n *ast.ExprStmt) {
	if call, ok := n.X.(*ast.CallExpr); ok && !isFmtPrint(call) {
		if rs := s.results(call); len(rs) > 0 && isErrType(rs[len(rs)-1]) {
			s.report(n, "the error of this call is dropped")
		}
	}
}

// assignStmt: an error result assigned to _.
func (s *errScan) assignStmt(n *ast.AssignStmt) {
	if len(n.Rhs) != 1 {
		return
	}
	rs := s.results(n.Rhs[0])
	if len(rs) != len(n.Lhs) {
		return
	}
	for i, l := range n.Lhs {
		if id, ok := l.(*ast.Ident); ok && id.Name == "_" && isErrType(rs[i]) {
			s.report(n, "an error is assigned to _")
		}
	}
}

// rangeStmt: a loop's err is looked at by the first statement of its body.
func (s *errScan) rangeStmt(n *ast.RangeStmt) {
	for _, e := range []ast.Expr{n.Key, n.Value} {
		if isErrIdent(e) && (len(n.Body.List) == 0 || !mentionsErr(n.Body.List[0])) {
			s.report(n, "the loop's err is not looked at first in its body")
		}
	}
}

// blockStmt: an err assigned is looked at by the next statement, or at the
// end of an if's branch by the statement after the if.
func (s *errScan) blockStmt(n *ast.BlockStmt) {
	for i, st := range n.List {
		if is, ok := st.(*ast.IfStmt); ok && i+1 < len(n.List) {
			// An err set at the end of an if's branches may be
			// checked by the statement after the if.
			s.follow[is.Body] = n.List[i+1]
			if eb, ok := is.Else.(*ast.BlockStmt); ok {
				s.follow[eb] = n.List[i+1]
			}
		}
		as, ok := st.(*ast.AssignStmt)
		if !ok || !slices.ContainsFunc(as.Lhs, isErrIdent) {
			continue
		}
		next := s.follow[n]
		if i+1 < len(n.List) {
			next = n.List[i+1]
		}
		if next == nil || !mentionsErr(next) {
			s.report(st, "err is assigned and not checked by the next statement")
		}
	}
}

// TestReadmeSnippetsCompile: every ```go block of README.md (and of the
// Markdown files in docs/) type-checks against the module. A block is a
// whole file (it starts with a package clause), top-level declarations (a
// complete test function, say), or statements, which may use the names
// snippetPrelude declares.
func TestReadmeSnippetsCompile(t *testing.T) {
	t.Parallel()
	docs, _ := filepath.Glob("docs/*.md")
	for _, name := range append([]string{"README.md"}, docs...) {
		md, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if name == "README.md" && len(goBlocks(string(md))) == 0 {
			t.Fatal("README.md has no ```go blocks: has the fence changed?")
		}
		for _, p := range checkGoBlocks(t, name, string(md)) {
			t.Error(p)
		}
	}
	if t.Failed() {
		t.Logf("A block of statements may use, undeclared:%s"+
			"and the packages %v without importing them.", snippetPrelude, slices.Sorted(maps.Keys(snippetPackages)))
	}
}

// TestReadmeCheckerCatchesBrokenSnippets: the check fails, naming the
// block and the Markdown line, on each kind of broken snippet.
func TestReadmeCheckerCatchesBrokenSnippets(t *testing.T) {
	t.Parallel()
	md := "# x\n\n```go\nif _, err := partner.New(partner.WithBaseURL(\"https://h\")); err != nil { return err }\n```\n\n" + // fine
		"```\nnot go\n```\n\n" +
		"```go\nexec, err := c.Bulk.WaitExecution(ctx, nil, nil)\n```\n\n" + // nil is no WaitOptions
		"```go\nfor u := range c.SCIM.List(ctx, scim.ListParams{}) { ... }\n```\n\n" + // not Go
		"```go\nfunc TestX(t *testing.T) {\n\tsrv := fake.NewServer()\n\tsrv.NoSuchMethod()\n}\n```\n\n" + // declarations
		"```go\ntok, err := c.OAuth.Token(ctx)\n```\n\n" + // err never looked at
		"```go\nc.Objects.Audit(ctx, objectID, objects.AuditParams{})\n```\n\n" + // result and error dropped
		"```go\nfor u, err := range c.SCIM.List(ctx, scim.ListParams{}) {\n\tfmt.Println(u.UserName)\n}\n```\n\n" + // loop err unread
		"```go\n_, _ = c.Reports.PrepareExport(ctx, reportID)\n```\n\n" + // error to _
		"```go\nf, err := os.Open(\"x.csv\")\nif err != nil {\n\treturn err\n}\ndefer f.Close()\n```\n\n" + // fine: checked, deferred Close
		"```go\nu, err := c.SCIM.Get(ctx, \"a\")\nif partner.IsNotFound(err) {\n\tu, err = c.SCIM.Get(ctx, \"b\")\n}\nif err != nil {\n\treturn err\n}\nfmt.Println(u.ID)\n```\n" // fine: checked after the if
	got := checkGoBlocks(t, "X.md", md)
	want := []string{
		"X.md, ```go block 2 (starting at line 11): X.md:12:",
		"X.md, ```go block 3 (starting at line 15): X.md:16:",
		"X.md, ```go block 4 (starting at line 19): X.md:22:",
		"X.md, ```go block 5 (starting at line 26): X.md:27:1: err is assigned and not checked",
		"X.md, ```go block 6 (starting at line 30): X.md:31:1: the error of this call is dropped",
		"X.md, ```go block 7 (starting at line 34): X.md:35:1: the loop's err is not looked at",
		"X.md, ```go block 8 (starting at line 40): X.md:41:1: an error is assigned to _",
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(p string) bool { return strings.HasPrefix(p, w) }) {
			t.Errorf("no problem reported starting %q; got:\n%s", w, strings.Join(got, "\n"))
		}
	}
	for _, p := range got {
		if strings.Contains(p, "block 1 ") || strings.Contains(p, "block 9 ") || strings.Contains(p, "block 10 ") {
			t.Errorf("a correct block reported: %s", p)
		}
	}
}

// TestReadmeTestFunctionsRun: a test function the README shows is also a
// test of the root package, word for word, so it runs and passes there
// rather than only compiling.
func TestReadmeTestFunctionsRun(t *testing.T) {
	t.Parallel()
	md, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	ours := rootTestFuncs(t)
	shown := 0
	for _, b := range goBlocks(string(md)) {
		bfset := token.NewFileSet()
		bsrc := []byte("package p\n" + b.src)
		f, err := parser.ParseFile(bfset, "", bsrc, 0)
		if err != nil {
			continue // statements; TestReadmeSnippetsCompile reports real errors
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !strings.HasPrefix(fd.Name.Name, "Test") {
				continue
			}
			shown++
			got, ok := ours[fd.Name.Name]
			switch {
			case !ok:
				t.Errorf("README.md, ```go block %d (line %d) shows %s, which no *_test.go file of the root package (package partner_test) declares: copy it into the root package's tests, as readme_pipeline_test.go holds TestPipelineReport", b.n, b.line-1, fd.Name.Name)
			case got != funcText(bfset, bsrc, fd):
				t.Errorf("README.md, ```go block %d (line %d): %s differs from the test of the same name in the root package; keep them identical.\nREADME:\n%s\ntest:\n%s", b.n, b.line-1, fd.Name.Name, funcText(bfset, bsrc, fd), got)
			}
		}
	}
	if shown == 0 {
		t.Error("README.md shows no complete test function (the fake's section should)")
	}
}

// rootTestFuncs is the text of each function of the root package's test
// files, by name (the tests run from the module's root).
func rootTestFuncs(t *testing.T) map[string]string {
	t.Helper()
	ours := map[string]string{}
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*_test.go")
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				ours[fd.Name.Name] = funcText(fset, src, fd)
			}
		}
	}
	return ours
}

// funcText is the source text of fd, from its func keyword to its end.
func funcText(fset *token.FileSet, src []byte, fd *ast.FuncDecl) string {
	return string(src[fset.Position(fd.Pos()).Offset:fset.Position(fd.End()).Offset])
}
