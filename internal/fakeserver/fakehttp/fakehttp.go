// Package fakehttp holds the HTTP plumbing the fake's service routes
// (package fake) and its admin API (internal/fakeserver/fakeadmin) share: the JSON
// answers, the error body, the size limits of every request, and what is
// wrong with a JSON body, in JSON's words (JSONProblem).
package fakehttp

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
)

// Header, query and JSON body bounds of every route, the fake's own (the
// interface shows none): a long-running fake must not be made to hold an
// unbounded request.
const (
	// MaxHeaderBytes bounds the request headers (431 beyond it).
	MaxHeaderBytes = 64 << 10
	// MaxQueryBytes bounds the raw query string (414 beyond it).
	MaxQueryBytes = 16 << 10
	// MaxJSONBody bounds a JSON request body (413 beyond it), of the
	// fake's routes and the admin API's alike; the token endpoint, bulk
	// loads, uploads and the admin API's seed have their own bounds.
	MaxJSONBody = 4 << 20
)

// AdminPrefix is the path prefix of the admin API (internal/fakeserver/fakeadmin)
// that cmd/partnerfake serves beside the fake. No route of the service's
// interface starts with it; the fake refuses a webhook callback under it.
const AdminPrefix = "/_fake/"

// DeliveryUserAgent is the User-Agent of the fake's webhook deliveries;
// the admin API refuses requests that carry it.
const DeliveryUserAgent = "partner-fake-webhooks"

// WriteJSON answers with v encoded as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// APIError is the error body outside the token endpoint and SCIM, whose
// shape the interface does not show.
type APIError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// WriteError answers with the generic error object.
func WriteError(w http.ResponseWriter, status int, code, format string, args ...any) {
	WriteJSON(w, status, APIError{Error: code, Message: fmt.Sprintf(format, args...)})
}

// Recorder notes the status of the answer it passes on, and turns an
// error answer into a 413 once the request body went past the cap
// LimitRequest put on it, whatever the handler made of the cut body (the
// handler's own answer is then dropped).
type Recorder struct {
	http.ResponseWriter
	// Status is the status sent, 0 before the answer starts.
	Status int
	// Start, when set, is called once as the answer starts: its Status
	// is known and nothing of it has been sent.
	Start   func()
	body    *cappedBody
	limit   int64
	swallow bool
}

// WriteHeader sends code, or the 413 when the body went past its cap.
func (s *Recorder) WriteHeader(code int) {
	if s.Status == 0 && code >= 400 && s.body != nil && s.body.over {
		s.Status, s.swallow = http.StatusRequestEntityTooLarge, true
		s.started()
		s.ResponseWriter.Header().Del("Content-Length")
		WriteError(s.ResponseWriter, http.StatusRequestEntityTooLarge, "body_too_large", "request body exceeds %d bytes", s.limit)
		return
	}
	if s.swallow {
		return
	}
	if s.Status == 0 {
		s.Status = code
		s.started()
	}
	s.ResponseWriter.WriteHeader(code)
}

// started calls Start, once.
func (s *Recorder) started() {
	if f := s.Start; f != nil {
		s.Start = nil
		f()
	}
}

// Write sends p, unless the answer became the 413.
func (s *Recorder) Write(p []byte) (int, error) {
	if s.swallow {
		return len(p), nil
	}
	if s.Status == 0 {
		s.Status = http.StatusOK
		s.started()
	}
	return s.ResponseWriter.Write(p)
}

// Flush flushes the real writer when it can.
func (s *Recorder) Flush() {
	if fl, ok := s.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// Hijack lets a fault drop the connection.
func (s *Recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(s.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController and Hijack reach the real writer.
func (s *Recorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// LimitRequest answers 431, 414 or 413 when r's headers, query or
// declared body are too large, and otherwise caps r.Body at maxBody. It
// reports whether the request may go on.
func LimitRequest(w *Recorder, r *http.Request, maxBody int64) bool {
	n := 0
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	switch {
	case n > MaxHeaderBytes:
		WriteError(w, http.StatusRequestHeaderFieldsTooLarge, "header_too_large", "request headers exceed %d bytes", MaxHeaderBytes)
		return false
	case len(r.URL.RawQuery) > MaxQueryBytes:
		WriteError(w, http.StatusRequestURITooLong, "query_too_large", "query string exceeds %d bytes", MaxQueryBytes)
		return false
	case r.ContentLength > maxBody:
		WriteError(w, http.StatusRequestEntityTooLarge, "body_too_large", "request body exceeds %d bytes", maxBody)
		return false
	}
	if r.Body != nil && r.Body != http.NoBody {
		w.body = &cappedBody{rc: http.MaxBytesReader(w, r.Body, maxBody)}
		w.limit = maxBody
		r.Body = w.body
	}
	return true
}

// cappedBody notes that its reader went past the cap.
type cappedBody struct {
	rc   io.ReadCloser
	over bool
}

func (b *cappedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		b.over = true
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
