// Package contract holds the SDK and the fake to the service's contract,
// api/openapi.yaml, in the module's tests: the SDK's tests that talk to a
// fake wrap it in the contract's Middleware (fake.WithMiddleware;
// benchmarks aside), through internal/testkit/mocktest's FakeClient and
// ContractCheck, or Check, which fails the test on a violation (Fail)
// unless PendingCorrections lists it. Only tests import this package.
//
// The checker itself is internal/contract (this package names its types
// as its own), so that package doctor, which holds a deployment to the
// same contract, links no test harness. The document's JSON form,
// internal/contract/openapi.json, is rewritten after an edit of
// api/openapi.yaml with
//
//	go test ./internal/testkit/contract -run TestJSONForm -update
//
// and TestJSONForm fails while it is stale. This package's tests hold
// the checker to kin-openapi's openapi3filter (the reference), exchange
// by exchange.
package contract

import "github.com/partnerapi/partner-go/internal/contract"

// Checker, Violation and Exchange are internal/contract's.
type (
	Checker   = contract.Checker
	Violation = contract.Violation
	Exchange  = contract.Exchange
)

// Load returns the Checker of api/openapi.yaml for a fake with the named
// options on (internal/contract.Load).
func Load(options ...string) (*Checker, error) { return contract.Load(options...) }

// New parses an OpenAPI 3.0 document in its JSON form for a fake with the
// named options on (internal/contract.New).
func New(doc []byte, options ...string) (*Checker, error) { return contract.New(doc, options...) }

// openapiJSON is the JSON form of api/openapi.yaml that Load reads.
var openapiJSON = contract.JSONForm()
