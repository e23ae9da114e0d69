package reports_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/partnerapi/partner-go/reports"
)

func TestRowAccess(t *testing.T) {
	var names []string
	var vals []any
	for i := range 12 { // past the linear lookup
		names = append(names, fmt.Sprintf("c%d", i))
		vals = append(vals, i)
	}
	names[11] = "c3" // a duplicate name: Get finds the first
	r := reports.NewRow(names, vals)
	if v, ok := r.Get("c10"); !ok || v != 10 {
		t.Errorf("Get(c10) = %v, %v", v, ok)
	}
	if v, _ := r.Get("c3"); v != 3 {
		t.Errorf("Get of a duplicate = %v, want the first", v)
	}
	if _, ok := r.Get("nope"); ok {
		t.Error("Get of a missing column")
	}
	if r.Text("nope") != "" || r.Len() != 12 || r.Column(2) != "c2" || r.Value(2) != 2 {
		t.Error("accessors")
	}
	names[0] = "changed"
	if r.Column(0) != "c0" {
		t.Error("NewRow keeps the caller's slice")
	}
}

func TestRowUnmarshalAndClone(t *testing.T) {
	var r reports.Row
	if err := json.Unmarshal([]byte(`{"z":"a","y":1.0,"x":[1,"b"],"w":{"k":null}}`), &r); err != nil {
		t.Fatal(err)
	}
	c := r.Clone()
	if !slices.Equal(c.Columns(), []string{"z", "y", "x", "w"}) || c.Text("y") != "1.0" || c.Text("x") != `[1,"b"]` || c.Text("w") != `{"k":null}` {
		t.Errorf("clone %v", c.Values())
	}
	if err := json.Unmarshal([]byte(`[1]`), &r); err == nil {
		t.Error("an array decoded as a row")
	}
}

// A row marshals to valid UTF-8 JSON, values as sent, whatever the page
// held: invalid UTF-8 in a string becomes U+FFFD, as encoding/json makes it.
func TestRowMarshalJSONIsValidUTF8(t *testing.T) {
	var r reports.Row
	in := "{\"s\":\"a\xffb\",\"e\":\"x\\u00e9\\\"\",\"n\":1.50,\"o\":{\"k\":[\"\xfe\"]}}"
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"s":"a` + "\ufffd" + `b","e":"x\u00e9\"","n":1.50,"o":{"k":["` + "\ufffd" + `"]}}`; string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	if v, _ := r.Get("s"); v != "a\ufffdb" {
		t.Errorf("s = %q", v)
	}
}

// Text gives a row's strings and numbers without allocating: they are
// substrings of the page.
func TestRowTextAllocatesNothing(t *testing.T) {
	var r reports.Row
	if err := json.Unmarshal([]byte(`{"s":"Account 42","n":1000.25,"b":true,"z":null}`), &r); err != nil {
		t.Fatal(err)
	}
	var got [4]string
	allocs := testing.AllocsPerRun(100, func() {
		got = [4]string{r.Text("s"), r.Text("n"), r.Text("b"), r.Text("z")}
	})
	if got != [4]string{"Account 42", "1000.25", "true", ""} {
		t.Errorf("Text gave %q", got)
	}
	if allocs != 0 {
		t.Errorf("Text allocated %v times a call, want 0", allocs)
	}
}
