package contract_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/internal/testkit/contract"
)

// exchange is one request and its answer, as the checkers take them.
type exchange struct {
	method, target  string
	reqType, body   string
	auth            bool
	chunked         bool // no Content-Length: the request's length is unknown (-1)
	status          int
	respType, reply string
}

// send checks e with c and ref (contract.Agree) and reports whether the
// checker found a violation on either side.
func (e exchange) send(t *testing.T, c *contract.Checker, ref *contract.Reference) bool {
	t.Helper()
	req := httptest.NewRequest(e.method, e.target, strings.NewReader(e.body))
	req.Header.Set("User-Agent", sdkAgent)
	if e.auth {
		req.Header.Set("Authorization", "Bearer t")
	}
	if e.reqType != "" {
		req.Header.Set("Content-Type", e.reqType)
	}
	if e.chunked {
		req.ContentLength = -1
	}
	header := http.Header{}
	if e.respType != "" {
		header.Set("Content-Type", e.respType)
	}
	v, w := contract.Agree(t, c, ref, req, []byte(e.body), true, e.status, header, []byte(e.reply))
	return v != nil || w != nil
}

// TestCheckersAgreeOnMutations holds the checker to the reference
// (kin-openapi) on the published exchanges and on mutations of each: of
// the answer and the request body, every member removed, an invented one
// added, each member retyped or its string changed (an enum value); of
// the request, each query parameter dropped or given a value of another
// type, a path identifier that is not a number, no bearer token, no
// Content-Length, other Content-Types, a body where none is declared;
// paths several templates match; of the answer, other
// statuses and Content-Types. Bodies the JSON examples lack (forms,
// multipart files, CSV, uploads) are mutated too. Each mutation must get
// the same verdict from both, with a fake's options off (and, for the
// operations they change, on); many
// must break the contract and many must not, so that agreement is not
// vacuous.
func TestCheckersAgreeOnMutations(t *testing.T) {
	t.Parallel()
	for _, options := range [][]string{nil, {"WithSCIMFullResources", "WithViewStatusDetail"}} {
		c, err := contract.Load(options...)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := contract.LoadReference(options...)
		if err != nil {
			t.Fatal(err)
		}
		var broke, passed int
		for _, e := range mutations() {
			if options != nil && !strings.Contains(e.target, "/scim/") && !strings.Contains(e.target, "/view/") {
				continue // what the options change
			}
			if e.send(t, c, ref) {
				broke++
			} else {
				passed++
			}
		}
		t.Logf("options %v: %d mutations break the contract, %d do not", options, broke, passed)
		if broke < 300 || passed < 200 {
			t.Errorf("options %v: %d mutations break the contract and %d do not: too few to compare the checkers", options, broke, passed)
		}
	}
}

// mutations are the published exchanges, the other bodies, and their
// mutations.
func mutations() []exchange {
	var out []exchange
	for _, p := range publishedExamples() {
		e := exchange{method: p.method, target: p.target, body: p.body, auth: true, status: p.status, reply: p.answer}
		if p.body != "" {
			e.reqType = "application/json"
		}
		if p.answer != "" {
			e.respType = "application/json"
		}
		out = append(out, e)
		out = append(out, requestMutations(e)...)
		out = append(out, answerMutations(e)...)
	}
	for _, e := range otherBodies() {
		out = append(out, e)
		out = append(out, requestMutations(e)...)
	}
	return out
}

// requestMutations are e with its request changed.
func requestMutations(e exchange) []exchange {
	var out []exchange
	add := func(f func(*exchange)) {
		m := e
		f(&m)
		out = append(out, m)
	}
	if e.reqType == "application/json" {
		for _, b := range mutateJSON(e.body) {
			add(func(m *exchange) { m.body = b })
		}
	}
	u, _ := url.Parse(e.target)
	q := u.Query()
	for _, target := range queryMutations(u.Path, q) {
		add(func(m *exchange) { m.target = target })
	}
	for _, extra := range []string{"include_errors=maybe", "max_errors=ten", "max_errors=1e3", "count=2", "count=two", "startIndex=-1", "has_header_row=1", "has_header_row=yes"} {
		add(func(m *exchange) { m.target = u.Path + "?" + joinQuery(q.Encode(), extra) })
	}
	for _, seg := range []string{"1729", "453"} {
		if strings.Contains(u.Path, "/"+seg+"/") || strings.HasSuffix(u.Path, "/"+seg) {
			for _, v := range []string{"abc", "-1", "1.5", "99999999999999999999", "%31%32"} {
				add(func(m *exchange) { m.target = strings.Replace(e.target, seg, v, 1) })
			}
		}
	}
	add(func(m *exchange) { m.auth = false })
	add(func(m *exchange) { m.chunked = true })
	add(func(m *exchange) { m.body, m.reqType, m.chunked = `{}`, "application/json", true })
	add(func(m *exchange) { m.target = e.target + "/" })
	add(func(m *exchange) { m.target = strings.ToUpper(e.target) })
	for _, method := range []string{"GET", "POST", "get"} {
		add(func(m *exchange) { m.method = method })
	}
	for _, ct := range []string{"", "text/plain", "APPLICATION/JSON; charset=utf-8", "application/scim+json"} {
		add(func(m *exchange) { m.reqType = ct })
	}
	add(func(m *exchange) { m.body, m.reqType = `{}`, "application/json" })
	add(func(m *exchange) { m.body, m.reqType = `{"a": 1}`, "application/json" })
	add(func(m *exchange) { m.body = "" })
	add(func(m *exchange) { m.body = "not json" })
	add(func(m *exchange) { m.body = e.body + " trailing" })
	return out
}

// queryMutations are the targets of path with each parameter of q
// dropped or given values of other types.
func queryMutations(path string, q url.Values) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(q)) {
		for _, v := range []string{"", "x", "drop"} {
			qq := url.Values{}
			maps.Copy(qq, q)
			if qq.Set(k, v); v == "drop" {
				qq.Del(k)
			}
			out = append(out, path+"?"+qq.Encode())
		}
	}
	return out
}

func joinQuery(q, extra string) string {
	if q == "" {
		return extra
	}
	return q + "&" + extra
}

// answerMutations are e with its answer changed.
func answerMutations(e exchange) []exchange {
	var out []exchange
	add := func(f func(*exchange)) {
		m := e
		f(&m)
		out = append(out, m)
	}
	for _, r := range mutateJSON(e.reply) {
		add(func(m *exchange) { m.reply = r })
	}
	for _, status := range []int{201, 304, 409, 503} {
		add(func(m *exchange) { m.status = status })
		add(func(m *exchange) {
			m.status, m.reply, m.respType = status, `{"error": "invalid_request"}`, "application/json"
		})
	}
	for _, ct := range []string{"", "text/plain", "Application/Json; charset=utf-8", "application/*"} {
		add(func(m *exchange) { m.respType = ct })
	}
	add(func(m *exchange) { m.reply = "" })
	add(func(m *exchange) { m.reply = "null" })
	add(func(m *exchange) { m.reply = e.reply + " trailing" })
	add(func(m *exchange) { m.reply = "{" })
	return out
}

// otherBodies are requests whose bodies the published JSON examples do
// not show (token forms, CSV and text loads, attached files, uploads),
// and requests to paths that several templates match.
func otherBodies() []exchange {
	ok := func(method, target, ct, body string) exchange {
		return exchange{method: method, target: target, reqType: ct, body: body, auth: true, status: 200, respType: "application/json", reply: `{}`}
	}
	file := func(parts ...string) (string, string) {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		for _, name := range parts {
			pw, _ := w.CreateFormFile(name, name+".csv")
			fmt.Fprint(pw, "a,b\n1,2\n")
		}
		w.Close()
		return w.FormDataContentType(), buf.String()
	}
	var out []exchange
	for _, form := range []string{"grant_type=client_credentials&client_id=c&client_secret=s", "grant_type=refresh_token&refresh_token=r",
		"grant_type=password", "client_id=c", "grant_type=", "grant_type=&grant_type=client_credentials", "grant_type=client_credentials&other=1", "grant_type=%zz", ""} {
		out = append(out, ok("POST", "/oauth/token", "application/x-www-form-urlencoded", form))
	}
	for _, target := range []string{"/bulk/v1/bulkload?integration_id=i", "/bulk/v1/bulkload_opportunity?integration_id=i&has_header_row=false"} {
		for _, parts := range [][]string{{"file"}, {}, {"other"}, {"file", "file"}, {"file", "other"}} {
			ct, body := file(parts...)
			out = append(out, ok("POST", target, ct, body))
		}
		ct, body := file("file")
		out = append(out, ok("POST", target, "multipart/form-data", body), ok("POST", target, strings.Replace(ct, "boundary=", "boundary=x", 1), body))
		for _, ct := range []string{"text/csv", "text/plain", "text/csv; charset=utf-8", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "application/octet-stream"} {
			out = append(out, ok("POST", target, ct, "a,b\n1,2\n"), ok("POST", target, ct, "\"unclosed\n"))
		}
		out = append(out, ok("POST", target, "application/json", `[{"a": "1"}]`), ok("POST", target, "application/json", `[1]`), ok("POST", target, "application/json", `{"a": "1"}`))
	}
	// Paths more than one template matches: the first in matching order
	// decides.
	for _, path := range []string{"/report/v1/view/metadata", "/report/v1/view/data", "/report/v1/view/chart-data",
		"/report/v1/view/data-schema", "/report/v1/view/prepare_export", "/report/v1/1/status", "/event/v1/subscriber/metadata"} {
		for _, method := range []string{"GET", "POST"} {
			out = append(out, ok(method, path, "application/json", `{}`), ok(method, path, "", ""))
		}
	}
	for _, method := range []string{"POST", "PUT"} {
		for _, ct := range []string{"", "text/csv", "application/octet-stream", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "application/json"} {
			e := ok(method, "/upload/u1", ct, "a,b\n1,2\n")
			e.auth, e.respType, e.reply = false, "", ""
			out = append(out, e)
		}
	}
	return out
}

// mutateJSON returns the mutations of a JSON text: of every object, each
// member removed, an invented member added; of every value, its type
// changed (retype), a string changed (an enum value), null, a number at
// the limits of the integer formats or a fraction; the whole value
// replaced. A text that is not JSON has none.
func mutateJSON(text string) []string {
	var v any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if text == "" || dec.Decode(&v) != nil {
		return nil
	}
	var out []string
	emit := func(w any) {
		b, _ := json.Marshal(w)
		out = append(out, string(b))
	}
	for _, w := range []any{nil, "x", json.Number("1"), []any{}, map[string]any{}} {
		emit(w)
	}
	walk(v, func(old any, replace func(any)) {
		ws := []any{nil, retype(old)}
		if _, ok := old.(json.Number); ok {
			// At and past the limits of int32 and int64, and a fraction.
			ws = append(ws, json.Number("2147483648"), json.Number("9223372036854775807"), json.Number("1e19"), json.Number("2.5"))
		}
		for _, w := range ws {
			replace(w)
			emit(v)
		}
	}, func(obj map[string]any, key string) {
		old := obj[key]
		delete(obj, key)
		emit(v)
		obj[key] = old
		if s, ok := old.(string); ok {
			obj[key] = s + "X"
			emit(v)
			obj[key] = old
		}
	}, func(obj map[string]any) {
		obj["invented"] = "x"
		emit(v)
		delete(obj, "invented")
	})
	return out
}

// retype returns a value of another type than v's: a string for a
// number, a negative fraction (not an integer, below any minimum) for a
// string, an object for an array, an array for an object or a boolean.
func retype(v any) any {
	switch v.(type) {
	case json.Number:
		return "x"
	case string:
		return json.Number("-1.5")
	case []any:
		return map[string]any{}
	}
	return []any{}
}

// walk calls value for every value below v with a function that replaces
// it (the value is restored after each call), member for every member of
// every object, and object for every object, v included; of a list, only
// its first element (the others have the same schema).
func walk(v any, value func(old any, replace func(any)), member func(map[string]any, string), object func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		object(v)
		for _, k := range slices.Sorted(maps.Keys(v)) {
			old := v[k]
			value(old, func(w any) { v[k] = w })
			v[k] = old
			member(v, k)
			walk(old, value, member, object)
		}
	case []any:
		if len(v) > 0 {
			old := v[0]
			value(old, func(w any) { v[0] = w })
			v[0] = old
			walk(old, value, member, object)
		}
	}
}
