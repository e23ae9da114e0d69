// Package text holds the string helpers the SDK and the fake share, with
// nothing but the standard library: JSON string literals for the filter
// expressions the SDK builds, SCIM filters (scim.Quote) and event
// subscription filters (events.Filter), and the edit distance behind the
// "did you mean" of the command line and of the fake's error messages.
package text

import (
	"strings"
	"unicode/utf8"
)

// Quote writes s to b in double quotes with `"` and `\` escaped by a
// backslash, newline, carriage return and tab as \n, \r and \t, other
// control characters and DEL as \u00XX, and each byte that is not part
// of valid UTF-8 as \ufffd. The result is a JSON string (RFC 8259 §7)
// whose value is s (with invalid bytes replaced), so that no value can
// change the structure of the expression around it.
func Quote(b *strings.Builder, s string) { write(b, s, true) }

// QuoteLiteral is Quote except that U+FFFD, and each byte that is not
// part of valid UTF-8, is written as the character U+FFFD rather than as
// \ufffd: the form in which eventfilter renders a parsed filter.
func QuoteLiteral(b *strings.Builder, s string) { write(b, s, false) }

// write is Quote, with U+FFFD escaped when escapeFFFD is set.
func write(b *strings.Builder, s string, escapeFFFD bool) {
	const hex = "0123456789abcdef"
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\u00`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
		case r == utf8.RuneError && escapeFFFD:
			b.WriteString(`\ufffd`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
