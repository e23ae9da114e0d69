package fakehttp

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestJSONProblem(t *testing.T) {
	type inner struct {
		N int64 `json:"n"`
	}
	type body struct {
		Name  string   `json:"name"`
		IDs   []string `json:"ids"`
		In    inner    `json:"in"`
		Ratio float64  `json:"ratio"`
		Nums  []int64  `json:"nums"`
		Ins   []inner  `json:"ins"`
		OK    bool     `json:"ok"`
	}
	for _, tc := range []struct{ in, want string }{
		{``, "request body is empty"},
		{`{"name": "a"`, "malformed JSON: the body ends inside a JSON value"},
		{`{"name" 1}`, "malformed JSON at byte 9: invalid character '1' after object key"},
		{`"x"`, "body must be a JSON object (the test body), not string"},
		{`{"name": 1}`, `member "name" must be a string, not number`},
		{`{"ids": "a"}`, `member "ids" must be an array of strings, not string`},
		{`{"in": {"n": 1.5}}`, `member "in.n" must be a whole number, not number 1.5`},
		{`{"ratio": "1"}`, `member "ratio" must be a number, not string`},
		{`{"ok": "yes"}`, `member "ok" must be true or false, not string`},
		{`{"nmae": "a"}`, `unknown member "nmae"`},
		// Go releases before 1.27 do not say which element; later ones do.
		{`{"nums": [1, "2"]}`, `every element of member "nums" must be a whole number, not string|member "nums[1]" must be a whole number, not string`},
		{`{"ins": [{"n": "1"}]}`, `member "ins.n" must be a whole number, not string|member "ins[0].n" must be a whole number, not string`},
	} {
		dec := json.NewDecoder(strings.NewReader(tc.in))
		dec.DisallowUnknownFields()
		var v body
		err := dec.Decode(&v)
		got, ok := JSONProblem(err, "the test body", &v)
		if !ok || !slices.Contains(strings.Split(tc.want, "|"), got) {
			t.Errorf("%s: %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	if got, ok := JSONProblem(errNotJSON{}, "", nil); ok || got != "" {
		t.Errorf("not a JSON error: %q, %v", got, ok)
	}
}

type errNotJSON struct{}

func (errNotJSON) Error() string { return "something else" }
