package events_test

import (
	"encoding/json"
	"github.com/partnerapi/partner-go/internal/fakeserver/eventfilter"
	"math"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/events"
)

type stage string

func TestFilterString(t *testing.T) {
	tests := []struct {
		f    events.Filter
		want string
	}{
		{events.Eq("stage", "won"), `stage = "won"`},
		{events.Ne("stage", stage("lost")), `stage != "lost"`},
		{events.Gt("amount", 10000), `amount > 10000`},
		{events.Lt("amount", -2.5), `amount < -2.5`},
		{events.Ge("amount", uint8(7)), `amount >= 7`},
		{events.Le("ratio", float32(0.1)), `ratio <= 0.1`},
		{events.Le("big", 1e21), `big <= 1e+21`},
		{events.Eq("open", true), `open = true`},
		{events.Ne("open", false), `open != false`},
		{events.In("stage", "closed", "won", "lost"), `stage in ["closed", "won", "lost"]`},
		{events.In("n", 1, 2), `n in [1, 2]`},
		{events.Eq("x-y_z.A1", "v"), `x-y_z.A1 = "v"`},
		{
			events.And(events.In("stage", "closed", "won", "lost"), events.Eq("sales_details.partner", "P1")),
			`(stage in ["closed", "won", "lost"]) AND (sales_details.partner = "P1")`,
		},
		{events.And(events.Eq("a", 1), events.And(events.Eq("b", 2), events.Eq("c", 3))), `(a = 1) AND ((b = 2) AND (c = 3))`},
		{events.And(events.Filter{}, events.Eq("a", 1), events.Filter{}), `a = 1`},
		{events.And(), ``},
		{events.Filter{}, ``},
		{events.Raw("  stage = \"won\" "), `stage = "won"`},
	}
	for _, tt := range tests {
		if err := tt.f.Err(); err != nil {
			t.Errorf("%q: %v", tt.want, err)
		}
		if got := tt.f.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
	if !events.And().IsZero() || events.Eq("a", 1).IsZero() {
		t.Error("IsZero is wrong")
	}
}

func TestFilterErrors(t *testing.T) {
	tests := []struct {
		f    events.Filter
		want string
	}{
		{events.Eq("", "x"), "field name is required"},
		{events.Eq("a b", "x"), `field name "a b" is not a dotted name`},
		{events.Eq(`a"="b`, "x"), "is not a dotted name"},
		{events.Eq("a..b", "x"), "is not a dotted name"},
		{events.Eq(".a", "x"), "is not a dotted name"},
		{events.Eq("1a", "x"), "is not a dotted name"},
		{events.Eq("a.1", "x"), "is not a dotted name"},
		{events.Gt("n", math.NaN()), "filter: n >: NaN is not a number"},
		{events.Eq("n", math.Inf(1)), "+Inf is not a number"},
		{events.Eq("s", "\xff"), "is not valid UTF-8"},
		{events.In[string]("s"), "filter: s in []: at least one value is required"},
		{events.In("s", "ok", "\xfe"), "filter: s in [...]"},
		{events.And(events.Eq("a", 1), events.Eq("b c", 1)), `"b c"`},
	}
	for _, tt := range tests {
		err := tt.f.Err()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Err() = %v, want it to contain %q", err, tt.want)
		}
		if tt.f.String() != "" || tt.f.IsZero() {
			t.Errorf("a filter with an error renders %q (zero: %v)", tt.f.String(), tt.f.IsZero())
		}
		if _, err := json.Marshal(struct{ F events.Filter }{tt.f}); err == nil {
			t.Errorf("MarshalText of a filter with an error succeeded")
		}
	}
}

// hostileStrings try to break out of a string literal or change the
// structure of the expression around it.
var hostileStrings = []string{
	``, `"`, `\`, `\"`, `"\`, `\\"`, `x" OR "1" = "1`, `"] AND (x = "y`, `won") AND (stage = "lost`,
	`AND`, ` AND `, `)`, `(`, `[`, `]`, `,`, `in ["a"]`, `!=`, `\u0022`, `\n`, "line\nbreak", "tab\there",
	"nul\x00byte", "\x1f\x7f", "bell\a", "\u2028\u2029", "émoji 😀", `'single'`, `/\/`, strings.Repeat(`\"`, 50),
}

// TestFilterHostileValuesRoundTrip renders hostile values with the builder
// and parses them with the fake's independent parser: the expression keeps
// its structure (the fake's canonical form is the builder's output) and its
// meaning (it matches the value and nothing else).
func TestFilterHostileValuesRoundTrip(t *testing.T) {
	for _, v := range hostileStrings {
		for _, f := range []events.Filter{
			events.Eq("name", v),
			events.In("name", "plain", v),
			events.And(events.Eq("name", v), events.Eq("other.field", "o")),
		} {
			expr := f.String()
			parsed, err := eventfilter.Parse(expr)
			if err != nil {
				t.Errorf("value %q: the fake cannot parse %q: %v", v, expr, err)
				continue
			}
			if got := parsed.String(); got != expr {
				t.Errorf("value %q: structure changed:\nbuilt  %s\nparsed %s", v, expr, got)
			}
			match := map[string]any{"name": v, "other": map[string]any{"field": "o"}}
			if !parsed.Match(match) {
				t.Errorf("%s does not match name=%q", expr, v)
			}
			for _, other := range []string{v + "x", "x" + v, `"`, "AND", ""} {
				if other == v {
					continue
				}
				if parsed.Match(map[string]any{"name": other, "other": map[string]any{"field": "o"}}) {
					t.Errorf("%s matches name=%q", expr, other)
				}
			}
		}
	}
}

func TestFilterValuesRoundTrip(t *testing.T) {
	fields := map[string]any{"amount": float64(10000), "ratio": 0.1, "open": true, "stage": "won", "big": 1e21}
	tests := []struct {
		f    events.Filter
		want bool
	}{
		{events.Eq("amount", 10000), true},
		{events.Eq("amount", int64(10001)), false},
		{events.Gt("amount", 9999.5), true},
		{events.Le("amount", uint(9999)), false},
		{events.Eq("ratio", 0.1), true},
		{events.Eq("big", 1e21), true},
		{events.Eq("open", true), true},
		{events.Ne("open", true), false},
		{events.Gt("stage", "a"), true},
		{events.In("stage", stage("lost"), stage("won")), true},
		{events.Ne("missing", "x"), true},
		{events.Eq("missing", "x"), false},
		{events.And(events.Eq("open", true), events.Lt("amount", 5)), false},
	}
	for _, tt := range tests {
		parsed, err := eventfilter.Parse(tt.f.String())
		if err != nil {
			t.Fatalf("%s: %v", tt.f, err)
		}
		if parsed.String() != tt.f.String() {
			t.Errorf("%s parsed as %s", tt.f, parsed)
		}
		if got := parsed.Match(fields); got != tt.want {
			t.Errorf("%s: Match = %v, want %v", tt.f, got, tt.want)
		}
	}
}

// FuzzFilterBuilder checks that any string value and field survive the
// builder and the fake's parser with their meaning intact.
func FuzzFilterBuilder(f *testing.F) {
	for _, v := range hostileStrings {
		f.Add("name", v)
	}
	f.Fuzz(func(t *testing.T, field, v string) {
		flt := events.Eq(field, v)
		if flt.Err() != nil {
			return
		}
		parsed, err := eventfilter.Parse(flt.String())
		if err != nil {
			t.Fatalf("the fake cannot parse %q: %v", flt, err)
		}
		if parsed.String() != flt.String() {
			t.Fatalf("built %s, parsed %s", flt, parsed)
		}
		if !parsed.Match(map[string]any{field: v}) || parsed.Match(map[string]any{field: v + "x"}) {
			t.Fatalf("%s does not mean %s = %q", flt, field, v)
		}
	})
}
