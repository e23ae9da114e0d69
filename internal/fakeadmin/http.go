package fakeadmin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Header and query bounds of the admin routes, those of the fake's routes.
const (
	maxHeaderBytes = 64 << 10 // 431 beyond it
	maxQueryBytes  = 16 << 10 // 414 beyond it
)

// writeJSON answers with v encoded as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// apiError is the error body, the shape of the fake's service routes.
type apiError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// writeError answers with the error object.
func writeError(w http.ResponseWriter, status int, code, format string, args ...any) {
	writeJSON(w, status, apiError{Error: code, Message: fmt.Sprintf(format, args...)})
}

// statusRecorder turns an error answer into a 413 once the request body
// went past its cap, whatever the handler made of the cut body.
type statusRecorder struct {
	http.ResponseWriter
	body    *cappedBody
	limit   int64
	status  int
	swallow bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 && code >= 400 && s.body != nil && s.body.over {
		s.status, s.swallow = http.StatusRequestEntityTooLarge, true
		s.ResponseWriter.Header().Del("Content-Length")
		writeError(s.ResponseWriter, http.StatusRequestEntityTooLarge, "body_too_large", "request body exceeds %d bytes", s.limit)
		return
	}
	if s.swallow {
		return
	}
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(p []byte) (int, error) {
	if s.swallow {
		return len(p), nil
	}
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the real writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// limitRequest answers 431, 414 or 413 when r's headers, query or
// declared body are too large, and otherwise caps r.Body at maxBody. It
// reports whether the request may go on.
func limitRequest(w *statusRecorder, r *http.Request, maxBody int64) bool {
	n := 0
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	switch {
	case n > maxHeaderBytes:
		writeError(w, http.StatusRequestHeaderFieldsTooLarge, "header_too_large", "request headers exceed %d bytes", maxHeaderBytes)
		return false
	case len(r.URL.RawQuery) > maxQueryBytes:
		writeError(w, http.StatusRequestURITooLong, "query_too_large", "query string exceeds %d bytes", maxQueryBytes)
		return false
	case r.ContentLength > maxBody:
		writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", "request body exceeds %d bytes", maxBody)
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
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		b.over = true
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
