package contract

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// document is the contract as the Checker applies it.
type document struct {
	// paths in the order a request path is matched against them: fewer
	// variables first, then by descending template (kin-openapi's
	// Paths.InMatchingOrder, which its router follows).
	paths []*pathItem
	// components are the schemas of components/schemas, by name.
	components []*schema
	ext        map[string]any
}

// pathItem is a path template and its operations.
type pathItem struct {
	template string
	re       *regexp.Regexp // the template, each variable one path segment
	vars     []string       // the variables, in the order of re's groups
	ops      map[string]*operation
}

// operation is one method of a path.
type operation struct {
	id     string
	path   *pathItem
	ext    map[string]any
	params []*parameter
	// security lists the alternatives of which a request must meet one,
	// each the names of the schemes it must meet; none means no check.
	security  [][]string
	body      *requestBody // nil when the operation declares none
	responses map[string]*response
}

// parameter is a parameter of an operation.
type parameter struct {
	name, in string
	required bool
	schema   *schema
}

// requestBody is the body an operation accepts.
type requestBody struct {
	required bool
	content  []*mediaType
}

// response is one declared answer.
type response struct {
	ext     map[string]any
	content []*mediaType
	// headers are the answer's headers, Content-Type aside (kin-openapi
	// ignores it), in name order, each read as a header parameter.
	headers []*parameter
}

// methods are the operations of a Path Item, by member name.
var methods = map[string]string{"get": "GET", "put": "PUT", "post": "POST", "delete": "DELETE",
	"patch": "PATCH", "head": "HEAD", "options": "OPTIONS", "trace": "TRACE"}

// parseDocument reads the JSON form of a contract, and returns every
// schema it holds besides.
func parseDocument(raw []byte) (*document, []*schema, error) {
	root, err := decodeDocument(raw)
	if err != nil {
		return nil, nil, err
	}
	p := &parser{root: root, schemas: map[string]*schema{}}
	d, err := p.document()
	return d, p.all, err
}

// document reads the parser's document.
func (p *parser) document() (*document, error) {
	if v, _ := str(p.root, "openapi", "the document"); !strings.HasPrefix(v, "3.0.") {
		return nil, fmt.Errorf("openapi %q: the checker reads OpenAPI 3.0 documents", v)
	}
	if err := checkServers(p.root["servers"]); err != nil {
		return nil, err
	}
	d := &document{ext: extensions(p.root)}
	if err := p.readComponents(d); err != nil {
		return nil, err
	}
	global, err := p.security(p.root["security"], "security")
	if err != nil {
		return nil, err
	}
	paths, ok := p.root["paths"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("paths: not an object")
	}
	for _, tmpl := range slices.Sorted(maps.Keys(paths)) {
		if strings.HasPrefix(tmpl, "x-") {
			continue
		}
		item, err := p.pathItem(tmpl, paths[tmpl], global)
		if err != nil {
			return nil, err
		}
		d.paths = append(d.paths, item)
	}
	slices.SortStableFunc(d.paths, func(a, b *pathItem) int {
		return cmp.Or(cmp.Compare(len(a.vars), len(b.vars)), cmp.Compare(b.template, a.template))
	})
	return d, nil
}

// checkServers accepts the servers the checker's routing assumes: none,
// or the one at "/".
func checkServers(v any) error {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if ok && len(list) == 1 {
		if m, err := object(list[0], "servers/0", "url", "description"); err == nil && m["url"] == "/" {
			return nil
		}
	}
	return fmt.Errorf("servers: the checker routes only a document served at \"/\"")
}

// readComponents reads every schema and parameter of the components,
// used or not, and refuses kinds of components the checker does not
// read.
func (p *parser) readComponents(d *document) error {
	if v, ok := p.root["components"]; ok {
		if _, err := object(v, "components", "schemas", "parameters", "securitySchemes"); err != nil {
			return err
		}
	}
	schemas := p.components("schemas")
	for _, name := range slices.Sorted(maps.Keys(schemas)) {
		s, err := p.schemaRef("#/components/schemas/"+name, "components")
		if err != nil {
			return err
		}
		d.components = append(d.components, s)
	}
	params := p.components("parameters")
	for _, name := range slices.Sorted(maps.Keys(params)) {
		if _, err := p.parameter(params[name], "components/parameters/"+name); err != nil {
			return err
		}
	}
	return nil
}

// security reads a list of Security Requirement Objects; nil when v is
// absent. Every scheme named must be an HTTP bearer scheme.
func (p *parser) security(v any, where string) ([][]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: not a list", where)
	}
	out := [][]string{}
	for _, e := range list {
		req, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: a security requirement is not an object", where)
		}
		names := slices.Sorted(maps.Keys(req))
		for _, name := range names {
			if err := p.bearerScheme(name, where); err != nil {
				return nil, err
			}
		}
		out = append(out, names)
	}
	return out, nil
}

// bearerScheme checks that the scheme named is declared, as a bearer
// token in Authorization.
func (p *parser) bearerScheme(name, where string) error {
	raw, ok := p.components("securitySchemes")[name]
	if !ok {
		return fmt.Errorf("%s: security scheme %q is not declared", where, name)
	}
	m, err := object(raw, "components/securitySchemes/"+name, "type", "scheme", "bearerFormat", "description", "in", "name")
	if err != nil {
		return err
	}
	if m["type"] != "http" || !strings.EqualFold(fmt.Sprint(m["scheme"]), "bearer") {
		return fmt.Errorf("%s: security scheme %q: the checker checks only bearer tokens (type http, scheme bearer)", where, name)
	}
	return nil
}

// pathVar is a variable of a path template.
var pathVar = regexp.MustCompile(`\{[^{}]*\}`)

// pathItem reads the Path Item of template.
func (p *parser) pathItem(template string, v any, global [][]string) (*pathItem, error) {
	where := "paths/" + template
	m, err := object(v, where, "parameters", "summary", "description", "get", "put", "post", "delete", "patch", "head", "options", "trace")
	if err != nil {
		return nil, err
	}
	item, err := newPathItem(template)
	if err != nil {
		return nil, err
	}
	shared, err := p.parameters(m["parameters"], where)
	if err != nil {
		return nil, err
	}
	item.ops = map[string]*operation{}
	for name, method := range methods {
		if raw, ok := m[name]; ok {
			op, err := p.operation(item, raw, where+"/"+name, shared, global)
			if err != nil {
				return nil, err
			}
			item.ops[method] = op
		}
	}
	return item, nil
}

// newPathItem compiles a template as the router matches it: literal
// text, and each {variable} one path segment, not empty (gorilla/mux's
// default), matched on the request's escaped path.
func newPathItem(template string) (*pathItem, error) {
	if !strings.HasPrefix(template, "/") || strings.Count(template, "{") != strings.Count(template, "}") {
		return nil, fmt.Errorf("paths: %q is not a path template", template)
	}
	item := &pathItem{template: template}
	var re strings.Builder
	re.WriteString("^")
	last := 0
	for _, loc := range pathVar.FindAllStringIndex(template, -1) {
		name := template[loc[0]+1 : loc[1]-1]
		if name == "" || strings.Contains(name, ":") {
			return nil, fmt.Errorf("paths: %q: variable {%s} is not understood by the checker", template, name)
		}
		re.WriteString(regexp.QuoteMeta(template[last:loc[0]]))
		re.WriteString("([^/]+)")
		item.vars = append(item.vars, name)
		last = loc[1]
	}
	re.WriteString(regexp.QuoteMeta(template[last:]) + "$")
	item.re = regexp.MustCompile(re.String())
	return item, nil
}

// operation reads an Operation Object; shared are the parameters of its
// Path Item.
func (p *parser) operation(item *pathItem, v any, where string, shared []*parameter, global [][]string) (*operation, error) {
	m, err := object(v, where, "operationId", "summary", "description", "parameters", "requestBody", "responses", "security", "tags", "deprecated")
	if err != nil {
		return nil, err
	}
	op := &operation{path: item, ext: extensions(m)}
	if op.id, err = str(m, "operationId", where); err != nil {
		return nil, err
	}
	own, err := p.parameters(m["parameters"], where)
	if err != nil {
		return nil, err
	}
	// The Path Item's parameters first, but those the operation overrides.
	for _, s := range shared {
		if !slices.ContainsFunc(own, func(o *parameter) bool { return o.in == s.in && o.name == s.name }) {
			op.params = append(op.params, s)
		}
	}
	op.params = append(op.params, own...)
	if err := checkPathParams(item, op.params, where); err != nil {
		return nil, err
	}
	if op.security, err = p.security(m["security"], where+"/security"); err != nil {
		return nil, err
	}
	if op.security == nil {
		op.security = global
	}
	if raw, ok := m["requestBody"]; ok {
		if op.body, err = p.requestBody(raw, where+"/requestBody"); err != nil {
			return nil, err
		}
	}
	op.responses, err = p.responses(m["responses"], where+"/responses")
	return op, err
}

// checkPathParams: each variable of the template is a required path
// parameter, and each path parameter a variable.
func checkPathParams(item *pathItem, params []*parameter, where string) error {
	for _, v := range item.vars {
		if !slices.ContainsFunc(params, func(p *parameter) bool { return p.in == "path" && p.name == v && p.required }) {
			return fmt.Errorf("%s: no required path parameter %s", where, v)
		}
	}
	for _, p := range params {
		if p.in == "path" && !slices.Contains(item.vars, p.name) {
			return fmt.Errorf("%s: path parameter %s is not in the template", where, p.name)
		}
	}
	return nil
}

// parameters reads a list of parameters, following $refs to
// components/parameters.
func (p *parser) parameters(v any, where string) ([]*parameter, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s/parameters: not a list", where)
	}
	var out []*parameter
	for i, e := range list {
		at := fmt.Sprintf("%s/parameters/%d", where, i)
		if ref, ok, err := refOf(e, at); err != nil {
			return nil, err
		} else if ok {
			name, isParam := strings.CutPrefix(ref, "#/components/parameters/")
			raw, found := p.components("parameters")[name]
			if !isParam || !found {
				return nil, fmt.Errorf("%s: $ref %q: no such parameter", at, ref)
			}
			e, at = raw, ref
		}
		param, err := p.parameter(e, at)
		if err != nil {
			return nil, err
		}
		out = append(out, param)
	}
	return out, nil
}

// parameter reads a Parameter Object: in path, query or header, in its
// default style, of a primitive type.
func (p *parser) parameter(v any, where string) (*parameter, error) {
	m, err := object(v, where, "name", "in", "required", "schema", "description", "example", "deprecated")
	if err != nil {
		return nil, err
	}
	param := &parameter{}
	if param.name, err = str(m, "name", where); err != nil {
		return nil, err
	}
	if param.in, err = str(m, "in", where); err != nil {
		return nil, err
	}
	if !slices.Contains([]string{"path", "query", "header"}, param.in) {
		return nil, fmt.Errorf("%s: parameters in %q are not understood by the checker", where, param.in)
	}
	if param.required, err = boolean(m, "required", where); err != nil {
		return nil, err
	}
	if param.schema, err = p.parseSchema(m["schema"], where+"/schema"); err != nil {
		return nil, err
	}
	if s := param.schema; !slices.Contains([]string{"string", "integer", "number", "boolean"}, s.typ) || len(s.oneOf) > 0 {
		return nil, fmt.Errorf("%s: a parameter of type %q is not understood by the checker", where, s.typ)
	}
	return param, nil
}

// requestBody reads a Request Body Object.
func (p *parser) requestBody(v any, where string) (*requestBody, error) {
	m, err := object(v, where, "description", "required", "content")
	if err != nil {
		return nil, err
	}
	b := &requestBody{}
	if b.required, err = boolean(m, "required", where); err != nil {
		return nil, err
	}
	b.content, err = p.content(m["content"], where)
	return b, err
}

// responses reads a Responses Object.
func (p *parser) responses(v any, where string) (map[string]*response, error) {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, fmt.Errorf("%s: no responses", where)
	}
	out := map[string]*response{}
	for status, raw := range m {
		if strings.HasPrefix(status, "x-") {
			continue
		}
		if !statusKey.MatchString(status) {
			return nil, fmt.Errorf("%s: %q is not a status", where, status)
		}
		at := where + "/" + status
		r, err := object(raw, at, "description", "content", "headers")
		if err != nil {
			return nil, err
		}
		resp := &response{ext: extensions(r)}
		if resp.content, err = p.content(r["content"], at); err != nil {
			return nil, err
		}
		if resp.headers, err = p.responseHeaders(r["headers"], at); err != nil {
			return nil, err
		}
		out[status] = resp
	}
	return out, nil
}

// responseHeaders reads the Headers of a Response Object: each a Header
// Object in its default style, of a primitive type, read as a header
// parameter of its name. Content-Type is left out, as kin-openapi leaves
// it out of the check.
func (p *parser) responseHeaders(v any, where string) ([]*parameter, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s/headers: not an object", where)
	}
	var out []*parameter
	for _, name := range slices.Sorted(maps.Keys(m)) {
		at := where + "/headers/" + name
		h, err := object(m[name], at, "description", "required", "schema", "example", "deprecated")
		if err != nil {
			return nil, err
		}
		if strings.EqualFold(name, "Content-Type") {
			continue
		}
		param := &parameter{name: name, in: "header"}
		if param.required, err = boolean(h, "required", at); err != nil {
			return nil, err
		}
		if param.schema, err = p.parseSchema(h["schema"], at+"/schema"); err != nil {
			return nil, err
		}
		if s := param.schema; !slices.Contains([]string{"string", "integer", "number", "boolean"}, s.typ) || len(s.oneOf) > 0 {
			return nil, fmt.Errorf("%s: a header of type %q is not understood by the checker", at, s.typ)
		}
		out = append(out, param)
	}
	return out, nil
}

// statusKey is a member of a Responses Object.
var statusKey = regexp.MustCompile(`^([1-5][0-9][0-9]|[1-5]XX|default)$`)
