package fake

// The signed upload URLs of the bulk area, hosted by the fake itself:
// GET /bulk/v1/bulkload/{integration_id}/upload_url hands one out,
// /upload/{id} receives the file (with POST unless withSignedUploads says
// otherwise), and a load's file_token takes it.

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

type ticketWire struct {
	UploadURL   string `json:"upload_url"`
	UploadToken string `json:"upload_token"`
}

// bulkUploadURL serves GET /bulk/v1/bulkload/{integration_id}/upload_url:
// a single-use URL on the fake itself (/upload/{id}) and the token
// that names the uploaded file in a later load; both expire after 15
// minutes. The file name must end in .csv, .json or .xlsx.
func (f *Fake) bulkUploadURL(w http.ResponseWriter, r *http.Request) {
	in, ok := f.bulkIntegration(w, r.PathValue("integration_id"), http.StatusNotFound)
	if !ok {
		return
	}
	name := r.URL.Query().Get("file_name")
	switch {
	case name == "":
		writeError(w, http.StatusBadRequest, "invalid_request", "file_name is required")
		return
	case formatOfFile(name) == "":
		writeError(w, http.StatusBadRequest, "invalid_request", "file_name %q must end in .csv, .json or .xlsx", name)
		return
	case f.URL() == "":
		writeError(w, http.StatusInternalServerError, "internal_error", "the fake does not know its own URL: call SetURL")
		return
	}
	up := &bulkUpload{
		token: newID("upt_", 16), urlID: newID("", 16), integrationID: in.ID,
		fileName: name, expires: f.clock.Now().Add(bulkUploadTTL),
	}
	f.bulk.mu.Lock()
	f.bulk.uploads[up.token] = up
	f.bulk.uploadURLs[up.urlID] = up
	f.bulk.upOrder = append(f.bulk.upOrder, up)
	f.bulk.sweepUploads(f.clock.Now())
	f.bulk.mu.Unlock()
	writeJSON(w, http.StatusOK, ticketWire{UploadURL: strings.TrimSuffix(f.URL(), "/") + "/upload/" + up.urlID, UploadToken: up.token})
}

// withSignedUploads makes the fake's signed upload URLs take the file
// only with method (POST when empty) and, when contentType is set, only
// with that Content-Type: a request with another method or content type
// is answered 403, as a cloud storage host answers a request that its
// URL's signature does not cover. This is the fake's own option, for
// testing a client's UploadParams; by default the URLs take POST with any
// content type, as the interface says.
func withSignedUploads(method, contentType string) Option {
	return func(f *Fake) { f.bulk.upMethod, f.bulk.upType = strings.ToUpper(method), contentType }
}

// bulkUpload serves /upload/{id}, the signed upload URL: no bearer token;
// the body is the file, kept in memory (at most 256 MiB, and at most
// Limits.UploadBytes for all files held: 413 beyond either). An unknown
// URL is a 404; a request the signature does not cover (a method other
// than POST, or as withSignedUploads says) or an expired URL a 403; a
// second upload a 409.
func (f *Fake) bulkUpload(w http.ResponseWriter, r *http.Request) {
	method := f.bulk.upMethod
	if method == "" {
		method = http.MethodPost
	}
	ctype := f.bulk.upType
	f.bulk.mu.Lock()
	up, ok := f.bulk.uploadURLs[r.PathValue("id")]
	var status int
	var msg string
	switch {
	case !ok:
		status, msg = http.StatusNotFound, "unknown upload URL"
	case r.Method != method || ctype != "" && r.Header.Get("Content-Type") != ctype:
		status, msg = http.StatusForbidden, fmt.Sprintf("the request does not match the URL's signature (%s %s), which is for %s", r.Method, r.Header.Get("Content-Type"), signedFor(method, ctype))
	case !f.clock.Now().Before(up.expires):
		status, msg = http.StatusForbidden, "upload URL expired"
	case up.uploaded:
		status, msg = http.StatusConflict, "a file was already uploaded to this URL"
	default:
		up.uploaded = true // claimed; a failed read releases it below
	}
	room := f.bulk.maxUploadBytes - f.bulk.upBytes
	f.bulk.mu.Unlock()
	if status != 0 {
		writeError(w, status, "invalid_request", "%s", msg)
		return
	}
	data, err := readChunks(r.Body, min(maxUploadSize, max(room, 0)))
	f.bulk.mu.Lock()
	status, code := http.StatusRequestEntityTooLarge, "body_too_large"
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
	case err != nil:
		status, code = http.StatusBadRequest, "invalid_request"
	case data.size > maxUploadSize:
		err = errors.New("file larger than 256 MiB")
	case f.bulk.upBytes+data.size > f.bulk.maxUploadBytes:
		err = fmt.Errorf("the fake holds %d bytes of uploaded files, its limit", f.bulk.maxUploadBytes)
	case f.bulk.uploadURLs[up.urlID] != up:
		status, code = http.StatusNotFound, "not_found"
		err = errors.New("upload URL forgotten while the file was sent")
	default:
		up.data = data
		f.bulk.upBytes += data.size
	}
	if err != nil {
		up.uploaded = false
	}
	f.bulk.mu.Unlock()
	if err != nil {
		writeError(w, status, code, "reading the upload: %v", err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func signedFor(method, ctype string) string {
	if ctype == "" {
		return method + " with any content type"
	}
	return method + " " + ctype
}

// sweepUploads forgets the uploads expired for more than a minute, and
// the oldest past maxUploads, with their files, so that a long-running
// fake does not keep files nobody loaded. A forgotten token is refused as
// unknown. Uploads expire in the order they were handed out, so the sweep
// stops at the first live one: O(1) amortised.
func (b *bulkStore) sweepUploads(now time.Time) {
	for len(b.upOrder) > 0 {
		up := b.upOrder[0]
		if len(b.upOrder) <= b.maxUploads && !now.After(up.expires.Add(time.Minute)) {
			break
		}
		delete(b.uploads, up.token)
		delete(b.uploadURLs, up.urlID)
		b.dropFile(up)
		b.upOrder[0] = nil
		b.upOrder = b.upOrder[1:]
	}
}

// dropFile lets go of the file of up.
func (b *bulkStore) dropFile(up *bulkUpload) {
	if up.data != nil {
		b.upBytes -= up.data.size
		up.data = nil
	}
}

// takeUpload marks the upload of token used and returns it, or says why
// the token cannot be used by a load of integrationID.
func (f *Fake) takeUpload(token, integrationID string) (*bulkUpload, string) {
	f.bulk.mu.Lock()
	defer f.bulk.mu.Unlock()
	up, ok := f.bulk.uploads[token]
	switch {
	case !ok:
		return nil, "unknown file_token"
	case up.used:
		return nil, "file_token was already used"
	case !f.clock.Now().Before(up.expires):
		return nil, "file_token expired"
	case up.integrationID != integrationID:
		return nil, "file_token belongs to another integration"
	case !up.uploaded || up.data == nil:
		return nil, "no file was uploaded for this file_token"
	}
	up.used = true
	out := *up
	f.bulk.dropFile(up) // the file is gone once loaded
	delete(f.bulk.uploadURLs, up.urlID)
	return &out, ""
}
