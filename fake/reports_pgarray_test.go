package fake

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPGArray(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in     string
		values []string
		nulls  int
		ok     bool
	}{
		{`{}`, nil, 0, true},
		{` { } `, nil, 0, true},
		{`{a,b}`, []string{"a", "b"}, 0, true},
		{`{"a,b",c}`, []string{"a,b", "c"}, 0, true}, // a comma inside quotes
		{`{"{x}","a b"," c "}`, []string{"{x}", "a b", " c "}, 0, true},
		{`{ a , b c ,d }`, []string{"a", "b c", "d"}, 0, true}, // whitespace around elements
		{`{"say \"hi\"","back\\slash"}`, []string{`say "hi"`, `back\slash`}, 0, true},
		{`{a\,b,c\"d,\\}`, []string{"a,b", `c"d`, `\`}, 0, true}, // escapes outside quotes
		{`{a\ ,b}`, []string{"a ", "b"}, 0, true},                // an escaped space is kept
		{`{NULL,"NULL",null,NuLl}`, []string{"NULL"}, 3, true},   // unquoted NULL is null, quoted is text
		{`{N\ULL}`, []string{"NULL"}, 0, true},                   // an escape makes it text
		{`{""}`, []string{""}, 0, true},
		{`{"",""}`, []string{"", ""}, 0, true},
		{`{"é, ü"}`, []string{"é, ü"}, 0, true},
		{"{\ta\n,\rb\v}", []string{"a", "b"}, 0, true},
		// Not array literals: the cell is read as one text.
		{`a,b`, nil, 0, false},
		{`{a,b`, nil, 0, false},
		{`{a,,b}`, nil, 0, false},
		{`{a,}`, nil, 0, false},
		{`{,a}`, nil, 0, false},
		{`{"a"b}`, nil, 0, false},
		{`{"a}`, nil, 0, false},
		{`{a"b"}`, nil, 0, false},
		{`{a\}`, nil, 0, false},
		{`{{a,b},{c,d}}`, nil, 0, false},
		{`[1:2]={a,b}`, nil, 0, false},
		{``, nil, 0, false},
	} {
		values, nulls, ok := pgArray(tc.in)
		if ok != tc.ok || nulls != tc.nulls || !slices.Equal(values, tc.values) {
			t.Errorf("pgArray(%q) = %q, %d nulls, %v; want %q, %d, %v", tc.in, values, nulls, ok, tc.values, tc.nulls, tc.ok)
		}
	}
}

// TestPGArrayFilter: a report filter on a TEXT_PG_ARRAY column matches
// the elements PostgreSQL reads from the literal: a quoted comma is part
// of one element, an unquoted NULL matches no value, a quoted "NULL"
// does, and {NULL} is not empty.
func TestPGArrayFilter(t *testing.T) {
	t.Parallel()
	cols := []Column{{ID: "s", Name: "s", Type: columnTextPGArray}}
	match := func(op string, values []string, cell any) bool {
		t.Helper()
		g := filterGroup{Op: "AND", FieldFilters: []fieldFilter{{Type: columnTextPGArray, ColID: "s", Filter: &fieldCond{Op: op, Values: values}}}}
		p, err := compileFilter(&g, cols, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return p([]any{cell})
	}
	for _, tc := range []struct {
		op     string
		values []string
		cell   string
		want   bool
	}{
		{"EQUAL_TO", []string{"a,b"}, `{"a,b",c}`, true},
		{"EQUAL_TO", []string{"a"}, `{"a,b",c}`, false},
		{"EQUAL_TO", []string{"b"}, `{"a,b",c}`, false},
		{"EQUAL_TO", []string{"c"}, `{"a,b",c}`, true},
		{"IN", []string{"x", `say "hi"`}, `{"say \"hi\""}`, true},
		{"EQUAL_TO", []string{"NULL"}, `{NULL}`, false},
		{"EQUAL_TO", []string{"NULL"}, `{"NULL"}`, true},
		{"START_WITH", []string{" c"}, `{" c "}`, true},
		{"END_WITH", []string{"b"}, `{ a , b }`, true},
		{"IS_EMPTY", nil, `{}`, true},
		{"IS_EMPTY", nil, `{NULL}`, false},
		{"IS_EMPTY", nil, `{""}`, false},
		{"EQUAL_TO", []string{`{a,,b}`}, `{a,,b}`, true}, // not a literal: one text
	} {
		if got := match(tc.op, tc.values, tc.cell); got != tc.want {
			t.Errorf("%s %q on %s = %v, want %v", tc.op, tc.values, tc.cell, got, tc.want)
		}
	}
}

// FuzzPGArray: any list of texts, written as PostgreSQL writes an array
// literal (every element quoted, \ and " escaped), reads back as itself.
func FuzzPGArray(f *testing.F) {
	f.Add("a,b", "c", "")
	f.Add(`say "hi"`, `\`, "NULL")
	f.Add(" {x} ", "", "é")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		in := []string{a, b, c}
		var lit strings.Builder
		lit.WriteByte('{')
		for i, s := range in {
			if i > 0 {
				lit.WriteByte(',')
			}
			lit.WriteString(`"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`)
		}
		lit.WriteByte('}')
		values, nulls, ok := pgArray(lit.String())
		if !ok || nulls != 0 || !slices.Equal(values, in) {
			t.Errorf("pgArray(%q) = %q, %d, %v; want %q", lit.String(), values, nulls, ok, in)
		}
	})
}
