package fakehttp

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLimitRequest checks the answers to requests past each bound, and
// that a request within them goes on.
func TestLimitRequest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		req    func() *http.Request
		status int
		code   string
	}{
		{"headers", func() *http.Request {
			r := httptest.NewRequest("GET", "/x", nil)
			r.Header.Set("X-Pad", strings.Repeat("x", MaxHeaderBytes))
			return r
		}, http.StatusRequestHeaderFieldsTooLarge, "header_too_large"},
		{"query", func() *http.Request {
			return httptest.NewRequest("GET", "/x?q="+strings.Repeat("x", MaxQueryBytes), nil)
		}, http.StatusRequestURITooLong, "query_too_large"},
		{"declared body", func() *http.Request {
			return httptest.NewRequest("POST", "/x", strings.NewReader(strings.Repeat("x", 11)))
		}, http.StatusRequestEntityTooLarge, "body_too_large"},
	} {
		w := httptest.NewRecorder()
		rec := &Recorder{ResponseWriter: w}
		if LimitRequest(rec, tc.req(), 10) {
			t.Errorf("%s: the request goes on", tc.name)
			continue
		}
		var e APIError
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || w.Code != tc.status || rec.Status != tc.status || e.Error != tc.code || e.Message == "" {
			t.Errorf("%s: %d (recorded %d) %s, want %d %s", tc.name, w.Code, rec.Status, w.Body, tc.status, tc.code)
		}
	}
	w := httptest.NewRecorder()
	if !LimitRequest(&Recorder{ResponseWriter: w}, httptest.NewRequest("POST", "/x", strings.NewReader("0123456789")), 10) {
		t.Fatalf("a body at the cap is refused: %d %s", w.Code, w.Body)
	}
}

// TestRecorderBodyPastCap checks that a handler's error answer to a body
// cut at the cap becomes the 413, with the handler's own body dropped,
// and that its answers are passed on otherwise.
func TestRecorderBodyPastCap(t *testing.T) {
	handler := func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			WriteError(w, http.StatusBadRequest, "bad_body", "cannot read the body: %v", err)
			return
		}
		WriteJSON(w, http.StatusCreated, map[string]string{"ok": "yes"})
	}
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{"0123456789", http.StatusCreated, `{"ok":"yes"}`},
		{"0123456789a", http.StatusRequestEntityTooLarge, `{"error":"body_too_large","message":"request body exceeds 10 bytes"}`},
	} {
		r := httptest.NewRequest("POST", "/x", strings.NewReader(tc.body))
		r.ContentLength = -1 // unknown: the cap, not the declared length, catches it
		w := httptest.NewRecorder()
		rec := &Recorder{ResponseWriter: w}
		if !LimitRequest(rec, r, 10) {
			t.Fatalf("%q: refused before the handler: %d", tc.body, w.Code)
		}
		handler(rec, r)
		if got := strings.TrimSpace(w.Body.String()); w.Code != tc.status || rec.Status != tc.status || got != tc.want {
			t.Errorf("%q: %d (recorded %d) %s, want %d %s", tc.body, w.Code, rec.Status, got, tc.status, tc.want)
		}
	}
}
