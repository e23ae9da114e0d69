package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"
)

// table writes aligned columns to w.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		cells[i] = termSafe(strings.NewReplacer("\t", " ", "\n", " ").Replace(c))
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

// termSafe returns s with what a terminal would act on escaped, so that
// text from the service (a report's name, a cell, an error message)
// cannot move the cursor, clear the screen, set the window title or
// reorder what is shown: control characters (C0 other than line feed
// and tab, DEL, C1), bidirectional overrides and isolates, and invalid
// UTF-8 are written as Go escapes (\x1b, \u202e). Every line meant for a
// terminal goes through it: table cells, printf, the error line.
func termSafe(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			printf(&b, "\\x%02x", s[i])
		case unsafeRune(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// unsafeRune reports whether a terminal may act on r.
func unsafeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || 0x80 <= r && r <= 0x9f:
		return true
	case 0x202a <= r && r <= 0x202e, 0x2066 <= r && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// printf is fmt.Fprintf for text meant for a terminal: every string,
// error and fmt.Stringer argument goes through termSafe (the format
// itself is the program's own).
func printf(w io.Writer, format string, args ...any) {
	safe := make([]any, len(args))
	for i, a := range args {
		switch x := a.(type) {
		case string:
			safe[i] = termSafe(x)
		case error:
			safe[i] = termSafe(x.Error())
		case fmt.Stringer:
			safe[i] = termSafe(x.String())
		default:
			safe[i] = a
		}
	}
	fmt.Fprintf(w, format, safe...)
}

func (t *table) flush() error { return t.tw.Flush() }

// writeJSON writes v as indented JSON, with <, > and & as they are (the
// output is for scripts, not HTML).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// cellText formats a value for a table cell.
func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		if x.IsZero() {
			return ""
		}
		return x.Format(time.RFC3339)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// parseID parses a numeric id argument.
func parseID(what, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 0 {
		return 0, usagef("%s %q is not a number", what, s)
	}
	return id, nil
}

// checkInputFile checks, before anything is sent, that path is a file
// that can be read.
func checkInputFile(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return usagef("%s is a directory, not a file", path)
	}
	return nil
}

// termWriter passes what is written to a terminal through termSafe. A
// rune cut between two writes is held back until it is whole; flush
// writes what is left.
type termWriter struct {
	w       io.Writer
	pending []byte
}

func (t *termWriter) Write(p []byte) (int, error) {
	buf := append(t.pending, p...)
	cut := len(buf)
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-utf8.UTFMax; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	t.pending = append([]byte(nil), buf[cut:]...)
	if _, err := io.WriteString(t.w, termSafe(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (t *termWriter) flush() error {
	_, err := io.WriteString(t.w, termSafe(string(t.pending)))
	t.pending = nil
	return err
}
