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

// ErrOutcomeUnknown marks the error of a write that is not safe to repeat
// (a SCIM create, a bulk load, a subscription) when the service may have
// processed it: the request was sent but its answer was lost, was a 5xx,
// or could not be read. Test it with IsOutcomeUnknown; what to do before
// writing again is in the doc of each such call.
var ErrOutcomeUnknown = transport.ErrOutcomeUnknown

// IsOutcomeUnknown reports whether err is the error of a write that the
// service may have processed (see ErrOutcomeUnknown). The same is in the
// OutcomeUnknown field of an *Error. It is false for reads and idempotent
// writes, which the client repeats by itself and the caller may simply
// call again.
func IsOutcomeUnknown(err error) bool { return transport.IsOutcomeUnknown(err) }

// ErrRetryBudgetExhausted is wrapped into the error of a call that was not
// retried because the client-wide retry budget was empty (see
// WithRetryBudget): the service has been failing for many calls at once.
var ErrRetryBudgetExhausted = transport.ErrRetryBudgetExhausted

// ErrInsecureRedirect is returned for a redirect from https to plain http,
// which the client refuses.
var ErrInsecureRedirect = transport.ErrInsecureRedirect
