package fake

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestReportFilterSizeBounded: a report data request whose filter holds
// too many values, too many bytes of values, too many field filters or too
// deep a nesting is refused with 400 before any row is read, so a client
// cannot buy unbounded CPU with one small request.
func TestReportFilterSizeBounded(t *testing.T) {
	f := New()
	id := smallReport(f, 3)
	values := func(n, size int) string {
		vs := make([]string, n)
		for i := range vs {
			vs[i] = fmt.Sprintf("%q", strings.Repeat("x", size))
		}
		return strings.Join(vs, ",")
	}
	contain := func(vals string) string {
		return `{"type":"TEXT","colId":"1","filter":{"op":"CONTAIN","values":[` + vals + `]}}`
	}
	nested := `{"op":"AND","fieldFilters":[` + contain(`"r"`) + `]}`
	for range maxReportFilterDepth { // one group deeper than allowed
		nested = `{"op":"AND","group":[` + nested + `]}`
	}
	many := strings.TrimSuffix(strings.Repeat(contain(`"r"`)+",", maxFilterNodes), ",")
	for _, tc := range []struct{ name, filters, want string }{
		{"values", `{"op":"OR","fieldFilters":[` + contain(values(maxFilterValues+1, 1)) + `]}`, fmt.Sprintf("more than %d values", maxFilterValues)},
		{"20000 values", `{"op":"OR","fieldFilters":[` + contain(values(20000, 6)) + `]}`, fmt.Sprintf("more than %d values", maxFilterValues)},
		{"bytes", `{"op":"OR","fieldFilters":[` + contain(values(2, maxFilterValueBytes/2+1)) + `]}`, fmt.Sprintf("more than %d bytes", maxFilterValueBytes)},
		{"nodes", `{"op":"OR","fieldFilters":[` + many + `]}`, fmt.Sprintf("more than %d groups and field filters", maxFilterNodes)},
		{"depth", nested, fmt.Sprintf("more than %d groups deep", maxReportFilterDepth)},
	} {
		code, body := call(t, f, "POST", fmt.Sprintf("/report/v1/%d/data", id), `{"page":{"number":0,"size":10},"filters":`+tc.filters+`}`)
		if code != http.StatusBadRequest || !strings.Contains(body, `"invalid_filter"`) || !strings.Contains(message(body), tc.want) {
			t.Errorf("%s: %d %.200s, want 400 invalid_filter with %q", tc.name, code, body, tc.want)
		}
	}
	// At the bounds the filter is accepted.
	code, body := call(t, f, "POST", fmt.Sprintf("/report/v1/%d/data", id),
		`{"page":{"number":0,"size":10},"filters":{"op":"OR","fieldFilters":[`+contain(values(maxFilterValues, 1))+`]}}`)
	if code != http.StatusOK {
		t.Errorf("%d values: %d %.200s, want 200", maxFilterValues, code, body)
	}
}

// TestReportRowLoopStopsWhenClientLeaves: the row loop of a filtered read
// checks the request's context, so the work ends soon after the client
// leaves instead of running through every row.
func TestReportRowLoopStopsWhenClientLeaves(t *testing.T) {
	f := New()
	id := smallReport(f, 10*rowCheckEvery)
	def, _, rs, ok := f.snapshotReport(id)
	if !ok {
		t.Fatal("no report")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	pred := func([]any) bool {
		calls++
		if calls == 10 {
			cancel() // the client hangs up while rows are being read
		}
		return true
	}
	_, err := filterRows(ctx, rs, def.Columns, pred)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("filterRows after the client left: %v, want context.Canceled", err)
	}
	if calls > rowCheckEvery {
		t.Errorf("filterRows read %d rows after the client left at row 10, want at most %d", calls, rowCheckEvery)
	}
}

// TestRequestLogEntriesBounded: requests with 60 KB paths, queries and
// environment headers (within the fake's size limits), sent without credentials, leave entries of bounded
// size in the request log, so the log's memory has a ceiling.
func TestRequestLogEntriesBounded(t *testing.T) {
	t.Parallel()
	tf := newTestFake(t)
	long := strings.Repeat("é", 30<<10) // 60 KB, two bytes a character
	const n = 10                        // each entry is checked: a few show the bound
	for i := range n {
		tf.do(t, "GET", fmt.Sprintf("/api/scim/v2/Users/%d%s", i, long)+"?q="+strings.Repeat("a", 12<<10), "", "",
			"x-svc-env", strings.Repeat("e", 40<<10))
	}
	reqs := tf.Requests()
	if len(reqs) != n {
		t.Fatalf("logged %d requests, want %d", len(reqs), n)
	}
	total := 0
	for i, r := range reqs {
		total += len(r.Method) + len(r.Path) + len(r.Query) + len(r.Env)
		if len(r.Path) > maxLoggedPath || len(r.Query) > maxLoggedQuery || len(r.Env) > maxLoggedEnv {
			t.Fatalf("entry %d: path %d, query %d, env %d bytes, want at most %d, %d, %d",
				i, len(r.Path), len(r.Query), len(r.Env), maxLoggedPath, maxLoggedQuery, maxLoggedEnv)
		}
		if want := fmt.Sprintf("/api/scim/v2/Users/%dé", i); !strings.HasPrefix(r.Path, want) || !strings.HasSuffix(r.Path, clipMark) || !utf8.ValidString(r.Path) {
			t.Fatalf("entry %d: path %.40q…, want a valid UTF-8 prefix %q ending in %q", i, r.Path, want, clipMark)
		}
	}
	if ceiling := n * (maxLoggedMethod + maxLoggedPath + maxLoggedQuery + maxLoggedEnv); total > ceiling {
		t.Errorf("log holds %d bytes of strings for %d requests, want at most %d", total, n, ceiling)
	}
}
