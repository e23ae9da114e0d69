package contract_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/contract"
)

// sdkPackages are the directories, from the module's root, of the
// packages whose requests go to the service.
var sdkPackages = []string{".", "oauth", "scim", "users", "reports", "objects", "bulk", "events"}

// sdkOp is one request of the SDK as its source writes it: the operation
// name it carries (core.Request.Op), its method and path template ("" for
// a request to an absolute URL the service handed out), and where.
type sdkOp struct {
	op, method, template string
	pos                  string
}

// sdkOperations finds every core.Request literal in the SDK's packages
// and returns its Op, Method and path template (Path, or the template of
// Route: core.PathOf(...)). A value passed in as a parameter of the
// enclosing function is read from each call of that function in the
// package. A literal whose values cannot be read so fails t: write them
// as literals or constants.
func sdkOperations(t *testing.T) []sdkOp {
	t.Helper()
	var out []sdkOp
	for _, dir := range sdkPackages {
		out = append(out, scanPackage(t, filepath.Join("..", "..", "..", dir))...)
	}
	if len(out) < 30 {
		t.Fatalf("found only %d SDK requests", len(out))
	}
	return out
}

// pkgScan is one parsed package.
type pkgScan struct {
	t      *testing.T
	fset   *token.FileSet
	files  []*ast.File
	consts map[string]ast.Expr // package-level constants
}

// parsePackage parses the non-test Go files of dir and records its
// package-level constants.
func parsePackage(t *testing.T, dir string) *pkgScan {
	t.Helper()
	p := &pkgScan{t: t, fset: token.NewFileSet(), consts: map[string]ast.Expr{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if name := e.Name(); !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(p.fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		p.files = append(p.files, f)
		p.addConsts(f)
	}
	return p
}

func (p *pkgScan) addConsts(f *ast.File) {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i < len(vs.Values) {
					p.consts[n.Name] = vs.Values[i]
				}
			}
		}
	}
}

func scanPackage(t *testing.T, dir string) []sdkOp {
	t.Helper()
	p := parsePackage(t, dir)
	var out []sdkOp
	for _, f := range p.files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if cl, ok := n.(*ast.CompositeLit); ok && isCoreRequest(cl.Type) {
					out = append(out, p.request(fn, cl)...)
				}
				return true
			})
		}
	}
	return out
}

func isCoreRequest(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Request" {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "core"
}

func stringLit(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(bl.Value)
	return s, err == nil
}

// request reads the Op, Method and path template of cl, inside fn.
func (p *pkgScan) request(fn *ast.FuncDecl, cl *ast.CompositeLit) []sdkOp {
	fields := map[string]ast.Expr{}
	for _, el := range cl.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok {
				fields[k.Name] = kv.Value
			}
		}
	}
	pos := p.fset.Position(cl.Pos()).String()
	tmpl := fields["Path"]
	if call, ok := fields["Route"].(*ast.CallExpr); ok && len(call.Args) > 0 {
		tmpl = call.Args[0]
	}
	// Each way to call fn gives the values of its parameters: one way
	// when none of the three is a parameter.
	var out []sdkOp
	for _, args := range p.bindings(fn, fields["Op"], fields["Method"], tmpl) {
		if op, err := p.read(fields, tmpl, args); err != nil {
			p.t.Errorf("%s: %v", pos, err)
		} else {
			op.pos = pos
			out = append(out, op)
		}
	}
	return out
}

// read reads one request's values with fn's parameters bound to args.
func (p *pkgScan) read(fields map[string]ast.Expr, tmpl ast.Expr, args map[string]ast.Expr) (sdkOp, error) {
	var op sdkOp
	var ok bool
	if op.op, ok = p.value(fields["Op"], args); !ok {
		return op, fmt.Errorf("cannot read the Op of this core.Request: write it as a string literal")
	}
	toURL := fields["URL"] != nil
	if op.method, ok = p.value(fields["Method"], args); !ok && !toURL {
		return op, fmt.Errorf("%s: cannot read the Method of this core.Request", op.op)
	} // toward a URL the service handed out, the method may be chosen at run time
	switch {
	case tmpl != nil:
		if op.template, ok = p.value(tmpl, args); !ok {
			return op, fmt.Errorf("%s: cannot read the path template of this core.Request", op.op)
		}
	case !toURL:
		return op, fmt.Errorf("%s: a core.Request with neither Path, Route nor URL", op.op)
	}
	return op, nil
}

// bindings returns, for each call of fn in the package, its parameters
// bound to the arguments the call passes, when one of exprs is a
// parameter of fn; else one empty binding.
func (p *pkgScan) bindings(fn *ast.FuncDecl, exprs ...ast.Expr) []map[string]ast.Expr {
	params, n := paramIndex(fn)
	if !slices.ContainsFunc(exprs, func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		_, param := params[ident(id, ok)]
		return param
	}) {
		return []map[string]ast.Expr{{}}
	}
	var out []map[string]ast.Expr
	for _, call := range p.callsOf(fn.Name.Name, n) {
		b := map[string]ast.Expr{}
		for name, k := range params {
			b[name] = call.Args[k]
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		p.t.Errorf("%s: %s takes its request's values as parameters but is never called", p.fset.Position(fn.Pos()), fn.Name.Name)
	}
	return out
}

func ident(id *ast.Ident, ok bool) string {
	if !ok {
		return ""
	}
	return id.Name
}

// paramIndex maps fn's named parameters to their positions, and counts
// them.
func paramIndex(fn *ast.FuncDecl) (map[string]int, int) {
	params := map[string]int{}
	i := 0
	for _, f := range fn.Type.Params.List {
		if len(f.Names) == 0 {
			i++
		}
		for _, n := range f.Names {
			params[n.Name] = i
			i++
		}
	}
	return params, i
}

// callsOf returns the calls in the package of a function or method named
// name with n arguments.
func (p *pkgScan) callsOf(name string, n int) []*ast.CallExpr {
	var out []*ast.CallExpr
	for _, f := range p.files {
		ast.Inspect(f, func(node ast.Node) bool {
			call, ok := node.(*ast.CallExpr)
			if ok && len(call.Args) == n && calleeName(call.Fun) == name {
				out = append(out, call)
			}
			return true
		})
	}
	return out
}

func calleeName(fun ast.Expr) string {
	switch fun := fun.(type) {
	case *ast.Ident:
		return fun.Name
	case *ast.SelectorExpr:
		return fun.Sel.Name
	}
	return ""
}

// value reads e as a string: a literal, a package constant, http.MethodX,
// or a parameter bound in args.
func (p *pkgScan) value(e ast.Expr, args map[string]ast.Expr) (string, bool) {
	switch v := e.(type) {
	case *ast.BasicLit:
		return stringLit(v)
	case *ast.Ident:
		if a, ok := args[v.Name]; ok {
			return p.value(a, nil)
		}
		if c, ok := p.consts[v.Name]; ok {
			return p.value(c, nil)
		}
	case *ast.BinaryExpr:
		x, okx := p.value(v.X, args)
		y, oky := p.value(v.Y, args)
		return x + y, okx && oky && v.Op == token.ADD
	case *ast.SelectorExpr:
		if x, ok := v.X.(*ast.Ident); ok && x.Name == "http" && strings.HasPrefix(v.Sel.Name, "Method") {
			return strings.ToUpper(strings.TrimPrefix(v.Sel.Name, "Method")), true
		}
	}
	return "", false
}

// contractOps maps each Op the contract's x-sdk-ops list to the
// operations (method and path) that list it.
func contractOps(t *testing.T) map[string][]operation {
	t.Helper()
	c, err := contract.LoadReference()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]operation{}
	for path, item := range c.Doc().Paths.Map() {
		for method, op := range item.Operations() {
			list, _ := op.Extensions["x-sdk-ops"].([]any)
			_, noSDK := op.Extensions["x-no-sdk"]
			switch {
			case noSDK && len(list) > 0:
				t.Errorf("%s (%s %s): x-no-sdk beside x-sdk-ops", op.OperationID, method, path)
			case !noSDK && len(list) == 0:
				t.Errorf("%s (%s %s): no x-sdk-ops", op.OperationID, method, path)
			}
			for _, name := range list {
				s, _ := name.(string)
				out[s] = append(out[s], operation{id: op.OperationID, method: method, path: path, fakeOnly: op.Extensions["x-fake-extension"] != nil})
			}
		}
	}
	return out
}

// TestEverySDKOperationIsInTheContract goes from the SDK to the contract:
// every Op the SDK's requests carry is listed in x-sdk-ops of an
// operation of api/openapi.yaml whose method and path are the request's
// (the path template written exactly as the contract writes it), and the
// fake routes it; every Op the contract lists is one the SDK sends. An
// SDK operation added alone fails here with its name.
func TestEverySDKOperationIsInTheContract(t *testing.T) {
	listed := contractOps(t)
	f := fake.New()
	defer f.Close()
	sent := map[string]bool{}
	for _, s := range sdkOperations(t) {
		sent[s.op] = true
		if s.template != "" {
			rec := httptest.NewRecorder()
			f.ServeHTTP(rec, httptest.NewRequest(s.method, fillPath(s.template), nil))
			if noRoute(rec) {
				t.Errorf("SDK operation %s: the fake has no route %s %s (answered %d %q)", s.op, s.method, s.template, rec.Code, rec.Body.String())
			}
		}
		ops := listed[s.op]
		if len(ops) == 0 {
			t.Errorf("SDK operation %s (%s %s, %s) is in no operation's x-sdk-ops in api/openapi.yaml", s.op, s.method, s.template, s.pos)
			continue
		}
		if s.template == "" { // an absolute URL the service handed out
			if !slices.ContainsFunc(ops, func(o operation) bool { return o.fakeOnly }) {
				t.Errorf("SDK operation %s (%s, to a URL) is listed only under operations of the service: %v", s.op, s.pos, ops)
			}
			continue
		}
		if !slices.ContainsFunc(ops, func(o operation) bool { return o.method == s.method && o.path == s.template }) {
			t.Errorf("SDK operation %s sends %s %s (%s), not what api/openapi.yaml lists it under: %v", s.op, s.method, s.template, s.pos, ops)
		}
	}
	for op := range listed {
		if !sent[op] {
			t.Errorf("api/openapi.yaml lists %s in x-sdk-ops, but no SDK request carries it", op)
		}
	}
}

// fillPath puts a value of the right type in each placeholder of a path
// template.
func fillPath(template string) string {
	path := strings.NewReplacer("{reportId}", "1", "{viewId}", "1").Replace(template)
	for _, p := range []string{"{user_id}", "{id}", "{object_id}", "{integration_id}", "{subscriber_id}", "{event}"} {
		path = strings.ReplaceAll(path, p, "x")
	}
	return path
}

// TestFakeRoutesAreTheContractsPaths: every operation of the contract is
// a route pattern of the fake written the same way, placeholder names
// included ("POST /report/v1/{reportId}/data"), so that the path template
// the SDK, the contract and the fake each write cannot drift apart
// without a test naming it.
func TestFakeRoutesAreTheContractsPaths(t *testing.T) {
	patterns := fakePatterns(t)
	for _, op := range operations(t) {
		if !patterns[op.method+" "+op.path] && !patterns[op.path] {
			t.Errorf("%s: the fake registers no route pattern %q", op.id, op.method+" "+op.path)
		}
	}
}

// fakePatterns returns the route patterns the fake registers with its
// handle helpers, read from its source.
func fakePatterns(t *testing.T) map[string]bool {
	t.Helper()
	p := parsePackage(t, filepath.Join("..", "..", "..", "fake"))
	out := map[string]bool{}
	for _, f := range p.files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 || !strings.HasPrefix(calleeName(call.Fun), "handle") {
				return true
			}
			if s, ok := p.value(call.Args[0], nil); ok && strings.HasPrefix(strings.TrimLeft(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ "), "/") {
				out[s] = true
			}
			return true
		})
	}
	if len(out) < 30 {
		t.Fatalf("found only %d route patterns in the fake: %v", len(out), out)
	}
	return out
}

// String is the operation as a message names it.
func (o operation) String() string { return fmt.Sprintf("%s (%s %s)", o.id, o.method, o.path) }
