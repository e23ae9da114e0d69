package reports

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// The values of a row read from the service stay JSON text in their page
// until asked for: a row holds where each starts (Row.offs), valueEnd (the
// scanner's too) finds where it ends, and valueOf and textOf make it what
// Row.Value and Row.Text return. The text was checked when the page was
// decoded (scanner.row).

// valueOf returns the value whose JSON text is raw, as Row.Value gives
// it: a string without escapes, in valid UTF-8, is a substring of raw;
// other strings are decoded as encoding/json does (invalid UTF-8 becomes
// U+FFFD).
func valueOf(raw string) any {
	if raw == "" {
		return nil
	}
	switch raw[0] {
	case '"':
		return stringOf(raw)
	case 't':
		return true
	case 'f':
		return false
	case 'n':
		return nil
	case '[', '{':
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return nil
		}
		return v
	}
	return json.Number(raw)
}

// textOf returns the value whose JSON text is raw as Row.Text gives it.
func textOf(raw string) string {
	if raw == "" {
		return ""
	}
	switch raw[0] {
	case '"':
		return stringOf(raw)
	case '[', '{':
		return formatValue(valueOf(raw))
	case 'n':
		return ""
	}
	return raw // a number as sent, true or false
}

// stringOf returns the string whose JSON text is raw.
func stringOf(raw string) string {
	if s := raw[1 : len(raw)-1]; strings.IndexByte(s, '\\') < 0 && utf8.ValidString(s) {
		return s
	}
	var s string
	json.Unmarshal([]byte(raw), &s) // valid: checked when its page was decoded
	return s
}

// valueEnd returns where the value starting at i in s ends, or -1 when
// s ends first (an array, object or string left open).
func valueEnd(s string, i int) int {
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '[', '{':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				if j = stringEnd(s, j); j < 0 {
					return -1
				}
				j--
			case '[', '{':
				depth++
			case ']', '}':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	for j := i; j < len(s); j++ { // a number, true, false or null
		switch s[j] {
		case ',', ']', '}', ' ', '\t', '\n', '\r':
			return j
		}
	}
	return len(s)
}

// stringEnd returns where the string whose opening quote is at i in s
// ends, after its closing quote, or -1 when s ends first.
func stringEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}
