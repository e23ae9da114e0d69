package fake

import (
	"go/ast"
	"go/doc"
	"go/parser"
	gotoken "go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// camelWord matches a word that may be a Go identifier in camel case.
var camelWord = regexp.MustCompile(`\b[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*\b`)

// TestGoDocNamesValuesAUserCanType: what go doc shows of the package (the
// package comment, the docs of exported names and the comments of their
// fields) names no unexported identifier of the package, such as
// columnText or reportDraft: a user cannot type those, so a doc that names
// a value names it by its literal ("TEXT") or an exported name.
func TestGoDocNamesValuesAUserCanType(t *testing.T) {
	t.Parallel()
	fset := gotoken.NewFileSet()
	var files []*ast.File
	names, _ := filepath.Glob("*.go")
	unexported := map[string]bool{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		for _, d := range f.Decls {
			for _, id := range declNames(d) {
				if !ast.IsExported(id) && strings.ContainsFunc(id, unicode.IsUpper) {
					unexported[id] = true
				}
			}
		}
	}
	if !unexported["columnText"] {
		t.Fatal("the scan of unexported names misses columnText: it proves nothing")
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/partnerapi/partner-go/fake")
	if err != nil {
		t.Fatal(err)
	}
	for _, where := range shownDocs(p) {
		for _, w := range camelWord.FindAllString(where.text, -1) {
			if unexported[w] {
				t.Errorf("go doc of %s names %s, which a user cannot type: name the value or an exported name", where.name, w)
			}
		}
	}
}

// declNames returns the package-level names a declaration declares.
func declNames(d ast.Decl) []string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			return []string{d.Name.Name}
		}
	case *ast.GenDecl:
		var out []string
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.ValueSpec:
				for _, n := range s.Names {
					out = append(out, n.Name)
				}
			case *ast.TypeSpec:
				out = append(out, s.Name.Name)
			}
		}
		return out
	}
	return nil
}

type shownDoc struct{ name, text string }

// shownDocs returns the text go doc shows: the package comment, the doc
// of every exported name, and the comments inside exported declarations
// (struct fields, grouped constants).
func shownDocs(p *doc.Package) []shownDoc {
	out := []shownDoc{{"the package", p.Doc}}
	comments := func(name string, n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			if cg, ok := n.(*ast.CommentGroup); ok {
				out = append(out, shownDoc{name, cg.Text()})
			}
			return true
		})
	}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			out = append(out, shownDoc{strings.Join(v.Names, ", "), v.Doc})
			comments(strings.Join(v.Names, ", "), v.Decl)
		}
	}
	funcs := func(prefix string, fs []*doc.Func) {
		for _, f := range fs {
			out = append(out, shownDoc{prefix + f.Name, f.Doc})
		}
	}
	values(p.Consts)
	values(p.Vars)
	funcs("", p.Funcs)
	for _, typ := range p.Types {
		out = append(out, shownDoc{typ.Name, typ.Doc})
		comments(typ.Name, typ.Decl)
		values(typ.Consts)
		values(typ.Vars)
		funcs("", typ.Funcs)
		funcs(typ.Name+".", typ.Methods)
	}
	slices.SortStableFunc(out, func(a, b shownDoc) int { return strings.Compare(a.name, b.name) })
	return out
}
