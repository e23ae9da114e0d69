package fake

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The lexer and parser of the filter language (see events_filter.go).

type tokKind int

const (
	tokEOF tokKind = iota
	tokName
	tokString
	tokNumber
	tokOp
	tokLParen
	tokRParen
	tokLBrack
	tokRBrack
	tokComma
	tokError
)

type token struct {
	kind tokKind
	text string // name, operator, number as written, unquoted string, error
	pos  int
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "the end of the filter"
	case tokString:
		var b strings.Builder
		writeFilterString(&b, t.text)
		return "string " + b.String()
	case tokNumber:
		return "number " + t.text
	case tokName:
		return strconv.Quote(t.text)
	}
	return "'" + t.text + "'"
}

var (
	punctTokens   = [256]tokKind{'(': tokLParen, ')': tokRParen, '[': tokLBrack, ']': tokRBrack, ',': tokComma}
	stringEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
)

type filterParser struct {
	src string
	pos int
	tok token
}

func (p *filterParser) errorf(format string, args ...any) error {
	return fmt.Errorf("filter: at offset %d: %s", p.tok.pos, fmt.Sprintf(format, args...))
}

func isNameStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isNamePart(c byte) bool { return isNameStart(c) || c == '-' || (c >= '0' && c <= '9') }

// next reads the next token into p.tok.
func (p *filterParser) next() {
	for p.pos < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.pos]) >= 0 {
		p.pos++
	}
	start := p.pos
	if p.pos >= len(p.src) {
		p.tok = token{kind: tokEOF, pos: start}
		return
	}
	c := p.src[p.pos]
	switch {
	case punctTokens[c] != 0:
		p.pos++
		p.tok = token{kind: punctTokens[c], text: string(c), pos: start}
	case c == '=':
		p.pos++
		p.tok = token{kind: tokOp, text: "=", pos: start}
	case c == '!' || c == '<' || c == '>':
		p.pos++
		op := string(c)
		if p.pos < len(p.src) && p.src[p.pos] == '=' {
			p.pos++
			op += "="
		}
		if op == "!" {
			p.tok = token{kind: tokError, text: "'!' must be followed by '='", pos: start}
			return
		}
		p.tok = token{kind: tokOp, text: op, pos: start}
	case c == '"':
		s, n, err := unquoteFilterString(p.src[p.pos:])
		if err != nil {
			p.tok = token{kind: tokError, text: err.Error(), pos: start}
			return
		}
		p.pos += n
		p.tok = token{kind: tokString, text: s, pos: start}
	case c == '-' || (c >= '0' && c <= '9'):
		n := scanJSONNumber(p.src[p.pos:])
		if n == 0 || (p.pos+n < len(p.src) && isNamePart(p.src[p.pos+n])) {
			p.tok = token{kind: tokError, text: "malformed number", pos: start}
			return
		}
		p.pos += n
		p.tok = token{kind: tokNumber, text: p.src[start:p.pos], pos: start}
	case isNameStart(c):
		for p.pos < len(p.src) && (isNamePart(p.src[p.pos]) || (p.src[p.pos] == '.' && p.pos+1 < len(p.src) && isNameStart(p.src[p.pos+1]))) {
			p.pos++
		}
		p.tok = token{kind: tokName, text: p.src[start:p.pos], pos: start}
	default:
		r, _ := utf8.DecodeRuneInString(p.src[p.pos:])
		p.tok = token{kind: tokError, text: fmt.Sprintf("unexpected character %q", r), pos: start}
	}
}

// unquoteFilterString reads the string literal at the start of s and
// returns its value and its length in s.
func unquoteFilterString(s string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), i + 1, nil
		case c == '\\':
			if i+1 >= len(s) {
				return "", 0, errors.New("unterminated string")
			}
			if e, ok := stringEscapes[s[i+1]]; ok {
				b.WriteByte(e)
				i += 2
				continue
			}
			if s[i+1] != 'u' {
				return "", 0, fmt.Errorf("invalid escape \\%c in string", s[i+1])
			}
			r, n, ok := readUnicodeEscape(s[i:])
			if !ok {
				return "", 0, errors.New(`invalid \u escape in string`)
			}
			b.WriteRune(r)
			i += n
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", 0, errors.New("unterminated string")
}

// readUnicodeEscape reads \uXXXX (or a surrogate pair of two) at the start
// of s.
func readUnicodeEscape(s string) (rune, int, bool) {
	hex4 := func(s string) (rune, bool) {
		if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(s[2:6], 16, 16)
		return rune(n), err == nil
	}
	r, ok := hex4(s)
	if !ok {
		return 0, 0, false
	}
	if !utf16.IsSurrogate(r) {
		return r, 6, true
	}
	if r2, ok := hex4(s[6:]); ok {
		if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
			return d, 12, true
		}
	}
	return utf8.RuneError, 6, true
}

func (p *filterParser) keyword(word string) bool {
	return p.tok.kind == tokName && strings.EqualFold(p.tok.text, word)
}

func (p *filterParser) parseAnd(depth int) (filterNode, error) {
	if depth > maxFilterDepth {
		return nil, p.errorf("parentheses nest deeper than %d", maxFilterDepth)
	}
	var terms andNode
	for {
		t, err := p.parseTerm(depth)
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
		if !p.keyword("AND") {
			break
		}
		p.next()
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	return terms, nil
}

func (p *filterParser) parseTerm(depth int) (filterNode, error) {
	switch p.tok.kind {
	case tokLParen:
		p.next()
		n, err := p.parseAnd(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tokRParen {
			return nil, p.errorf("expected ')', found %s", p.tok)
		}
		p.next()
		return n, nil
	case tokName:
		return p.parseComparison()
	case tokError:
		return nil, p.errorf("%s", p.tok.text)
	}
	return nil, p.errorf("expected a field name or '(', found %s", p.tok)
}

func (p *filterParser) parseComparison() (filterNode, error) {
	n := cmpNode{field: p.tok.text}
	p.next()
	switch {
	case p.tok.kind == tokOp:
		n.op = p.tok.text
		p.next()
		v, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		if v.kind == valBool && n.op != "=" && n.op != "!=" {
			return nil, fmt.Errorf("filter: field %s: operator %s needs a string or a number, not a boolean", n.field, n.op)
		}
		n.values = []filterValue{v}
	case p.keyword("in"):
		n.op = "in"
		p.next()
		if p.tok.kind != tokLBrack {
			return nil, p.errorf("expected '[' after in, found %s", p.tok)
		}
		p.next()
		for {
			v, err := p.parseValue()
			if err != nil {
				return nil, err
			}
			n.values = append(n.values, v)
			if p.tok.kind != tokComma {
				break
			}
			p.next()
		}
		if p.tok.kind != tokRBrack {
			return nil, p.errorf("expected ',' or ']' in the list, found %s", p.tok)
		}
		p.next()
	case p.tok.kind == tokError:
		return nil, p.errorf("%s", p.tok.text)
	default:
		return nil, p.errorf("expected an operator (= != > < >= <=) or in after field %s, found %s", n.field, p.tok)
	}
	return n, nil
}

func (p *filterParser) parseValue() (filterValue, error) {
	t := p.tok
	switch {
	case t.kind == tokString:
		p.next()
		return filterValue{kind: valString, text: t.text}, nil
	case t.kind == tokNumber:
		n, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return filterValue{}, p.errorf("number %s is out of range", t.text)
		}
		p.next()
		return filterValue{kind: valNumber, text: t.text, num: n}, nil
	case t.kind == tokName && (t.text == "true" || t.text == "false"):
		p.next()
		return filterValue{kind: valBool, b: t.text == "true"}, nil
	case t.kind == tokError:
		return filterValue{}, p.errorf("%s", t.text)
	}
	return filterValue{}, p.errorf("expected a value (a string in double quotes, a number, true or false), found %s", t)
}
