package core

// This file is the package's errors: every sentinel, and the *Error of
// an answer outside 2xx.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/partnerapi/partner-go/internal/errs"
)

// The sentinel errors of the package.

// ErrBodyNotReplayable is returned when a request must be sent again (a
// retry, or the repeat after a refreshed token) but its body came from a
// plain io.Reader that has already been read. Pass an io.ReadSeeker (an
// *os.File, say) or a BodyFunc to make such bodies replayable. The error
// also wraps the failure that asked for the repeat (an *Error or a
// network error), so errors.As still finds it.
var ErrBodyNotReplayable = errors.New("partner: request body was already sent and cannot be replayed; pass an io.ReadSeeker to allow retries")

// errStaleAttempt is returned to a previous attempt that is still reading
// a shared seekable body after a newer attempt rewound it.
var errStaleAttempt = errors.New("partner: request body rewound for a newer attempt")

// ErrAnswerTooLarge is returned when an answer's body is longer than the
// limit for its kind (DefaultMaxAnswerSize, MaxTokenAnswerSize, a
// Request's MaxAnswerSize), counted after decompression. It is not
// retried; a write that is not safe to repeat is marked with
// ErrOutcomeUnknown, since the service answered 2xx.
var ErrAnswerTooLarge = errors.New("partner: answer too large")

// ErrCrossHostRedirect is returned for a redirect to another host that
// the client refuses: one that would carry the request's body there (a
// 307 or 308 answer to a request with a body, whose body may hold a
// client secret, user data or a subscriber secret), and any redirect of
// a token request (Request.NoCrossHostRedirect), whose answer would be
// taken for a token.
var ErrCrossHostRedirect = errors.New("partner: refused a redirect to another host")

// ErrAnswerStalled is returned when an answer's body sent nothing for
// the stall timeout (Config.StallTimeout) while it was read. The attempt
// fails: a read is retried, a write that is not safe to repeat is
// marked with ErrOutcomeUnknown.
var ErrAnswerStalled = errors.New("partner: answer stalled: the server sent nothing for the stall timeout")

// ErrInsecureRedirect is returned for a redirect from https to plain
// http, which would send the request (and, on the same host, its
// Authorization header) in clear.
var ErrInsecureRedirect = errors.New("partner: refused a redirect from https to plain http")

// errResendRefused is the failure of an attempt whose transport would
// have sent it again by itself after a failure, when the retry policy
// allows no more attempts.
var errResendRefused = errors.New("partner: the connection failed and the transport would send the request again; the retry policy allows no more attempts")

// ErrRetryBudgetExhausted is wrapped into the error of a call that was
// not retried because the client-wide retry budget was empty: the
// service has been failing for many calls at once.
var ErrRetryBudgetExhausted = errors.New("partner: retry budget exhausted: the service is failing for many calls, not retrying")

// ErrOutcomeUnknown is wrapped into (or matched by) the error of a write
// that is not safe to repeat when the service may have processed it: the
// request was sent, but its answer was lost (a connection dropped after
// the request was written, a timeout), was a 5xx, or could not be read.
// Look the result up before doing the write again.
var ErrOutcomeUnknown = errors.New("partner: outcome unknown: the service may have processed the request")

// maxErrorBody caps how much of an error response body is read and kept.
const maxErrorBody = 64 << 10

// Error is an answer of the service outside 2xx. Every call of the SDK
// returns it (wrapped with context, so use errors.AsType, or the partner.IsX
// helpers) when the service answered with an error status. It says which
// call failed (Method, Path), how (StatusCode) and what the server said
// about it. It never holds a credential or a token.
//
// Its Error method reads "partner: METHOD PATH: STATUS TEXT: code:
// message". For example:
//
//	// *partner.Error is the same type as *core.Error
//	if perr, ok := errors.AsType[*partner.Error](err); ok && perr.SCIMType == "uniqueness" {
//		// the userName is taken
//	}
type Error struct {
	// StatusCode is the HTTP status of the answer (400, 404, 503, ...).
	StatusCode int
	// Method and Path name the request that failed: "POST",
	// "/report/v1/list". The path carries no query string.
	Method string
	Path   string
	// Code is the server's short error code when it sent one: the OAuth
	// `error` of the token endpoint (invalid_client, invalid_grant, ...),
	// the `error` member of the generic error object (or its `code` when
	// `error` is an object), or SCIM's `scimType`.
	Code string
	// Message is the server's human readable explanation (from
	// `message`, `error_description`, `detail` or `error.message`).
	Message string
	// URI is the OAuth `error_uri`, when present.
	URI string
	// SCIMType is the `scimType` of a SCIM error (uniqueness,
	// invalidValue, mutability, ...).
	SCIMType string
	// RetryAfter is the wait the server asked for with a Retry-After
	// header (seconds or an HTTP date), zero when absent.
	RetryAfter time.Duration
	// Body is the raw answer body, capped at 64 KiB.
	Body []byte
	// OutcomeUnknown is set on the answer to a write that is not safe to
	// repeat (a SCIM create, a bulk load, a subscription) when the
	// service may have processed it: the answer is a 5xx, or an earlier
	// attempt of the same call was. Look the result up before writing
	// again. errors.Is(err, ErrOutcomeUnknown) matches it.
	OutcomeUnknown bool
	// RequestID is the id the SDK generated for the call and sent in its
	// request id header (Config.RequestIDHeader), the same on every
	// attempt: quote it in a support request. "" when that header is off.
	RequestID string
	// ServiceRequestID is the service's own id of the request, from the
	// header Config.ServiceRequestIDHeader names; "" when none.
	ServiceRequestID string
}

// Is makes errors.Is(e, ErrOutcomeUnknown) report e.OutcomeUnknown.
func (e *Error) Is(target error) bool {
	return target == ErrOutcomeUnknown && e.OutcomeUnknown
}

// IsOutcomeUnknown reports whether err is the error of a write that the
// service may have processed (ErrOutcomeUnknown).
func IsOutcomeUnknown(err error) bool { return errors.Is(err, ErrOutcomeUnknown) }

// Error implements the error interface.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "partner: %s %s: %d %s", e.Method, e.Path, e.StatusCode, http.StatusText(e.StatusCode))
	switch {
	case e.Code != "" && e.Message != "" && e.Code != e.Message:
		fmt.Fprintf(&b, ": %s: %s", e.Code, e.Message)
	case e.Message != "":
		fmt.Fprintf(&b, ": %s", e.Message)
	case e.Code != "":
		fmt.Fprintf(&b, ": %s", e.Code)
	}
	if e.OutcomeUnknown {
		b.WriteString(" (outcome unknown: the service may have processed the request)")
	}
	return b.String()
}

// newError builds an Error from a response whose status is not 2xx. It
// reads (at most maxErrorBody of) the body and closes it.
func newError(resp *http.Response, method, path string) *Error {
	body, _ := readCapped(resp)
	e := &Error{
		StatusCode: resp.StatusCode,
		Method:     method,
		Path:       path,
		Body:       body,
	}
	e.RetryAfter, _ = retryAfterOf(resp)
	e.parseBody(body)
	return e
}

func readCapped(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	return io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
}

// parseBody reads the server's explanation liberally, since the error
// shape outside the token endpoint and SCIM is not documented: it looks at
// `message`, `error_description`, `detail`, `error` (a string or an object
// with its own `message`) and SCIM's `scimType`.
func (e *Error) parseBody(body []byte) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		if s := strings.TrimSpace(string(body)); s != "" && len(s) < 512 && !strings.ContainsAny(s, "<{") {
			e.Message = s
		}
		return
	}
	str := func(key string) string {
		var s string
		if raw, ok := m[key]; ok && json.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	}
	e.Code = str("error")
	if e.Code == "" {
		var nested struct {
			Code    any    `json:"code"`
			Message string `json:"message"`
		}
		if raw, ok := m["error"]; ok && json.Unmarshal(raw, &nested) == nil {
			e.Message = nested.Message
			if nested.Code != nil {
				e.Code = fmt.Sprint(nested.Code)
			}
		}
	}
	for _, key := range []string{"message", "error_description", "detail"} {
		if e.Message != "" {
			break
		}
		e.Message = str(key)
	}
	e.URI = str("error_uri")
	e.SCIMType = str("scimType")
	if e.Code == "" && e.SCIMType != "" {
		e.Code = e.SCIMType
	}
}

// HasStatus reports whether err is (or wraps) an *Error with one of the
// given status codes.
func HasStatus(err error, codes ...int) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	return slices.Contains(codes, e.StatusCode)
}

// IsNotFound reports whether err is (or wraps) a 404 answer or an error
// made by errs.NotFound.
func IsNotFound(err error) bool {
	return HasStatus(err, http.StatusNotFound) || errs.IsNotFoundMarker(err)
}

// authCodes are the OAuth error codes of the token endpoint that mean the
// client's credentials or grant were refused (RFC 6749 section 5.2).
var authCodes = map[string]bool{"invalid_client": true, "invalid_grant": true, "unauthorized_client": true}

// IsUnauthorized reports whether err is (or wraps) a refusal of the
// client's credentials or token: a 401 answer, or an answer of the token
// endpoint with the OAuth code invalid_client, invalid_grant or
// unauthorized_client (a wrong client secret is a 400 invalid_client).
func IsUnauthorized(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	return e.StatusCode == http.StatusUnauthorized || (e.StatusCode == http.StatusBadRequest && authCodes[e.Code])
}
