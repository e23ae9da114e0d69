package fake

import "strings"

// pgArray reads s as a one-dimensional PostgreSQL array literal of text,
// by the rules of PostgreSQL's array input
// (https://www.postgresql.org/docs/current/arrays.html#ARRAYS-IO):
// elements between braces, separated by commas; whitespace around the
// braces and around an element is ignored; an element in double quotes
// keeps its commas, braces and whitespace; a backslash, in quotes or
// not, takes the character after it as it is (\" and \\); an unquoted
// NULL, in any case and without a backslash, is a null element (counted
// in nulls, not in values), while "NULL" in quotes is the text NULL. ok
// is false when s is not such a literal: no braces, an empty unquoted
// element ({a,,b}, {a,}), a quote or brace inside an unquoted element,
// text after a closing quote, an unclosed quote, a nested array or
// dimension decoration ([1:2]={a,b}).
func pgArray(s string) (values []string, nulls int, ok bool) {
	s = strings.TrimFunc(s, isPGSpace)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, 0, false
	}
	p := pgArrayReader{s: s[1 : len(s)-1]}
	p.skipSpace()
	if p.i == len(p.s) {
		return nil, 0, true // {}
	}
	for {
		v, isNull, ok := p.element()
		if !ok {
			return nil, 0, false
		}
		if isNull {
			nulls++
		} else {
			values = append(values, v)
		}
		p.skipSpace()
		if p.i == len(p.s) {
			return values, nulls, true
		}
		if p.s[p.i] != ',' {
			return nil, 0, false
		}
		p.i++
	}
}

// pgArrayReader reads the elements of an array literal between its
// braces.
type pgArrayReader struct {
	s string
	i int
}

func (p *pgArrayReader) skipSpace() {
	for p.i < len(p.s) && isPGSpace(rune(p.s[p.i])) {
		p.i++
	}
}

// element reads one element after any whitespace, leaving p at the
// first byte after it (quoted) or at the comma or end that ends it
// (unquoted).
func (p *pgArrayReader) element() (v string, isNull, ok bool) {
	p.skipSpace()
	if p.i == len(p.s) {
		return "", false, false // {a,}
	}
	if p.s[p.i] == '"' {
		v, ok := p.quoted()
		return v, false, ok
	}
	return p.unquoted()
}

// quoted reads a quoted element, p at its opening quote.
func (p *pgArrayReader) quoted() (string, bool) {
	var b strings.Builder
	for p.i++; p.i < len(p.s); p.i++ {
		switch c := p.s[p.i]; c {
		case '\\':
			if p.i++; p.i == len(p.s) {
				return "", false
			}
			b.WriteByte(p.s[p.i])
		case '"':
			p.i++
			return b.String(), true
		default:
			b.WriteByte(c)
		}
	}
	return "", false // no closing quote
}

// unquoted reads an unquoted element: up to the next comma; trailing
// whitespace is not part of it unless a backslash took it.
func (p *pgArrayReader) unquoted() (v string, isNull, ok bool) {
	var b strings.Builder
	keep, escaped := 0, false
	for ; p.i < len(p.s) && p.s[p.i] != ','; p.i++ {
		switch c := p.s[p.i]; c {
		case '\\':
			if p.i++; p.i == len(p.s) {
				return "", false, false
			}
			b.WriteByte(p.s[p.i])
			keep, escaped = b.Len(), true
		case '"', '{', '}':
			return "", false, false
		default:
			b.WriteByte(c)
			if !isPGSpace(rune(c)) {
				keep = b.Len()
			}
		}
	}
	v = b.String()[:keep]
	if v == "" && !escaped {
		return "", false, false // {a,,b}
	}
	return v, !escaped && strings.EqualFold(v, "NULL"), true
}

// isPGSpace reports whether r is whitespace to PostgreSQL's array input
// (space, tab, line feed, carriage return, vertical tab, form feed).
func isPGSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}
