package eventfilter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/partnerapi/partner-go/internal/text"
)

// The lexer and parser of the filter language (see events_filter.go).

type evTokKind int

const (
	evTokEOF evTokKind = iota
	evTokName
	evTokString
	evTokNumber
	evTokOp
	evTokLParen
	evTokRParen
	evTokLBrack
	evTokRBrack
	evTokComma
	evTokError
)

type evToken struct {
	kind evTokKind
	text string // name, operator, number as written, unquoted string, error
	pos  int
}

func (t evToken) String() string {
	switch t.kind {
	case evTokEOF:
		return "the end of the filter"
	case evTokString:
		var b strings.Builder
		text.QuoteLiteral(&b, t.text)
		return "string " + b.String()
	case evTokNumber:
		return "number " + t.text
	case evTokName:
		return strconv.Quote(t.text)
	}
	return "'" + t.text + "'"
}

var (
	evPunct   = [256]evTokKind{'(': evTokLParen, ')': evTokRParen, '[': evTokLBrack, ']': evTokRBrack, ',': evTokComma}
	evEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
)

type evParser struct {
	src string
	pos int
	tok evToken
}

func (p *evParser) errorf(format string, args ...any) error {
	return fmt.Errorf("filter: at offset %d: %s", p.tok.pos, fmt.Sprintf(format, args...))
}

func evNameStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func evNamePart(c byte) bool { return evNameStart(c) || c == '-' || (c >= '0' && c <= '9') }

// next reads the next token into p.tok.
func (p *evParser) next() {
	for p.pos < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.pos]) >= 0 {
		p.pos++
	}
	start := p.pos
	if p.pos >= len(p.src) {
		p.tok = evToken{kind: evTokEOF, pos: start}
		return
	}
	c := p.src[p.pos]
	switch {
	case evPunct[c] != 0:
		p.pos++
		p.tok = evToken{kind: evPunct[c], text: string(c), pos: start}
	case c == '=':
		p.pos++
		p.tok = evToken{kind: evTokOp, text: "=", pos: start}
	case c == '!' || c == '<' || c == '>':
		p.tok = p.scanOp(start)
	case c == '"':
		p.tok = p.scanString(start)
	case c == '-' || (c >= '0' && c <= '9'):
		p.tok = p.scanNumber(start)
	case evNameStart(c):
		p.tok = p.scanName(start)
	default:
		r, _ := utf8.DecodeRuneInString(p.src[p.pos:])
		p.tok = evToken{kind: evTokError, text: fmt.Sprintf("unexpected character %q", r), pos: start}
	}
}

// scanOp reads an operator starting with '!', '<' or '>' at start.
func (p *evParser) scanOp(start int) evToken {
	op := string(p.src[p.pos])
	p.pos++
	if p.pos < len(p.src) && p.src[p.pos] == '=' {
		p.pos++
		op += "="
	}
	if op == "!" {
		return evToken{kind: evTokError, text: "'!' must be followed by '='", pos: start}
	}
	return evToken{kind: evTokOp, text: op, pos: start}
}

// scanString reads a string literal at start.
func (p *evParser) scanString(start int) evToken {
	s, n, err := evUnquote(p.src[p.pos:])
	if err != nil {
		return evToken{kind: evTokError, text: err.Error(), pos: start}
	}
	p.pos += n
	return evToken{kind: evTokString, text: s, pos: start}
}

// scanNumber reads a number at start; one followed by a name character is
// malformed.
func (p *evParser) scanNumber(start int) evToken {
	n := evScanNumber(p.src[p.pos:])
	if n == 0 || (p.pos+n < len(p.src) && evNamePart(p.src[p.pos+n])) {
		return evToken{kind: evTokError, text: "malformed number", pos: start}
	}
	p.pos += n
	return evToken{kind: evTokNumber, text: p.src[start:p.pos], pos: start}
}

// scanName reads a dotted field name or a keyword at start.
func (p *evParser) scanName(start int) evToken {
	for p.pos < len(p.src) && (evNamePart(p.src[p.pos]) || (p.src[p.pos] == '.' && p.pos+1 < len(p.src) && evNameStart(p.src[p.pos+1]))) {
		p.pos++
	}
	return evToken{kind: evTokName, text: p.src[start:p.pos], pos: start}
}

// evUnquote reads the string literal at the start of s and
// returns its value and its length in s.
func evUnquote(s string) (string, int, error) {
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
			if e, ok := evEscapes[s[i+1]]; ok {
				b.WriteByte(e)
				i += 2
				continue
			}
			if s[i+1] != 'u' {
				return "", 0, fmt.Errorf("invalid escape \\%c in string", s[i+1])
			}
			r, n, ok := evUnicodeEscape(s[i:])
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

// evUnicodeEscape reads \uXXXX (or a surrogate pair of two) at the start
// of s.
func evUnicodeEscape(s string) (rune, int, bool) {
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

func (p *evParser) keyword(word string) bool {
	return p.tok.kind == evTokName && strings.EqualFold(p.tok.text, word)
}

func (p *evParser) parseAnd(depth int) (evNode, error) {
	if depth > evMaxFilterDepth {
		return nil, p.errorf("parentheses nest deeper than %d", evMaxFilterDepth)
	}
	var terms evAndNode
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

func (p *evParser) parseTerm(depth int) (evNode, error) {
	switch p.tok.kind {
	case evTokLParen:
		p.next()
		n, err := p.parseAnd(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.tok.kind != evTokRParen {
			return nil, p.errorf("expected ')', found %s", p.tok)
		}
		p.next()
		return n, nil
	case evTokName:
		return p.parseComparison()
	case evTokError:
		return nil, p.errorf("%s", p.tok.text)
	}
	return nil, p.errorf("expected a field name or '(', found %s", p.tok)
}

func (p *evParser) parseComparison() (evNode, error) {
	n := evCmpNode{field: p.tok.text}
	p.next()
	switch {
	case p.tok.kind == evTokOp:
		n.op = p.tok.text
		p.next()
		v, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		if v.kind == evBool && n.op != "=" && n.op != "!=" {
			return nil, fmt.Errorf("filter: field %s: operator %s needs a string or a number, not a boolean", n.field, n.op)
		}
		n.values = []evValue{v}
	case p.keyword("in"):
		n.op = "in"
		p.next()
		if p.tok.kind != evTokLBrack {
			return nil, p.errorf("expected '[' after in, found %s", p.tok)
		}
		p.next()
		for {
			v, err := p.parseValue()
			if err != nil {
				return nil, err
			}
			n.values = append(n.values, v)
			if p.tok.kind != evTokComma {
				break
			}
			p.next()
		}
		if p.tok.kind != evTokRBrack {
			return nil, p.errorf("expected ',' or ']' in the list, found %s", p.tok)
		}
		p.next()
	case p.tok.kind == evTokError:
		return nil, p.errorf("%s", p.tok.text)
	default:
		return nil, p.errorf("expected an operator (= != > < >= <=) or in after field %s, found %s", n.field, p.tok)
	}
	return n, nil
}

func (p *evParser) parseValue() (evValue, error) {
	t := p.tok
	switch {
	case t.kind == evTokString:
		p.next()
		return evValue{kind: evString, text: t.text}, nil
	case t.kind == evTokNumber:
		n, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return evValue{}, p.errorf("number %s is out of range", t.text)
		}
		p.next()
		return evValue{kind: evNumber, text: t.text, num: n}, nil
	case t.kind == evTokName && (t.text == "true" || t.text == "false"):
		p.next()
		return evValue{kind: evBool, b: t.text == "true"}, nil
	case t.kind == evTokError:
		return evValue{}, p.errorf("%s", t.text)
	}
	return evValue{}, p.errorf("expected a value (a string in double quotes, a number, true or false), found %s", t)
}
