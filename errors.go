package partner

import (
	"errors"
	"net/http"

	"github.com/partnerapi/partner-go/internal/transport"
)

// Error is an answer of the service outside 2xx: status code, method and
// path, the server's code and message, and the raw body (capped). Use
// errors.As to get at it, or the Is helpers below.
type Error = transport.Error

// ErrBodyNotReplayable is returned when a request had to be repeated but
// its body was a plain io.Reader already sent once.
var ErrBodyNotReplayable = transport.ErrBodyNotReplayable

// IsBadRequest reports whether err is a 400 answer.
func IsBadRequest(err error) bool { return transport.HasStatus(err, http.StatusBadRequest) }

// IsUnauthorized reports whether err is a 401 answer.
func IsUnauthorized(err error) bool { return transport.HasStatus(err, http.StatusUnauthorized) }

// IsForbidden reports whether err is a 403 answer.
func IsForbidden(err error) bool { return transport.HasStatus(err, http.StatusForbidden) }

// IsNotFound reports whether err is a 404 answer.
func IsNotFound(err error) bool { return transport.HasStatus(err, http.StatusNotFound) }

// IsConflict reports whether err is a 409 answer (a SCIM uniqueness error).
func IsConflict(err error) bool { return transport.HasStatus(err, http.StatusConflict) }

// IsRateLimited reports whether err is a 429 answer.
func IsRateLimited(err error) bool { return transport.HasStatus(err, http.StatusTooManyRequests) }

// IsServerError reports whether err is a 5xx answer.
func IsServerError(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode >= 500 && e.StatusCode <= 599
}
