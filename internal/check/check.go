// Package check holds the checks the SDK's packages share on what they
// are given: a request body, a header name, a URL (the plain-http rule,
// in one place, plainhttp.go), and keeps a URL's password out of the
// messages about it (RedactedURL, URLParseError).
package check

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
)

// ReplayHeader returns an error saying why the header k cannot be set on
// the SDK's requests when it is one that changes net/http's replay
// rules (Idempotency-Key, X-Idempotency-Key, in any case): net/http
// sends a request carrying one again by itself after a broken
// connection, though the service may have processed it, and the
// service documents no idempotency key. nil for any other header.
func ReplayHeader(k string) error {
	switch http.CanonicalHeaderKey(k) {
	case "Idempotency-Key", "X-Idempotency-Key":
		return fmt.Errorf("%q would let net/http send a write again after a broken connection, "+
			"though the service may have processed it (the service documents no idempotency key)", k)
	}
	return nil
}

// Reader returns an error that names the problem when r cannot be
// read as a request body: a nil pointer in a non-nil io.Reader (a nil
// *os.File, say), or a closed *os.File. A nil r is not checked: callers
// say themselves whether a body is required.
func Reader(r io.Reader) error {
	if r == nil {
		return nil
	}
	if v := reflect.ValueOf(r); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("body is a nil %T", r)
	}
	if f, ok := r.(*os.File); ok {
		if _, err := f.Stat(); errors.Is(err, os.ErrClosed) {
			return fmt.Errorf("body file %s: %w", f.Name(), os.ErrClosed)
		}
	}
	return nil
}

// HeaderName reports whether name is a valid HTTP field name: a token of
// RFC 9110 (section 5.1, field-name = token; section 5.6.2, token =
// 1*tchar), one or more of the visible ASCII characters but the
// delimiters "(),/:;<=>?@[\]{} and DQUOTE.
func HeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !tchar(name[i]) {
			return false
		}
	}
	return true
}

// tchar reports whether b is a tchar of RFC 9110, section 5.6.2:
// "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" /
// "`" / "|" / "~" / DIGIT / ALPHA.
func tchar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}
