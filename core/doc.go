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
// A call runs in stages, each in its file: build the request (build.go,
// request.go, body.go, callopts.go), send its attempts (send.go,
// noreplay.go), read the answer (answer.go), decide
// whether to repeat it (retry.go), report its end (report.go, otel.go,
// secrets.go, logtrace.go). client.go runs them in order.
package core
