package repocheck

// The record of the exported API (api/v1.txt): one line per identifier
// of the module's public packages, in the style of the Go project's
// api/go1.N.txt, computed from the compiler's export data (listing), so
// the packages are read as they build:
//
//	pkg github.com/partnerapi/partner-go/scim, func (*Service) Get(context.Context, string) (*User, error)
//
// A name whose doc comment has a paragraph that begins "Deprecated: " has
// a second line that says so, as the Go project's record does:
//
//	pkg github.com/partnerapi/partner-go/bulk, const Running //deprecated

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"slices"
	"strings"

	"github.com/partnerapi/partner-go/internal/testkit/gosrc"
)

// apiPublic reports whether the package path is part of the recorded API:
// packages under cmd/, examples/ and internal/ are not.
func apiPublic(path string) bool {
	rel, ok := strings.CutPrefix(path, modulePath)
	if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
		return false
	}
	for seg := range strings.SplitSeq(rel, "/") {
		switch seg {
		case "cmd", "examples", "internal", "testdata":
			return false
		}
	}
	return true
}

// apiRecordLines returns the sorted API lines of the module's public
// packages in pkgs (programs aside).
func apiRecordLines(pkgs map[string]*listedPackage) ([]string, error) {
	imp := exportImporter(token.NewFileSet(), pkgs)
	var lines []string
	for _, path := range slices.Sorted(maps.Keys(pkgs)) {
		if !apiPublic(path) || pkgs[path].Name == "main" {
			continue
		}
		pkg, err := imp.Import(path)
		if err != nil {
			return nil, err
		}
		lines = append(lines, apiLines(pkg)...)
		dep, err := deprecatedLines(path)
		if err != nil {
			return nil, err
		}
		lines = append(lines, dep...)
	}
	slices.Sort(lines)
	return slices.Compact(lines), nil
}

// apiLines returns the API lines of pkg's exported names.
func apiLines(pkg *types.Package) []string {
	w := &apiWriter{pkg: pkg, prefix: "pkg " + pkg.Path() + ", "}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Const:
			if b, ok := obj.Type().(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
				w.add("const %s = %s", name, obj.Val().ExactString())
			} else {
				w.add("const %s %s = %s", name, w.typ(obj.Type()), obj.Val().ExactString())
			}
		case *types.Var:
			w.add("var %s %s", name, w.typ(obj.Type()))
		case *types.Func:
			w.add("func %s%s", name, w.signature(obj.Type().(*types.Signature)))
		case *types.TypeName:
			w.typeName(obj)
		}
	}
	return w.lines
}

type apiWriter struct {
	pkg    *types.Package
	prefix string
	lines  []string
}

func (w *apiWriter) add(format string, args ...any) {
	w.lines = append(w.lines, w.prefix+fmt.Sprintf(format, args...))
}

// qualify names other packages by their name, as source code does.
func (w *apiWriter) qualify(p *types.Package) string {
	if p == w.pkg {
		return ""
	}
	return p.Name()
}

func (w *apiWriter) typ(t types.Type) string { return types.TypeString(t, w.qualify) }

// signature is a function's parameters and results, without names.
func (w *apiWriter) signature(sig *types.Signature) string {
	var b strings.Builder
	if tp := sig.TypeParams(); tp != nil {
		b.WriteString(w.typeParams(tp))
	}
	b.WriteString("(")
	for i := range sig.Params().Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		t := sig.Params().At(i).Type()
		if sig.Variadic() && i == sig.Params().Len()-1 {
			b.WriteString("..." + w.typ(t.(*types.Slice).Elem()))
			continue
		}
		b.WriteString(w.typ(t))
	}
	b.WriteString(")")
	switch res := sig.Results(); res.Len() {
	case 0:
	case 1:
		b.WriteString(" " + w.typ(res.At(0).Type()))
	default:
		parts := make([]string, res.Len())
		for i := range parts {
			parts[i] = w.typ(res.At(i).Type())
		}
		b.WriteString(" (" + strings.Join(parts, ", ") + ")")
	}
	return b.String()
}

func (w *apiWriter) typeParams(tp *types.TypeParamList) string {
	parts := make([]string, tp.Len())
	for i := range parts {
		p := tp.At(i)
		parts[i] = p.Obj().Name() + " " + w.typ(p.Constraint())
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// typeName adds a type's line, then its fields or methods, then the
// methods declared on it.
func (w *apiWriter) typeName(obj *types.TypeName) {
	name := obj.Name()
	if obj.IsAlias() {
		rhs := obj.Type()
		if a, ok := rhs.(*types.Alias); ok {
			rhs = a.Rhs()
		}
		w.add("type %s = %s", name, w.typ(rhs))
		return
	}
	named, ok := obj.Type().(*types.Named)
	if !ok {
		return
	}
	if tp := named.TypeParams(); tp != nil {
		name += w.typeParams(tp)
	}
	switch u := named.Underlying().(type) {
	case *types.Struct:
		w.add("type %s struct", name)
		w.fields(name, u)
	case *types.Interface:
		w.add("type %s interface", name)
		w.interfaceMethods(name, u)
	default:
		w.add("type %s %s", name, w.typ(u))
	}
	for m := range named.Methods() {
		if !m.Exported() {
			continue
		}
		sig := m.Type().(*types.Signature)
		recv := obj.Name()
		if _, ptr := sig.Recv().Type().(*types.Pointer); ptr {
			recv = "*" + recv
		}
		w.add("func (%s) %s%s", recv, m.Name(), w.signature(sig))
	}
}

func (w *apiWriter) fields(name string, s *types.Struct) {
	for f := range s.Fields() {
		if !f.Exported() {
			continue
		}
		if f.Embedded() {
			w.add("type %s struct, embedded %s", name, w.typ(f.Type()))
			continue
		}
		w.add("type %s struct, %s %s", name, f.Name(), w.typ(f.Type()))
	}
}

func (w *apiWriter) interfaceMethods(name string, it *types.Interface) {
	for etyp := range it.EmbeddedTypes() {
		w.add("type %s interface, embedded %s", name, w.typ(etyp))
	}
	for m := range it.ExplicitMethods() {
		if m.Exported() {
			w.add("type %s interface, %s%s", name, m.Name(), w.signature(m.Type().(*types.Signature)))
		} else {
			w.add("type %s interface, unexported methods", name)
		}
	}
}

// apiKey is the identifier a line is about, without what is said of it: the
// line up to the name of the constant, variable, type, field, method or
// function. Two lines with one key and different text are a change.
func apiKey(line string) string {
	rest, ok := strings.CutPrefix(line, "pkg ")
	if !ok {
		return line
	}
	pkg, decl, ok := strings.Cut(rest, ", ")
	if !ok {
		return line
	}
	head := "pkg " + pkg + ", "
	switch {
	case strings.HasPrefix(decl, "func ("):
		recv, after, _ := strings.Cut(decl, ") ")
		// A method moving between value and pointer receiver is a change.
		return head + strings.Replace(recv, "*", "", 1) + ") " + apiIdent(after)
	case strings.HasPrefix(decl, "func "):
		return head + "func " + apiIdent(decl[len("func "):])
	case strings.HasPrefix(decl, "type "):
		name, member, isMember := strings.Cut(decl[len("type "):], ", ")
		typeName := apiIdent(name)
		if isMember {
			return head + "type " + typeName + ", " + apiIdent(member) + apiMember0(member)
		}
		return head + "type " + typeName
	}
	kind, after, _ := strings.Cut(decl, " ")
	return head + kind + " " + apiIdent(after)
}

// apiMember0 keeps the name after "embedded" in an embedded member's key.
func apiMember0(member string) string {
	if f := strings.Fields(member); len(f) > 1 && f[0] == "embedded" {
		return " " + f[1]
	}
	return ""
}

// apiIdent is the identifier at the start of s.
func apiIdent(s string) string {
	end := strings.IndexFunc(s, func(r rune) bool { return r == ' ' || r == '(' || r == '[' })
	if end < 0 {
		return s
	}
	return s[:end]
}

// apiDiff compares the recorded lines with the current ones and describes
// each identifier added, removed or changed, sorted.
func apiDiff(recorded, current []string) []string {
	rec, cur := byapiKey(recorded), byapiKey(current)
	var out []string
	for k, line := range rec {
		switch now, ok := cur[k]; {
		case !ok:
			out = append(out, "removed: "+line)
		case now != line:
			out = append(out, "changed: "+line+"\n      to: "+now)
		}
	}
	for k, line := range cur {
		if _, ok := rec[k]; !ok {
			out = append(out, "added:   "+line)
		}
	}
	slices.Sort(out)
	return out
}

func byapiKey(lines []string) map[string]string {
	m := make(map[string]string, len(lines))
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			m[apiKey(l)] = l
		}
	}
	return m
}

// deprecatedLines returns a line for each exported name of the package
// path whose doc comment has a "Deprecated: " paragraph: its constants,
// variables, functions, types, methods and struct fields. They are read
// from the package's source (export data keeps no comments).
func deprecatedLines(path string) ([]string, error) {
	files, err := gosrc.PackageFiles(token.NewFileSet(), "."+strings.TrimPrefix(path, modulePath), parser.ParseComments)
	if err != nil {
		return nil, err
	}
	prefix := "pkg " + path + ", "
	var lines []string
	for _, f := range files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if l := funcDeprecation(d); l != "" {
					lines = append(lines, prefix+l+" //deprecated")
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					lines = append(lines, specDeprecations(prefix, d, spec)...)
				}
			}
		}
	}
	return lines, nil
}

// funcDeprecation is the record's text of a deprecated exported function or
// method of an exported type (without the package prefix), or "".
func funcDeprecation(d *ast.FuncDecl) string {
	if !d.Name.IsExported() || !deprecated(d.Doc) {
		return ""
	}
	if d.Recv == nil {
		return "func " + d.Name.Name
	}
	if recv := recvName(d.Recv.List[0].Type); ast.IsExported(strings.TrimPrefix(recv, "*")) {
		return fmt.Sprintf("method (%s) %s", recv, d.Name.Name)
	}
	return ""
}

// specDeprecations returns the deprecation lines of one spec of d: a
// spec's own doc, or the declaration's when it is the only spec.
func specDeprecations(prefix string, d *ast.GenDecl, spec ast.Spec) []string {
	var lines []string
	line := func(s string) { lines = append(lines, prefix+s+" //deprecated") }
	docOf := func(own *ast.CommentGroup) *ast.CommentGroup {
		if own == nil && len(d.Specs) == 1 {
			return d.Doc
		}
		return own
	}
	switch sp := spec.(type) {
	case *ast.ValueSpec:
		kind := map[token.Token]string{token.CONST: "const", token.VAR: "var"}[d.Tok]
		for _, n := range sp.Names {
			if n.IsExported() && deprecated(docOf(sp.Doc)) {
				line(kind + " " + n.Name)
			}
		}
	case *ast.TypeSpec:
		if !sp.Name.IsExported() {
			return nil
		}
		if deprecated(docOf(sp.Doc)) {
			line("type " + sp.Name.Name)
		}
		st, ok := sp.Type.(*ast.StructType)
		if !ok {
			return lines
		}
		for _, field := range st.Fields.List {
			for _, n := range field.Names {
				if n.IsExported() && deprecated(field.Doc) {
					line("type " + sp.Name.Name + " struct, " + n.Name)
				}
			}
		}
	}
	return lines
}

// recvName is a method receiver's type as the record writes it: T or *T.
func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return "*" + recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// deprecated reports whether a doc comment has a paragraph that begins
// "Deprecated: ", the Go convention.
func deprecated(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	for para := range strings.SplitSeq(doc.Text(), "\n\n") {
		if strings.HasPrefix(para, "Deprecated: ") {
			return true
		}
	}
	return false
}
