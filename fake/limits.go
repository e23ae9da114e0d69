package fake

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
)

// Size limits of every route, the fake's own (the interface shows none):
// a long-running fake must not be made to hold an unbounded request.
const (
	// maxHeaderBytes bounds the request headers (431 beyond it; NewServer
	// also sets it as the server's limit).
	maxHeaderBytes = 64 << 10
	// maxQueryBytes bounds the raw query string (414 beyond it).
	maxQueryBytes = 16 << 10
	// maxTokenBody caps the body of the token endpoint (413 beyond it).
	maxTokenBody = 64 << 10
	// maxLoadBody caps the body of a bulk load (413 beyond it). Loads are
	// parsed as they stream, so the cap bounds time, not memory.
	maxLoadBody = 4 << 30
	// maxUploadBody caps a file sent to a signed upload URL, with its
	// multipart framing (413 beyond it).
	maxUploadBody = maxUploadSize + 1<<20
)

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
		body := &cappedBody{rc: http.MaxBytesReader(w, r.Body, maxBody)}
		r.Body = body
		w.tooLarge = body.exceeded
		w.limit = maxBody
	}
	return true
}

// cappedBody notes that its reader went past the cap, so that the answer
// becomes a 413 whatever the handler made of the cut body.
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

func (b *cappedBody) exceeded() bool { return b.over }

// writeTooLarge is the 413 that replaces a handler's error answer to a
// body cut at the cap.
func writeTooLarge(w http.ResponseWriter, limit int64) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	json.NewEncoder(w).Encode(apiError{Error: "body_too_large", Message: "request body exceeds " + strconv.FormatInt(limit, 10) + " bytes"})
}
