package fake

import (
	"fmt"
	"go/parser"
	gotoken "go/token"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// demoLines renders the demo data a fake seeds, one line per
// integration, object, user and report, in the form package fake/demo's
// doc lists them.
func demoLines(f *Fake) []string {
	var out []string
	for _, in := range f.Integrations() {
		out = append(out, fmt.Sprintf("%s: %s objects, bulk key %s", in.ID, in.ObjectType, in.KeyField))
	}
	for _, typ := range []string{"opportunity", "account"} {
		for _, o := range f.Objects(typ) {
			flat := map[string]string{}
			flattenDemo("", o.Fields, flat)
			var fields []string
			for _, k := range slices.Sorted(maps.Keys(flat)) {
				fields = append(fields, k+"="+flat[k])
			}
			out = append(out, fmt.Sprintf("%s (%s of %s): %s", o.ID, o.Type, o.IntegrationID, strings.Join(fields, " ")))
		}
	}
	for _, u := range f.Users() {
		state := "active"
		if !u.IsActive() {
			state = "suspended"
		}
		var attrs []string
		f.users.mu.RLock()
		byNS := f.users.attrs[strings.ToLower(u.UserName)]
		for _, ns := range slices.Sorted(maps.Keys(byNS)) {
			byName := byNS[ns]
			for _, name := range slices.Sorted(maps.Keys(byName)) {
				attrs = append(attrs, fmt.Sprintf("%s=%s (namespace %d)", name, strings.Join(byName[name], ","), ns))
			}
		}
		f.users.mu.RUnlock()
		line := fmt.Sprintf("%s: %s, %s, %s, %s", u.ID, u.UserName, u.DisplayName, u.Department, state)
		if len(attrs) > 0 {
			line += "; " + strings.Join(attrs, " ")
		}
		out = append(out, line)
	}
	f.reports.mu.Lock()
	for _, id := range slices.Sorted(maps.Keys(f.reports.reports)) {
		r := f.reports.reports[id].def
		var cols, charts []string
		for _, c := range r.Columns {
			cols = append(cols, fmt.Sprintf("%s %q %s", c.ID, c.Name, c.Type))
		}
		for _, ch := range r.Charts {
			charts = append(charts, fmt.Sprintf("%d %q by %s", ch.ID, ch.Name, ch.GroupBy))
		}
		rows := ""
		switch {
		case r.ObjectType != "":
			rows = "rows: the " + r.ObjectType + " objects"
		case r.RowCount > 0:
			rows = fmt.Sprintf("rows: %d, generated", r.RowCount)
		default:
			rows = fmt.Sprintf("rows: %d", max(len(r.Rows), f.reports.reports[id].rows.len()))
		}
		out = append(out, fmt.Sprintf("%d %q (%s), %s", r.ID, r.Name, r.Status, rows),
			"columns: "+strings.Join(cols, ", "))
		if len(charts) > 0 {
			out = append(out, "charts: "+strings.Join(charts, ", "))
		}
	}
	f.reports.mu.Unlock()
	return out
}

// flattenDemo writes the fields of m under prefix into out by dotted name,
// each value as a filter would name it: strings quoted, numbers plain.
func flattenDemo(prefix string, m map[string]any, out map[string]string) {
	for k, v := range m {
		switch v := v.(type) {
		case map[string]any:
			flattenDemo(prefix+k+".", v, out)
		case string:
			out[prefix+k] = strconv.Quote(v)
		case float64:
			out[prefix+k] = strconv.FormatFloat(v, 'f', -1, 64)
		default:
			out[prefix+k] = fmt.Sprint(v)
		}
	}
}

// TestDemoDocMatchesTheSeed: the doc of package fake/demo lists every
// integration, object (with the fields a filter matches: stage, amount,
// ...), user and report WithDemoData seeds, as the fake seeds them, and
// nothing else, so that a user who reads go doc fake/demo can write a
// change or a filter that fires.
func TestDemoDocMatchesTheSeed(t *testing.T) {
	t.Parallel()
	f := New(WithDemoData())
	defer f.Close()
	pkg, err := parser.ParseFile(gotoken.NewFileSet(), "demo/demo.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	text := pkg.Doc.Text()
	listed := map[string]bool{}
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(l, "\t") {
			listed[strings.TrimSpace(l)] = true
		}
	}
	want := demoLines(f)
	for _, l := range want {
		if !listed[l] {
			t.Errorf("go doc fake/demo does not list, as an indented line:\n\t%s", l)
		}
		delete(listed, l)
	}
	for l := range listed {
		if l != "" && !strings.HasPrefix(l, "srv :=") && !strings.HasPrefix(l, "o, _ :=") {
			t.Errorf("go doc fake/demo lists what the fake does not seed:\n\t%s", l)
		}
	}
	if len(want) < 10 {
		t.Fatalf("the seed renders %d lines: the check proves nothing", len(want))
	}
}
