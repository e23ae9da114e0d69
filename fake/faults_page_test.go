package fake

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/internal/fakeserver/fakehttp"
)

// TestFaultOnOnePage: a fault with a PageSize applies to the requests for
// that page alone (number and size), whatever comes before it; the
// handler still reads the body the fault matched on. A body without a
// page asks for page 0 of 100.
func TestFaultOnOnePage(t *testing.T) {
	f := New()
	id := smallReport(f, 3)
	path := fmt.Sprintf("/report/v1/%d/data", id)
	f.InjectFault(Fault{Method: http.MethodPost, Path: "/report/v1/*/data", PageNumber: 1, PageSize: 2, Status: http.StatusServiceUnavailable, Times: 1})
	for _, tc := range []struct {
		body string
		code int
		want string
	}{
		{`{"page":{"number":0,"size":2}}`, 200, `"S":"r1"`},
		{`{"page":{"number":2,"size":1}}`, 200, `"S":"r2"`},
		{`{}`, 200, `"S":"r2"`},
		{`{"page":`, 400, "malformed JSON"},
		{` {"page":{"size":2, "number":1}}`, 503, "injected fault"},
		{`{"page":{"number":1,"size":2}}`, 200, `"S":"r2"`}, // Times: 1 is spent
	} {
		if code, body := call(t, f, http.MethodPost, path, tc.body); code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s, want %d with %s", tc.body, code, body, tc.code, tc.want)
		}
	}
	if n := len(f.Faults()); n != 0 {
		t.Errorf("%d faults in force, want the spent one gone", n)
	}

	// The default page, and a page fault in force for every request.
	f.InjectFault(Fault{Path: path, PageSize: defaultPageSize, Status: http.StatusTooManyRequests})
	for _, body := range []string{``, `{}`, `{"page":{"number":0,"size":100}}`} {
		if code, _ := call(t, f, http.MethodPost, path, body); code != http.StatusTooManyRequests {
			t.Errorf("%q: %d, want 429", body, code)
		}
	}
	if code, _ := call(t, f, http.MethodPost, path, `{"page":{"number":0,"size":99}}`); code != 200 {
		t.Errorf("another page size: %d, want 200", code)
	}
}

// TestFaultOnOnePageBodyTooLarge: while a fault with a PageSize is in
// force, a body over the size limit whose length is not announced is
// still refused as too large; it matches no page.
func TestFaultOnOnePageBodyTooLarge(t *testing.T) {
	f := New()
	id := smallReport(f, 3)
	f.InjectFault(Fault{PageNumber: 0, PageSize: 1, Status: http.StatusServiceUnavailable})
	body := io.MultiReader(strings.NewReader(`{"page":{"number":0,"size":1},"x":"`), &endless{b: 'a', n: fakehttp.MaxJSONBody}, strings.NewReader(`"}`))
	req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/report/v1/%d/data", id), body)
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+handlerToken(t, f))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	f.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("%d %.200s, want 413", rec.Code, rec.Body.String())
	}
	if got := f.Faults(); len(got) != 1 {
		t.Fatalf("Faults() = %+v, want the fault in force", got)
	}
}

// readFlag is a request body that notes whether it was read.
type readFlag struct {
	io.Reader
	read bool
}

func (r *readFlag) Read(p []byte) (int, error) {
	r.read = true
	return r.Reader.Read(p)
}

// TestFaultOnOnePageReadsOnlyItsRoutes: a fault with a PageSize reads
// ahead the body of the requests its Method and Path match, and of no
// other request (whose body may be a bulk load or an upload).
func TestFaultOnOnePageReadsOnlyItsRoutes(t *testing.T) {
	f := New()
	f.InjectFault(Fault{Method: http.MethodPost, Path: "/report/v1/*/data", PageSize: 2, Status: http.StatusServiceUnavailable})
	for _, tc := range []struct {
		method, path string
		readAhead    bool
	}{
		{http.MethodPost, "/report/v1/7/data", true},
		{http.MethodPost, "/report/v1/list", false},
		{http.MethodGet, "/event/v1/subscriber", false},
	} {
		body := &readFlag{Reader: strings.NewReader(`{"page":{"number":0,"size":2}}`)}
		// No token: the fault, if any, answers before the handler, and
		// otherwise the token check does; no handler reads the body.
		f.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(tc.method, tc.path, body))
		if body.read != tc.readAhead {
			t.Errorf("%s %s: body read ahead %v, want %v", tc.method, tc.path, body.read, tc.readAhead)
		}
	}
}
