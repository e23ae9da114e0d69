package text

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		``:                `""`,
		`a@b.com`:         `"a@b.com"`,
		`say "hi"`:        `"say \"hi\""`,
		`back\slash`:      `"back\\slash"`,
		"tab\tnl\n\r\x01": `"tab\tnl\n\r\u0001"`,
		"del\x7f":         `"del\u007f"`,
		"é ü \u2028":      "\"é ü \u2028\"",
		"bad\xffutf8":     `"bad\ufffdutf8"`,
		`") or (1 eq "1`:  `"\") or (1 eq \"1"`,
	} {
		var b strings.Builder
		Quote(&b, in)
		got := b.String()
		if got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("Quote(%q) = %s is not a JSON string: %v", in, got, err)
		} else if want := strings.ToValidUTF8(in, "\ufffd"); back != want {
			t.Errorf("Quote(%q) decodes to %q, want %q", in, back, want)
		}
	}
}

func TestQuoteLiteral(t *testing.T) {
	for in, want := range map[string]string{
		`say "hi"`:         `"say \"hi\""`,
		"tab\tnl\n\x01":    `"tab\tnl\n\u0001"`,
		"bad\xffutf8":      "\"bad\ufffdutf8\"",
		"kept \ufffd":      "\"kept \ufffd\"",
		`") or (1 eq "1`:   `"\") or (1 eq \"1"`,
		"é \u2028 del\x7f": "\"é \u2028 del\\u007f\"",
	} {
		var b strings.Builder
		QuoteLiteral(&b, in)
		if got := b.String(); got != want {
			t.Errorf("QuoteLiteral(%q) = %s, want %s", in, got, want)
		}
	}
}
