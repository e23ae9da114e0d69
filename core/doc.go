// Package core is the request pipeline every service of the SDK sends
// through, and the error type its calls return. A service (scim.Service,
// reports.Service, ...) is a thin layer over a *Client: it describes each
// operation as a Request (method, path, query, body, whether it is safe
// to repeat) and calls Client.Do, which builds the URL and headers
// (Authorization, environment, user agent), sends through
// go-retryablehttp under the RetryPolicy (retries, the retry budget, the
// repeat with a new token after a 401), and decodes a 2xx answer or
// returns an *Error.
//
// partner.New builds one Client for a partner.Client and every service
// over it. A service can also be built alone over a Client made here:
//
//	tokens := core.New(core.Config{BaseURL: base})
//	auth := oauth.New(tokens, oauth.Options{ClientID: id, ClientSecret: secret})
//	svc := scim.New(tokens.WithTokens(auth))
//
// Writing an operation of a new service takes a Request and Do; a path
// with variable segments is a Route, its template and values in one
// statement (PathOf):
//
//	var u User
//	err := p.Do(ctx, &core.Request{Method: http.MethodGet, Route: core.PathOf("/api/scim/v2/Users/{id}", id)}, &u)
//
// A GET is repeated freely; a write says whether it is (Idempotent).
//
// Errors of the SDK start with "partner: " once (internal/errs adds
// context to an error without repeating it). Every sentinel error of the
// package is in errors.go.
//
// A call runs in stages, each in its file. client.go builds it
// (build.go, request.go, body.go, callopts.go: the URL, headers and
// body, the CallOptions read once) and hands the request to the call's
// go-retryablehttp client, which owns the attempt loop and calls the
// other stages back, as methods of the call (call.go), in this order for
// each attempt: the body opened anew (body.go); RequestLogHook
// (beforeAttempt, retry.go: the attempt's state and span); the call's
// HTTP client, whose transport sends each hop (send.go: no replay below
// the policy, noreplay.go; the response header and stall timeouts, one
// watch each per client, watch.go; the attempt timeout) and whose
// CheckRedirect is the call's redirect rule; CheckRetry (checkRetry,
// retry.go), which ends the attempt's span, reads a 2xx answer whole
// (answer.go) and decides whether to repeat it. Before a repeat the
// library calls Backoff (the wait checkRetry chose) and PrepareRetry
// (the repeat signed again); after the last, ErrorHandler drops a
// response that comes with an error. When the loop ends, client.go
// reports the call's end (report.go: the answer or the error, the
// capture and the log; otel.go, secrets.go, logtrace.go) and Do decodes
// the answer (answer.go).
package core
