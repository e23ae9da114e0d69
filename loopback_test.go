package partner_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/internal/testkit/gosrc"
)

// loopbackAllowed lists the functions of the module's non-test sources
// that may ask whether an address is a loopback address, and why. No
// behaviour of the SDK may depend on whether the base URL is one, except
// the plain-http rule: a test against the fake must take the path
// production takes, and a client behind a sidecar proxy on 127.0.0.1 must
// not be taken for a test.
var loopbackAllowed = map[string]string{
	"internal/check/plainhttp.go:IsLoopback":             "the plain-http rule's definition of this machine",
	"internal/check/plainhttp.go:PlainHTTPRefused":       "the plain-http rule",
	"core/plainhttp.go:TowardLoopback":                   "deprecated, kept for v1; nothing calls it",
	"fake/events_self.go:selfIP":                         "the fake refuses a callback URL aimed at its own listener (the callback's address, not a client's base URL)",
	"internal/fakeserver/fakehttp/hosts.go:LoopbackHost": "a fake on a loopback listener answers a loopback Host only (the request's Host, not a client's base URL)",
	"internal/fakeserver/fakehttp/hosts.go:LoopbackAddr": "whether the fake's own listener is a loopback one",
	"internal/fakeserver/fakeadmin/admin.go:loopback":    "partnerfake's admin API serves loopback clients only (the caller's address)",
	"fake/authorize.go:redirectAllowed":                  "the fake's sign-in redirects to a loopback redirect_uri without its registration, as RFC 8252 7.3 lets native applications use (the redirect's address, not a client's base URL)",
}

// loopbackCalls returns "file:func" of each call in f, the file name, to
// a function or method named IsLoopback or TowardLoopback, by the name of
// the function declaration around it.
func loopbackCalls(name string, f *ast.File) []string {
	var found []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		ast.Inspect(fn, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var id string
			switch fun := call.Fun.(type) {
			case *ast.Ident:
				id = fun.Name
			case *ast.SelectorExpr:
				id = fun.Sel.Name
			}
			if id == "IsLoopback" || id == "TowardLoopback" {
				found = append(found, name+":"+fn.Name.Name)
			}
			return true
		})
	}
	for _, d := range f.Decls { // a package-level var initialised by a call
		if g, ok := d.(*ast.GenDecl); ok {
			ast.Inspect(g, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && (sel.Sel.Name == "IsLoopback" || sel.Sel.Name == "TowardLoopback") {
					found = append(found, name+":(package level)")
				}
				return true
			})
		}
	}
	return found
}

// TestNoLoopbackDecisions: no non-test source of the module asks whether
// an address is a loopback address (IsLoopback, TowardLoopback) outside
// the plain-http rule and the few places loopbackAllowed names, each for
// an address that is not the client's base URL or for a default only.
func TestNoLoopbackDecisions(t *testing.T) {
	t.Parallel()
	paths, err := gosrc.GoFiles(".", nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := gosrc.Parse(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range loopbackCalls(filepath.ToSlash(p), f) {
			seen[c] = true
			if _, ok := loopbackAllowed[c]; !ok {
				t.Errorf("%s asks whether an address is a loopback address: no behaviour may depend on it but the plain-http rule (check.PlainHTTPRefused); name the deployment's words explicitly (deployment.Words)", c)
			}
		}
	}
	// The scan sees what it must: each allowed place still asks (else the
	// entry is stale, or the scan finds nothing).
	for place := range loopbackAllowed {
		if !seen[place] {
			t.Errorf("loopbackAllowed names %s, which no longer asks: remove the entry", place)
		}
	}
}

// TestLoopbackCallsFinds: the scan finds a decision on the base URL of
// the kind the SDK had (objects.Audit's stand-in default, partner.New's
// environment check), by the function it sits in.
func TestLoopbackCallsFinds(t *testing.T) {
	src := `package objects
func (s *Service) Audit() { if s.t.TowardLoopback() { println() } }
func local(h string) bool { return !check.IsLoopback(h) }
func fine() bool { return check.PlainHTTPRefused(nil, false) }
`
	f, err := parser.ParseFile(token.NewFileSet(), "objects/service.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := loopbackCalls("objects/service.go", f)
	want := []string{"objects/service.go:Audit", "objects/service.go:local"}
	if !slices.Equal(got, want) {
		t.Fatalf("found %v, want %v", got, want)
	}
}
