// Package errs holds the error helpers the SDK's packages share: the
// "partner: " prefix said once (Wrap, With), the not-found sentinels
// of answers that come with a 2xx (NotFound), and the cause of a request
// the SDK abandoned (ErrAbandoned).
package errs

import (
	"errors"
	"fmt"
	"strings"
)

// ErrAbandoned is the cause with which the SDK cancels a request whose
// answer it no longer needs (an export's read-ahead past the last page,
// or in flight when the export ends). core keeps such a request out of
// CallOptions.Capture, which tells the caller of the requests it made.
var ErrAbandoned = errors.New("partner: request abandoned: its answer is no longer needed")

// Prefix starts the text of every error of the SDK, once.
const Prefix = "partner: "

// Wrap adds context to err right after the SDK's Prefix, so that the
// Prefix appears once: Wrap(err, "reports: exporting report %d", 9) reads
// "partner: reports: exporting report 9: POST /report/...: 404 Not Found"
// where err read "partner: POST /report/...: 404 Not Found". errors.Is and
// errors.As see err. Wrap(nil, ...) is nil.
func Wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return &wrapped{msg: fmt.Sprintf(format, args...), err: err}
}

type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string {
	return Prefix + strings.TrimPrefix(w.msg, Prefix) + ": " + strings.TrimPrefix(w.err.Error(), Prefix)
}

func (w *wrapped) Unwrap() error { return w.err }

// With returns err with extra noted after it in parentheses, both seen by
// errors.Is and errors.As: With(a 503 *Error, ErrBodyNotReplayable) reads
// "partner: POST /bulk/v1/bulkload: 503 Service Unavailable (request body
// was already sent ...)", the Prefix once.
func With(err, extra error) error {
	return &with{err: err, extra: extra}
}

type with struct{ err, extra error }

func (w *with) Error() string {
	return w.err.Error() + " (" + strings.TrimPrefix(w.extra.Error(), Prefix) + ")"
}

func (w *with) Unwrap() []error { return []error{w.err, w.extra} }

// errNotFound is matched (errors.Is) by every not-found error of the SDK
// that is not a 404 answer, such as scim.ErrNotFound.
var errNotFound = errors.New(Prefix + "not found")

// NotFound returns a sentinel error with the given text that IsNotFound
// recognises, for "nothing matched" results that come with a 2xx answer.
func NotFound(text string) error { return &notFound{text} }

type notFound struct{ text string }

func (e *notFound) Error() string        { return e.text }
func (e *notFound) Is(target error) bool { return target == errNotFound }

// IsNotFoundMarker reports whether err is (or wraps) an error made by
// NotFound.
func IsNotFoundMarker(err error) bool { return errors.Is(err, errNotFound) }
