package eventfilter

import (
	"strings"
	"testing"
)

func TestParseEventFilterCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{`stage = "won"`, `stage = "won"`},
		{`  stage="won"  `, `stage = "won"`},
		{`(stage in ["closed", "won", "lost"]) AND (sales_details.partner = "P1")`, `(stage in ["closed", "won", "lost"]) AND (sales_details.partner = "P1")`},
		{`stage IN ["a","b"] and amount >= 10`, `(stage in ["a", "b"]) AND (amount >= 10)`},
		{`((a = 1))`, `a = 1`},
		{`a = 1 AND (b = 2 AND c = 3)`, `(a = 1) AND ((b = 2) AND (c = 3))`},
		{`a != -1.5e3`, `a != -1.5e3`},
		{`flag = true AND other != false`, `(flag = true) AND (other != false)`},
		{`a < 1 AND b <= 2 AND c > 3 AND d >= 4`, `(a < 1) AND (b <= 2) AND (c > 3) AND (d >= 4)`},
		{`name = "say \"hi\" \\ \u0041\n\/"`, `name = "say \"hi\" \\ A\n/"`},
		{`name = "\ud83d\ude00"`, `name = "😀"`},
		{`x-y_z.A1 = "v"`, `x-y_z.A1 = "v"`},
		{`in in ["in"]`, `in in ["in"]`},
		{`AND = "AND"`, `AND = "AND"`},
	}
	for _, tt := range tests {
		f, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := f.String(); got != tt.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseEventFilterErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, "expected a field name or '(', found the end of the filter"},
		{`stage`, "expected an operator"},
		{`stage = `, "expected a value"},
		{`stage = won`, `expected a value (a string in double quotes, a number, true or false), found "won"`},
		{`stage == "won"`, "expected a value"},
		{`stage ! "won"`, "'!' must be followed by '='"},
		{`stage = "won`, "unterminated string"},
		{`stage = "a\q"`, `invalid escape \q`},
		{`stage = "\u12"`, `invalid \u escape`},
		{`stage in []`, "expected a value"},
		{`stage in ["a" "b"]`, "expected ',' or ']'"},
		{`stage in "a"`, "expected '[' after in"},
		{`(stage = "a"`, "expected ')'"},
		{`stage = "a")`, "expected AND or the end"},
		{`stage = "a" OR b = 1`, "expected AND or the end"},
		{`stage = "a" AND`, "expected a field name"},
		{`flag < true`, "operator < needs a string or a number, not a boolean"},
		{`a = 01`, "malformed number"},
		{`a = 1x`, "malformed number"},
		{`a = 1e999`, "out of range"},
		{`a.=1`, "unexpected character '.'"},
		{`a = 'x'`, "unexpected character '\\''"},
		{"a = \"\xff\"", "not valid UTF-8"},
		{strings.Repeat("(", 40) + "a = 1" + strings.Repeat(")", 40), "nest deeper than 32"},
		{"a = \"" + strings.Repeat("x", evMaxFilterLen) + "\"", "longer than"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if err == nil {
			t.Errorf("Parse(%.40q) = nil error, want %q", tt.in, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%.40q) = %q, want it to contain %q", tt.in, err, tt.want)
		}
	}
}

func TestEventFilterMatch(t *testing.T) {
	fields := map[string]any{
		"stage":         "won",
		"amount":        float64(10000),
		"count":         7,
		"numeric_text":  "42.5",
		"open":          true,
		"open_text":     "false",
		"tags":          []any{"a", "b"},
		"sales_details": map[string]any{"partner": "P1"},
		"flat.dotted":   "yes",
	}
	tests := []struct {
		filter string
		want   bool
	}{
		{`stage = "won"`, true},
		{`stage = "lost"`, false},
		{`stage != "lost"`, true},
		{`stage in ["closed", "won"]`, true},
		{`stage in ["closed", "lost"]`, false},
		{`stage > "a" AND stage < "x"`, true},
		{`amount = 10000`, true},
		{`amount = 1e4`, true},
		{`amount > 9999.5`, true},
		{`amount <= 9999`, false},
		{`amount = "10000"`, true}, // a string compares with the field's text
		{`amount in [1, 10000]`, true},
		{`count >= 7`, true},
		{`count < 7`, false},
		{`numeric_text > 42`, true},
		{`stage > 1`, false}, // not a number: unordered
		{`stage = 1`, false},
		{`stage != 1`, true}, // incomparable values are unequal
		{`open = true`, true},
		{`open != true`, false},
		{`open_text = false`, true},
		{`stage = true`, false},
		{`open = "true"`, true},
		{`tags = "[\"a\",\"b\"]"`, true},
		{`sales_details.partner = "P1"`, true},
		{`flat.dotted = "yes"`, true},
		{`missing = "x"`, false},
		{`missing != "x"`, true}, // a missing field satisfies only !=
		{`missing < 1`, false},
		{`missing in ["x"]`, false},
		{`(stage in ["closed", "won", "lost"]) AND (sales_details.partner = "P1")`, true},
		{`(stage in ["closed", "won", "lost"]) AND (sales_details.partner = "P2")`, false},
	}
	for _, tt := range tests {
		f, err := Parse(tt.filter)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.filter, err)
		}
		if got := f.Match(fields); got != tt.want {
			t.Errorf("%s: Match = %v, want %v", tt.filter, got, tt.want)
		}
	}
}

// FuzzParseEventFilter checks that the parser never panics, that the
// canonical form of any filter it accepts parses again to itself, and
// that matching never panics.
func FuzzParseEventFilter(f *testing.F) {
	for _, s := range []string{
		`(stage in ["closed", "won", "lost"]) AND (sales_details.partner = "P1")`,
		`a = 1 AND (b != "x\"y" AND c >= -2.5e-3)`,
		`flag = true`, `name = "\u00e9\ud83d\ude00"`, `a in [1, "2", false]`,
		`((a = 1`, `a = "`, `a ! 1`,
	} {
		f.Add(s)
	}
	fields := map[string]any{"a": float64(1), "b": "x", "c": true, "stage": "won", "sales_details": map[string]any{"partner": "P1"}}
	f.Fuzz(func(t *testing.T, expr string) {
		p, err := Parse(expr)
		if err != nil {
			return
		}
		canon := p.String()
		q, err := Parse(canon)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", canon, expr, err)
		}
		if again := q.String(); again != canon {
			t.Fatalf("canonical form is not stable: %q -> %q", canon, again)
		}
		if p.Match(fields) != q.Match(fields) {
			t.Fatalf("%q and its canonical form %q match differently", expr, canon)
		}
	})
}
