package partner

import (
	"context"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/internal/testkit/gosrc"
	"github.com/partnerapi/partner-go/oauth"
	"github.com/partnerapi/partner-go/objects"
	"github.com/partnerapi/partner-go/reports"
	"github.com/partnerapi/partner-go/scim"
	"github.com/partnerapi/partner-go/users"
)

// TestNoExportedFuncUsesInternalTypes: outside the module nobody can name
// a type of an internal package, so an exported function or method that
// takes or returns one cannot be called properly. Every public package of
// the module is checked.
func TestNoExportedFuncUsesInternalTypes(t *testing.T) {
	t.Parallel()
	paths, err := gosrc.GoFiles(".", func(dir string) bool { return filepath.Base(dir) == "internal" })
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := gosrc.Parse(path)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name == "main" {
			continue
		}
		internal := map[string]bool{} // local names of internal imports
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.Contains(p, "/internal/") && !strings.HasSuffix(p, "/internal") {
				continue
			}
			name := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			internal[name] = true
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() || !exportedRecv(fn) {
				continue
			}
			ast.Inspect(fn.Type, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] {
						found = append(found, gosrc.FileSet().Position(fn.Pos()).String()+": "+fn.Name.Name+" uses "+id.Name+"."+sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
	for _, f := range found {
		t.Error(f)
	}
}

// exportedRecv reports whether fn is a function or a method of an
// exported type.
func exportedRecv(fn *ast.FuncDecl) bool {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return true
	}
	typ := fn.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
		case *ast.IndexExpr:
			typ = x.X
		case *ast.IndexListExpr:
			typ = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return true
		}
	}
}

// TestExportedNamesHaveDocs: every exported function, method, type,
// constant and variable of the module's packages has a doc comment (a
// constant or variable may share its group's). Test files and package
// main's commands are checked like the rest.
func TestExportedNamesHaveDocs(t *testing.T) {
	t.Parallel()
	paths, err := gosrc.GoFiles(".", nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, path := range paths {
		dir := filepath.Dir(path)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		p, err := packageDoc(dir)
		if err != nil {
			t.Fatal(err)
		}
		if p == nil {
			continue
		}
		for _, miss := range undocumented(p) {
			t.Errorf("%s: %s has no doc comment", dir, miss)
		}
	}
}

// undocumented lists the exported names of p without a doc comment.
func undocumented(p *doc.Package) []string {
	var out []string
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			if v.Doc != "" {
				continue
			}
			for _, s := range v.Decl.Specs {
				vs := s.(*ast.ValueSpec)
				if vs.Doc != nil || vs.Comment != nil {
					continue
				}
				for _, n := range vs.Names {
					if n.IsExported() {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	funcs := func(prefix string, fs []*doc.Func) {
		for _, f := range fs {
			if f.Doc == "" {
				out = append(out, prefix+f.Name)
			}
		}
	}
	if p.Doc == "" {
		out = append(out, "package "+p.Name)
	}
	values(p.Consts)
	values(p.Vars)
	funcs("", p.Funcs)
	for _, typ := range p.Types {
		if typ.Doc == "" {
			out = append(out, typ.Name)
		}
		values(typ.Consts)
		values(typ.Vars)
		funcs("", typ.Funcs)
		funcs(typ.Name+".", typ.Methods)
	}
	return out
}

// TestWaitsHaveOneShape: every WaitX method of the area services takes
// its package's WaitOptions last and returns the state it waits on and an
// error; that WaitOptions has the poll loop's Interval and MaxInterval and
// a Progress callback of the same state. No XAndWait method exists: a
// wait composes with the call that starts the work.
func TestWaitsHaveOneShape(t *testing.T) {
	ctxType := reflect.TypeFor[context.Context]()
	errType := reflect.TypeFor[error]()
	durType := reflect.TypeFor[time.Duration]()
	waits := 0
	for _, svc := range []reflect.Type{
		reflect.TypeFor[*oauth.Service](), reflect.TypeFor[*scim.Service](), reflect.TypeFor[*users.Service](),
		reflect.TypeFor[*reports.Service](), reflect.TypeFor[*objects.Service](), reflect.TypeFor[*bulk.Service](),
		reflect.TypeFor[*events.Service](),
	} {
		for m := range svc.Methods() {
			if strings.HasSuffix(m.Name, "AndWait") {
				t.Errorf("%s.%s: start the work, then call its WaitX", svc.Elem(), m.Name)
			}
			if !strings.HasPrefix(m.Name, "Wait") {
				continue
			}
			waits++
			ft := m.Type // receiver first
			name := svc.Elem().String() + "." + m.Name
			if ft.NumIn() < 3 || ft.In(1) != ctxType || ft.NumOut() != 2 || ft.Out(1) != errType || ft.Out(0).Kind() != reflect.Pointer {
				t.Errorf("%s%v: want (ctx, ..., WaitOptions) (*State, error)", name, ft)
				continue
			}
			opts, state := ft.In(ft.NumIn()-1), ft.Out(0)
			if opts.Name() != "WaitOptions" || opts.PkgPath() != svc.Elem().PkgPath() || opts.Kind() != reflect.Struct {
				t.Errorf("%s: last parameter is %v, want its package's WaitOptions by value", name, opts)
				continue
			}
			for _, f := range []struct {
				name string
				typ  reflect.Type
			}{{"Interval", durType}, {"MaxInterval", durType}, {"Progress", reflect.FuncOf([]reflect.Type{state}, nil, false)}} {
				if sf, ok := opts.FieldByName(f.name); !ok || sf.Type != f.typ {
					t.Errorf("%s: %v.%s is not a %v", name, opts, f.name, f.typ)
				}
			}
		}
	}
	if waits < 2 { // WaitView, WaitExecution
		t.Errorf("found %d waits, want at least 2", waits)
	}
}

// TestOneSuffixPerRole: what a call puts on the wire is an XParams, how
// the SDK behaves an XOptions, an answer an XResult or a plain noun; no
// exported type ends in another role suffix (SubscribeRequest,
// TokenResponse, ...). The pipeline package core is checked too; its
// core.Request (one HTTP exchange a service describes, as net/http's
// Request) and core.Config (what every request of a core.Client shares)
// are the pipeline's own vocabulary, not a call's parameters.
func TestOneSuffixPerRole(t *testing.T) {
	t.Parallel()
	bad := []string{"Request", "Response", "Config", "Opts", "Args", "Input", "Output", "Record", "Req", "Resp"}
	pipeline := map[string]bool{"core.Request": true, "core.Config": true}
	for _, dir := range []string{".", "core", "oauth", "scim", "users", "reports", "objects", "bulk", "events"} {
		p, err := packageDoc(dir)
		if err != nil || p == nil {
			t.Fatal(dir, err)
		}
		for _, typ := range p.Types {
			if pipeline[p.Name+"."+typ.Name] {
				continue
			}
			for _, b := range bad {
				if strings.HasSuffix(typ.Name, b) {
					t.Errorf("%s.%s: use Params (wire), Options (SDK behaviour) or Result (answer), not %s", p.Name, typ.Name, b)
				}
			}
			// CallOptions: how the pipeline treats one call (retries, attempt
			// timeout, capture); its Header adds to the request what the
			// caller's own infrastructure wants, never an operation's parameter.
			// scim.ListOptions: where a listing resumes and where it stands,
			// as ExportOptions does for an export.
			known := map[string]bool{"WaitOptions": true, "ExportOptions": true, "CallOptions": true, "ListOptions": p.Name == "scim", "Options": p.Name == "oauth"}
			if strings.HasSuffix(typ.Name, "Options") && !known[typ.Name] {
				t.Errorf("%s.%s: a new Options type; check that it holds SDK behaviour, not wire values, and add it here", p.Name, typ.Name)
			}
		}
	}
}

// packageDoc is the documentation of the package in dir: its Go files
// that the default build context builds, test files left out, parsed
// for it (go/doc changes them). It is nil when dir holds no such file.
func packageDoc(dir string) (*doc.Package, error) {
	fset := token.NewFileSet()
	files, err := gosrc.PackageFiles(fset, dir, parser.ParseComments)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	return doc.NewFromFiles(fset, files, dir)
}
