package core

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// FuzzNewError feeds arbitrary error bodies to the error parser: it must
// never panic, must keep the body (capped), and the error text must name
// the call.
func FuzzNewError(f *testing.F) {
	for _, seed := range []string{
		`{"error":"invalid_client","error_description":"bad secret"}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"409","scimType":"uniqueness","detail":"taken"}`,
		`{"error":{"code":42,"message":"nested"}}`,
		`{"error":"not_found","message":"report 7 not found"}`,
		`plain text`, `<html>oops</html>`, `{"message":null}`, `[1,2]`, ``,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		resp := &http.Response{StatusCode: 400, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
		e := newError(resp, "POST", "/x")
		if len(body) <= maxErrorBody && !bytes.Equal(e.Body, []byte(body)) {
			t.Fatalf("body not kept: %q", e.Body)
		}
		if len(e.Body) > maxErrorBody {
			t.Fatalf("body not capped: %d bytes", len(e.Body))
		}
		if msg := e.Error(); !strings.HasPrefix(msg, "partner: POST /x: 400 Bad Request") {
			t.Fatalf("Error() = %q", msg)
		}
	})
}
