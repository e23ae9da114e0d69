package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/partnerapi/partner-go/core"
)

// Report data pages are decoded by a small scanner instead of
// encoding/json: rows must keep their member order, which rules out maps,
// and decoding with json.Decoder.Token runs at about 8 MB/s (230 ms for a
// page of 10,000 rows of 10 columns against 16 ms here, see
// BenchmarkDecodePage10k and BenchmarkDecodePageTokens10k), which would
// make decoding, not the network, the limit of an export. The scanner
// reads the page body once, turns it into one string, and gives every
// string value as a substring of it: no copy and no allocation per string
// beyond its interface header. Numbers stay json.Number (their text), so
// nothing is lost. Nested arrays and objects, rare in reports, go through
// encoding/json.
//
// The page body is read whole, into one buffer of its Content-Length: a
// page holds at most 10,000 rows, and ExportView bounds the bytes held
// at once.

// decodePage reads a report data page: {"version", "endOfList",
// "results": [rows]}, members in any order, unknown members skipped.
// size, when known (Content-Length), sizes the one buffer the body is
// read into, which the page's rows keep. rows, the page size asked for,
// sizes p.Rows (up to what size can hold). It returns the bytes the page
// holds: its body, its rows and their value offsets.
func decodePage(r io.Reader, size, rows int64, p *Page) (int64, error) {
	if size > 0 {
		p.Rows = make([]Row, 0, min(rows, size/3)) // a row takes at least 3 bytes: {},
	}
	var sb strings.Builder
	if size > 0 && size <= core.MaxPageAnswerSize { // fetchPage's cap
		sb.Grow(int(size))
	}
	if _, err := io.Copy(&sb, r); err != nil {
		return 0, err
	}
	d := &scanner{s: sb.String()}
	if err := d.page(p); err != nil {
		return 0, fmt.Errorf("decoding report data: %w", err)
	}
	return int64(sb.Cap()) + int64(cap(p.Rows))*int64(unsafe.Sizeof(Row{})) + d.chunks, nil
}

// scanner decodes JSON from s. Consecutive rows with the same keys share
// one column list.
type scanner struct {
	s      string
	i      int
	last   *columns
	src    *source  // the rows' source: s
	offs   []uint32 // the chunk the rows' value offsets are appended to
	chunks int64    // the bytes of the chunks of offsets
}

var errEnd = errors.New("unexpected end of JSON")

func (d *scanner) errorf(format string, args ...any) error {
	if d.i >= len(d.s) {
		return errEnd
	}
	return fmt.Errorf("offset %d: %s", d.i, fmt.Sprintf(format, args...))
}

// peek skips white space and returns the next byte, 0 at the end.
func (d *scanner) peek() byte {
	for d.i < len(d.s) {
		switch c := d.s[d.i]; c {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return c
		}
	}
	return 0
}

func (d *scanner) consume(c byte) error {
	if d.peek() != c {
		return d.errorf("expected %q", c)
	}
	d.i++
	return nil
}

// end checks that only white space is left.
func (d *scanner) end() error {
	if d.peek(); d.i < len(d.s) {
		return d.errorf("data after the JSON value")
	}
	return nil
}

// more reads the separator of an array or object: it reports whether
// another member follows, after first (whether none was read yet).
func (d *scanner) more(closing byte, first bool) (bool, error) {
	c := d.peek()
	if c == closing {
		d.i++
		return false, nil
	}
	if first {
		return true, nil
	}
	if c != ',' {
		return false, d.errorf("expected ',' or %q", closing)
	}
	d.i++
	return true, nil
}

func (d *scanner) page(p *Page) error {
	if err := d.consume('{'); err != nil {
		return err
	}
	for first := true; ; first = false {
		ok, err := d.more('}', first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		key, err := d.key()
		if err != nil {
			return err
		}
		switch key {
		case "version":
			v, err := d.value()
			if err != nil {
				return err
			}
			switch v := valueOf(v).(type) {
			case json.Number:
				if p.Version, err = v.Int64(); err != nil {
					return fmt.Errorf("version: %w", err)
				}
			case nil:
			default:
				return fmt.Errorf("version is %T, not a number", v)
			}
		case "endOfList":
			v, err := d.value()
			if err != nil {
				return err
			}
			b, ok := valueOf(v).(bool)
			if !ok && v != "null" {
				return fmt.Errorf("endOfList is %T, not a boolean", valueOf(v))
			}
			p.EndOfList = b
		case "results":
			if err := d.results(p); err != nil {
				return fmt.Errorf("results: %w", err)
			}
		default:
			if _, err := d.skip(); err != nil {
				return err
			}
		}
	}
	return d.end()
}

func (d *scanner) results(p *Page) error {
	p.Rows = p.Rows[:0] // the last of duplicate members wins, as in encoding/json
	if d.peek() == 'n' {
		_, err := d.value()
		return err
	}
	if err := d.consume('['); err != nil {
		return err
	}
	for first := true; ; first = false {
		ok, err := d.more(']', first)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		r, err := d.row()
		if err != nil {
			return fmt.Errorf("row %d: %w", len(p.Rows), err)
		}
		p.Rows = append(p.Rows, r)
		if len(p.Rows)%yieldRows == 0 {
			// Decoding a page keeps a core busy for milliseconds; let
			// the goroutines that receive the next answers (and send the
			// requests after them) run meanwhile.
			runtime.Gosched()
		}
	}
}

// yieldRows is how often results yields the processor: on a machine
// with few cores, two pages decoding at once otherwise delay the reading
// of every answer's headers (and so the next request of the window) by
// up to a scheduling slice; yielding every 256 rows cut the round trip
// of 100ms page requests from about 111ms to 106ms on 2 cores.
const yieldRows = 256

// key reads an object key and its colon.
func (d *scanner) key() (string, error) {
	if d.peek() != '"' {
		return "", d.errorf("expected a string key")
	}
	k, err := d.str()
	if err != nil {
		return "", err
	}
	return k, d.consume(':')
}

// row reads one JSON object as a Row.
func (d *scanner) row() (Row, error) {
	if err := d.consume('{'); err != nil {
		return Row{}, err
	}
	if d.src == nil {
		d.src = &source{text: d.s}
	}
	keys := newRowKeys(d.last, true) // keys point into the page: copy them
	start := len(d.offs)
	for first := true; ; first = false {
		ok, err := d.more('}', first)
		if err != nil {
			return Row{}, err
		}
		if !ok {
			break
		}
		key, err := d.key()
		if err != nil {
			return Row{}, err
		}
		keys.add(len(d.offs)-start, key)
		if d.peek(); d.i > math.MaxUint32 {
			return Row{}, d.errorf("a value past 4 GiB")
		}
		off := uint32(d.i)
		if _, err := d.value(); err != nil {
			return Row{}, err
		}
		if len(d.offs) == cap(d.offs) {
			start = d.grow(start)
		}
		d.offs = append(d.offs, off)
	}
	offs := d.offs[start:len(d.offs):len(d.offs)]
	cols := keys.columns(len(offs))
	d.last = cols
	return Row{cols: cols, src: d.src, offs: offs}, nil
}

// maxChunk is the most value offsets the scanner allocates at once for
// the rows it decodes: one allocation for thousands of rows, not one a
// row.
const maxChunk = 16384

// grow gives d.offs a new chunk, twice the last up to maxChunk, holding
// the offsets of the row being read (from start), and returns where that
// row now starts.
func (d *scanner) grow(start int) int {
	row := d.offs[start:]
	n := max(min(2*cap(d.offs), maxChunk), 16, 2*len(row))
	d.offs = append(make([]uint32, 0, n), row...)
	d.chunks += 4 * int64(n)
	return 0
}

// value reads one JSON value, checking it, and returns its text.
func (d *scanner) value() (string, error) {
	c := d.peek()
	start := d.i
	switch {
	case c == '"':
		_, err := d.str()
		return d.s[start:d.i], err
	case c == '-' || (c >= '0' && c <= '9'):
		n, err := d.number()
		return string(n), err
	case c == 't':
		return "true", d.literal("true")
	case c == 'f':
		return "false", d.literal("false")
	case c == 'n':
		return "null", d.literal("null")
	case c == '[' || c == '{':
		return d.skip()
	}
	return d.s[start:d.i], d.errorf("unexpected character")
}

func (d *scanner) literal(lit string) error {
	if !strings.HasPrefix(d.s[d.i:], lit) {
		return d.errorf("invalid literal")
	}
	d.i += len(lit)
	return nil
}

// str reads a string at d.i (an opening quote). Without escapes it is a
// substring of the input.
func (d *scanner) str() (string, error) {
	start := d.i + 1
	j := start
	for j < len(d.s) && plainByte[d.s[j]] {
		j++
	}
	if j < len(d.s) && d.s[j] >= utf8.RuneSelf {
		// Not ASCII: on to the end, then check the UTF-8.
		for j < len(d.s) && d.s[j] != '"' && d.s[j] != '\\' && d.s[j] >= 0x20 {
			j++
		}
		if j < len(d.s) && d.s[j] == '"' && utf8.ValidString(d.s[start:j]) {
			d.i = j + 1
			return d.s[start:j], nil
		}
	} else if j < len(d.s) && d.s[j] == '"' {
		d.i = j + 1
		return d.s[start:j], nil
	}
	if j >= len(d.s) {
		d.i = len(d.s)
		return "", errEnd
	}
	// Escapes, control characters or invalid UTF-8 (replaced, as
	// encoding/json does).
	raw, err := d.skipString()
	if err != nil {
		return "", err
	}
	var out string
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return "", err
	}
	return out, nil
}

// plainByte tells the bytes a string holds as they are, in ASCII: all but
// the quote, the backslash and control characters.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// skipString moves past the string at d.i and returns its raw text.
func (d *scanner) skipString() (string, error) {
	return d.through(stringEnd(d.s, d.i))
}

// through moves d.i to end, the end of the value at d.i (valueEnd,
// stringEnd), and returns the value's raw text: errEnd when it has none.
func (d *scanner) through(end int) (string, error) {
	if end < 0 {
		d.i = len(d.s)
		return "", errEnd
	}
	raw := d.s[d.i:end]
	d.i = end
	return raw, nil
}

// number reads a JSON number, checking its grammar.
func (d *scanner) number() (json.Number, error) {
	s, start := d.s, d.i
	i := start
	digits := func() bool {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case !digits():
		d.i = i
		return "", d.errorf("invalid number")
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			d.i = i
			return "", d.errorf("invalid number")
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			d.i = i
			return "", d.errorf("invalid number")
		}
	}
	d.i = i
	return json.Number(s[start:i]), nil
}

// skip moves past one value and returns its raw text.
func (d *scanner) skip() (string, error) {
	c := d.peek()
	start := d.i
	switch {
	case c == '"':
		_, err := d.str()
		return d.s[start:d.i], err
	case c == '[' || c == '{':
		raw, err := d.through(valueEnd(d.s, d.i))
		if err == nil && !json.Valid([]byte(raw)) {
			return "", fmt.Errorf("offset %d: invalid JSON value", start)
		}
		return raw, err
	default:
		_, err := d.value()
		return d.s[start:d.i], err
	}
}
