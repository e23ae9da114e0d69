package partner

import (
	"context"

	"github.com/partnerapi/partner-go/core"
)

// CallOptions is what one call sets for itself beside its deadline:
// extra headers, an attempt timeout, its number of retries, and where to
// capture its final answer. See core.CallOptions.
type CallOptions = core.CallOptions

// ResponseInfo is the final answer of a call as CallOptions.Capture
// receives it: status, headers, attempts, duration and request ids.
type ResponseInfo = core.ResponseInfo

// WithCallOptions returns a context that carries o: every call made with
// it (every request of an iterator or a Wait given it) applies o. A
// write that is not safe to repeat is still never repeated after the
// service may have processed it, whatever o says.
func WithCallOptions(ctx context.Context, o CallOptions) context.Context {
	return core.WithCallOptions(ctx, o)
}
