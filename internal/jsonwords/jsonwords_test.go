package jsonwords

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestProblem(t *testing.T) {
	type inner struct {
		N int64 `json:"n"`
	}
	type body struct {
		Name  string   `json:"name"`
		IDs   []string `json:"ids"`
		In    inner    `json:"in"`
		Ratio float64  `json:"ratio"`
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
	} {
		dec := json.NewDecoder(strings.NewReader(tc.in))
		dec.DisallowUnknownFields()
		var v body
		err := dec.Decode(&v)
		got, ok := Problem(err, "the test body")
		if !ok || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	if got, ok := Problem(errNotJSON{}, ""); ok || got != "" {
		t.Errorf("not a JSON error: %q, %v", got, ok)
	}
}

type errNotJSON struct{}

func (errNotJSON) Error() string { return "something else" }
