package partner

import (
	"errors"
	"net/http"

	"github.com/partnerapi/partner-go/core"
)

// Error is core.Error, an answer of the service outside 2xx: `go doc core.Error` shows its fields.
type Error = core.Error

// ErrBodyNotReplayable is returned when a request had to be repeated but
// its body was a plain io.Reader already sent once.
var ErrBodyNotReplayable = core.ErrBodyNotReplayable

// IsBadRequest reports whether err is a 400 answer.
func IsBadRequest(err error) bool { return core.HasStatus(err, http.StatusBadRequest) }

// IsUnauthorized reports whether the service refused the client's
// credentials or token: a 401 answer, or the token endpoint's 400 with
// the OAuth code invalid_client (a wrong client id or secret),
// invalid_grant or unauthorized_client.
func IsUnauthorized(err error) bool { return core.IsUnauthorized(err) }

// IsForbidden reports whether err is a 403 answer.
func IsForbidden(err error) bool { return core.HasStatus(err, http.StatusForbidden) }

// IsNotFound reports whether err is a 404 answer, or a lookup of the SDK
// that found nothing, such as scim.ErrNotFound from FindByUserName.
func IsNotFound(err error) bool { return core.IsNotFound(err) }

// IsConflict reports whether err is a 409 answer (a SCIM uniqueness error).
func IsConflict(err error) bool { return core.HasStatus(err, http.StatusConflict) }

// IsRateLimited reports whether err is a 429 answer.
func IsRateLimited(err error) bool { return core.HasStatus(err, http.StatusTooManyRequests) }

// IsServerError reports whether err is a 5xx answer.
func IsServerError(err error) bool {
	e, ok := errors.AsType[*Error](err)
	return ok && e.StatusCode >= 500 && e.StatusCode <= 599
}

// ErrOutcomeUnknown marks the error of a write that is not safe to repeat
// (a SCIM create, a bulk load, a subscription) when the service may have
// processed it: the request was sent but its answer was lost, was a 5xx,
// or could not be read. Test it with IsOutcomeUnknown; what to do before
// writing again is in the doc of each such call.
var ErrOutcomeUnknown = core.ErrOutcomeUnknown

// IsOutcomeUnknown reports whether err is the error of a write that the
// service may have processed (see ErrOutcomeUnknown). The same is in the
// OutcomeUnknown field of an *Error. It is false for reads and idempotent
// writes, which the client repeats by itself and the caller may simply
// call again.
func IsOutcomeUnknown(err error) bool { return core.IsOutcomeUnknown(err) }

// ErrRetryBudgetExhausted is wrapped into the error of a call that was not
// retried because the client-wide retry budget was empty (see
// WithRetryBudget): the service has been failing for many calls at once.
var ErrRetryBudgetExhausted = core.ErrRetryBudgetExhausted

// ErrInsecureRedirect is returned for a redirect from https to plain http,
// which the client refuses.
var ErrInsecureRedirect = core.ErrInsecureRedirect

// ErrCrossHostRedirect is returned for a redirect to another host that the
// client refuses: one that would carry the request's body there, and any
// redirect of a token request.
var ErrCrossHostRedirect = core.ErrCrossHostRedirect

// ErrAnswerTooLarge is returned when an answer is longer than the limit
// for its kind (see docs/reliability.md, "Hostile server").
var ErrAnswerTooLarge = core.ErrAnswerTooLarge

// ErrAnswerStalled is returned when an answer's body sent nothing for the
// stall timeout (WithStallTimeout).
var ErrAnswerStalled = core.ErrAnswerStalled
