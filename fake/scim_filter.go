package fake

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// This file parses and evaluates the SCIM filters of GET
// /api/scim/v2/Users (RFC 7644 §3.4.2.2), the subset the fake supports:
//
//	filter  = or
//	or      = and *("or" and)
//	and     = unary *("and" unary)
//	unary   = "not" "(" filter ")" / "(" filter ")" / attrExp
//	attrExp = attrPath "pr" / attrPath compareOp compValue
//
// with compareOp one of eq ne co sw ew gt ge lt le (keywords and attribute
// names are case-insensitive) and compValue a JSON string, true or false.
// Attributes: id, userName, displayName, name.givenName, name.familyName,
// emails (same as emails.value), emails.value, emails.type,
// emails.primary, active, meta.resourceType, meta.created,
// meta.lastModified and the enterprise extension's department under its
// URN; core attributes may carry the core schema URN as a prefix. Value
// paths (emails[type eq "work"]), null and numbers are not supported.
// Anything else is an error, answered as 400 invalidFilter.

const (
	maxFilterLen   = 4096
	maxFilterDepth = 32
)

// scimFilter is a parsed filter.
type scimFilter interface {
	match(u *scimRecord) bool
}

type (
	filterAnd     struct{ l, r scimFilter }
	filterOr      struct{ l, r scimFilter }
	filterNot     struct{ f scimFilter }
	filterPresent struct{ a *scimAttr }
	filterCompare struct {
		a   *scimAttr
		op  string
		str string    // string and dateTime attributes (lower case unless caseExact)
		t   time.Time // dateTime attributes
		b   bool      // boolean attributes
	}
)

func (f filterAnd) match(u *scimRecord) bool { return f.l.match(u) && f.r.match(u) }
func (f filterOr) match(u *scimRecord) bool  { return f.l.match(u) || f.r.match(u) }
func (f filterNot) match(u *scimRecord) bool { return !f.f.match(u) }

func (f filterPresent) match(u *scimRecord) bool {
	for _, v := range f.a.get(u) {
		if v != "" {
			return true
		}
	}
	return false
}

func (f filterCompare) match(u *scimRecord) bool {
	if f.op == "ne" {
		return !filterCompare{a: f.a, op: "eq", str: f.str, t: f.t, b: f.b}.match(u)
	}
	for _, v := range f.a.get(u) {
		if v == "" {
			continue
		}
		if f.compare(v) {
			return true
		}
	}
	return false
}

func (f filterCompare) compare(v string) bool {
	switch f.a.kind {
	case attrBool:
		return (v == "true") == f.b // only eq reaches here
	case attrTime:
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return false
		}
		return compareOrdered(t.Compare(f.t), f.op)
	}
	if !f.a.caseExact {
		v = strings.ToLower(v)
	}
	switch f.op {
	case "co":
		return strings.Contains(v, f.str)
	case "sw":
		return strings.HasPrefix(v, f.str)
	case "ew":
		return strings.HasSuffix(v, f.str)
	}
	return compareOrdered(strings.Compare(v, f.str), f.op)
}

func compareOrdered(c int, op string) bool {
	switch op {
	case "eq":
		return c == 0
	case "gt":
		return c > 0
	case "ge":
		return c >= 0
	case "lt":
		return c < 0
	case "le":
		return c <= 0
	}
	return false
}

type attrKind int

const (
	attrString attrKind = iota
	attrBool
	attrTime
)

// scimAttr is an attribute a filter can name.
type scimAttr struct {
	name      string
	kind      attrKind
	caseExact bool
	get       func(u *scimRecord) []string // "" means unassigned
}

func emailValues(u *scimRecord, pick func(scimEmail) string) []string {
	out := make([]string, len(u.user.Emails))
	for i, e := range u.user.Emails {
		out[i] = pick(e)
	}
	return out
}

var scimAttrs = func() map[string]*scimAttr {
	list := []*scimAttr{
		{name: "id", caseExact: true, get: func(u *scimRecord) []string { return []string{u.user.ID} }},
		{name: "userName", get: func(u *scimRecord) []string { return []string{u.user.UserName} }},
		{name: "displayName", get: func(u *scimRecord) []string { return []string{u.user.DisplayName} }},
		{name: "name.givenName", get: func(u *scimRecord) []string {
			if u.user.Name == nil {
				return nil
			}
			return []string{u.user.Name.GivenName}
		}},
		{name: "name.familyName", get: func(u *scimRecord) []string {
			if u.user.Name == nil {
				return nil
			}
			return []string{u.user.Name.FamilyName}
		}},
		{name: "emails.value", get: func(u *scimRecord) []string {
			return emailValues(u, func(e scimEmail) string { return e.Value })
		}},
		{name: "emails.type", get: func(u *scimRecord) []string {
			return emailValues(u, func(e scimEmail) string { return e.Type })
		}},
		{name: "emails.primary", kind: attrBool, get: func(u *scimRecord) []string {
			return emailValues(u, func(e scimEmail) string { return fmt.Sprint(e.Primary) })
		}},
		{name: "active", kind: attrBool, get: func(u *scimRecord) []string { return []string{fmt.Sprint(u.active())} }},
		{name: "meta.resourceType", get: func(u *scimRecord) []string { return []string{"User"} }},
		{name: "meta.created", kind: attrTime, get: func(u *scimRecord) []string {
			return []string{u.created.UTC().Format(time.RFC3339)} // as the resource shows it
		}},
		{name: "meta.lastModified", kind: attrTime, get: func(u *scimRecord) []string {
			return []string{u.modified.UTC().Format(time.RFC3339)}
		}},
		{name: scimSchemaEnterprise + ":department", get: func(u *scimRecord) []string {
			if u.user.Enterprise == nil {
				return nil
			}
			return []string{u.user.Enterprise.Department}
		}},
	}
	m := make(map[string]*scimAttr, len(list)+1)
	for _, a := range list {
		m[strings.ToLower(a.name)] = a
	}
	m["emails"] = m["emails.value"]
	return m
}()

// lookupSCIMAttr resolves an attribute path, with or without the core
// schema URN in front.
func lookupSCIMAttr(path string) (*scimAttr, error) {
	p := strings.ToLower(path)
	if rest, ok := strings.CutPrefix(p, strings.ToLower(scimSchemaUser)+":"); ok {
		p = rest
	}
	if a := scimAttrs[p]; a != nil {
		return a, nil
	}
	return nil, fmt.Errorf("unknown or unsupported attribute %q", path)
}

// WithFullSCIMFilter makes the SCIM list operation take the whole filter
// grammar of RFC 7644 §3.4.2.2 (and, or, not, grouping, every comparison
// operator, pr, on the user attributes the fake stores). The deployed
// service documents only `userName eq "..."`, so by default the fake
// answers any other filter with 400 invalidFilter; the full grammar is the
// fake's own.
func WithFullSCIMFilter() Option { return func(f *Fake) { f.scim.fullFilter = true } }

// withSCIMZeroTotals makes the SCIM list operation answer as the deployed
// service's published example does: totalResults, startIndex and
// itemsPerPage all 0, beside the resources of the page. A client that
// pages on totalResults stops early against it; one that pages on the
// resources does not.
func withSCIMZeroTotals() Option { return func(f *Fake) { f.scim.zeroTotals = true } }

// withSCIMStartIndexIgnored makes the SCIM list operation ignore
// startIndex and answer every request from the first matching user, as a
// service whose published list example answers startIndex 0 may. A client
// that pages by startIndex then sees the same page again; one that reads
// on would never end. Off by default: the fake honours startIndex.
func withSCIMStartIndexIgnored() Option { return func(f *Fake) { f.scim.ignoreStart = true } }

// isUserNameEq reports whether f is the one filter the deployed service
// documents: userName eq "...".
func isUserNameEq(f scimFilter) bool {
	c, ok := f.(filterCompare)
	return ok && c.op == "eq" && c.a == scimAttrs["username"]
}

// parseSCIMFilter parses a filter expression.
func parseSCIMFilter(s string) (scimFilter, error) {
	if len(s) > maxFilterLen {
		return nil, fmt.Errorf("filter is longer than %d bytes", maxFilterLen)
	}
	toks, err := lexFilter(s)
	if err != nil {
		return nil, err
	}
	p := &filterParser{toks: toks}
	f, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, fmt.Errorf("unexpected %s at offset %d", t, t.pos)
	}
	return f, nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokLParen
	tokRParen
	tokWord
	tokString
)

type filterTok struct {
	kind tokKind
	text string // the word, or the decoded string
	pos  int
}

func (t filterTok) String() string {
	switch t.kind {
	case tokEOF:
		return "end of filter"
	case tokLParen:
		return `"("`
	case tokRParen:
		return `")"`
	case tokString:
		return "string " + fmt.Sprintf("%q", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

func lexFilter(s string) ([]filterTok, error) {
	var toks []filterTok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			toks = append(toks, filterTok{kind: tokLParen, pos: i})
			i++
		case c == ')':
			toks = append(toks, filterTok{kind: tokRParen, pos: i})
			i++
		case c == '[' || c == ']':
			return nil, fmt.Errorf("value paths with [ ] are not supported (offset %d)", i)
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated string at offset %d", i)
			}
			var v string
			if err := json.Unmarshal([]byte(s[i:j+1]), &v); err != nil {
				return nil, fmt.Errorf("malformed string at offset %d: %v", i, err)
			}
			toks = append(toks, filterTok{kind: tokString, text: v, pos: i})
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r()[]\"", rune(s[j])) {
				j++
			}
			toks = append(toks, filterTok{kind: tokWord, text: s[i:j], pos: i})
			i = j
		}
	}
	return append(toks, filterTok{kind: tokEOF, pos: len(s)}), nil
}

type filterParser struct {
	toks []filterTok
	i    int
}

func (p *filterParser) peek() filterTok { return p.toks[p.i] }

func (p *filterParser) next() filterTok {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *filterParser) keyword(kw string) bool {
	t := p.peek()
	if t.kind == tokWord && strings.EqualFold(t.text, kw) {
		p.i++
		return true
	}
	return false
}

func (p *filterParser) or(depth int) (scimFilter, error) {
	l, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for p.keyword("or") {
		r, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		l = filterOr{l, r}
	}
	return l, nil
}

func (p *filterParser) and(depth int) (scimFilter, error) {
	l, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	for p.keyword("and") {
		r, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		l = filterAnd{l, r}
	}
	return l, nil
}

func (p *filterParser) unary(depth int) (scimFilter, error) {
	if depth >= maxFilterDepth {
		return nil, fmt.Errorf("filter nests deeper than %d levels", maxFilterDepth)
	}
	negate := p.keyword("not")
	t := p.peek()
	if negate && t.kind != tokLParen {
		return nil, fmt.Errorf(`"not" must be followed by "(", not %s at offset %d`, t, t.pos)
	}
	if t.kind == tokLParen {
		p.next()
		f, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if t := p.next(); t.kind != tokRParen {
			return nil, fmt.Errorf(`expected ")", got %s at offset %d`, t, t.pos)
		}
		if negate {
			return filterNot{f}, nil
		}
		return f, nil
	}
	return p.attrExp()
}

func (p *filterParser) attrExp() (scimFilter, error) {
	t := p.next()
	if t.kind != tokWord {
		return nil, fmt.Errorf("expected an attribute name, got %s at offset %d", t, t.pos)
	}
	a, err := lookupSCIMAttr(t.text)
	if err != nil {
		return nil, err
	}
	opTok := p.next()
	if opTok.kind != tokWord {
		return nil, fmt.Errorf("expected an operator after %s, got %s at offset %d", a.name, opTok, opTok.pos)
	}
	op := strings.ToLower(opTok.text)
	switch op {
	case "pr":
		return filterPresent{a}, nil
	case "eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le":
	default:
		return nil, fmt.Errorf("unknown operator %q at offset %d", opTok.text, opTok.pos)
	}
	v := p.next()
	switch a.kind {
	case attrBool:
		if op != "eq" && op != "ne" {
			return nil, fmt.Errorf("%s is a boolean: only eq and ne apply, not %s", a.name, op)
		}
		if v.kind != tokWord || (!strings.EqualFold(v.text, "true") && !strings.EqualFold(v.text, "false")) {
			return nil, fmt.Errorf("%s is a boolean: compare it with true or false, not %s", a.name, v)
		}
		return filterCompare{a: a, op: op, b: strings.EqualFold(v.text, "true")}, nil
	case attrTime:
		if v.kind != tokString {
			return nil, fmt.Errorf("%s is a dateTime: compare it with a quoted RFC 3339 time, not %s", a.name, v)
		}
		if op == "co" || op == "sw" || op == "ew" {
			return nil, fmt.Errorf("%s is a dateTime: %s does not apply", a.name, op)
		}
		tm, err := time.Parse(time.RFC3339Nano, v.text)
		if err != nil {
			return nil, fmt.Errorf("%s is a dateTime: %q is not an RFC 3339 time", a.name, v.text)
		}
		return filterCompare{a: a, op: op, t: tm}, nil
	}
	if v.kind != tokString {
		if v.kind == tokWord && strings.EqualFold(v.text, "null") {
			return nil, errors.New("comparisons with null are not supported; use pr")
		}
		return nil, fmt.Errorf("%s is a string: compare it with a quoted value, not %s", a.name, v)
	}
	s := v.text
	if !a.caseExact {
		s = strings.ToLower(s)
	}
	return filterCompare{a: a, op: op, str: s}, nil
}
