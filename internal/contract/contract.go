// Package contract is the service's contract, api/openapi.yaml, as a
// program applies it: a Checker validates a request and its answer
// against the document, and Middleware does so for every exchange a
// handler serves. The module's tests hold the SDK and the fake to it
// through internal/testkit/contract (Check, Fail); package doctor holds
// a deployment to it (Exchange.Findings, Exchange.Objects).
//
// The Checker reads the document's JSON form, openapi.json, generated
// from api/openapi.yaml (the document edited by hand) and embedded here;
// after an edit of api/openapi.yaml, rewrite it with
//
//	go test ./internal/testkit/contract -run TestJSONForm -update
//
// TestJSONForm fails while it is stale. The Checker imports only the
// standard library, so that the many test binaries that link it stay
// small. It applies what the document uses, with the semantics of
// kin-openapi's openapi3filter (the reference its tests hold it to,
// exchange by exchange): routing of path templates, path, query and
// header parameters of primitive types, bearer security, request bodies
// (JSON, forms, multipart files, any bytes), declared statuses and media
// types, and the JSON Schema keywords type, format, enum, minimum,
// maximum, nullable, properties, required, additionalProperties, items
// and oneOf. New refuses a document that uses anything else (another
// keyword, parameter style or media type), naming it, so that no part
// of the contract goes unchecked unnoticed.
package contract

import (
	_ "embed"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// openapiJSON is the JSON form of api/openapi.yaml (TestJSONForm).
//
//go:embed openapi.json
var openapiJSON []byte

// JSONForm is the embedded JSON form of api/openapi.yaml that Load reads.
func JSONForm() []byte { return openapiJSON }

// Checker validates exchanges against one contract document.
type Checker struct {
	doc *document
	// anyStatus are the statuses every operation may answer
	// (x-any-operation-statuses), their bodies unchecked.
	anyStatus map[int]bool
}

var (
	loadsMu sync.Mutex
	loads   = map[string]*loaded{}
)

type loaded struct {
	once sync.Once
	c    *Checker
	err  error
}

// Load returns the Checker of api/openapi.yaml for a fake with the named
// options on (fake.Fake.Extensions), parsed once per set of names.
func Load(options ...string) (*Checker, error) {
	options = slices.Sorted(slices.Values(options))
	key := strings.Join(options, ",")
	loadsMu.Lock()
	l := loads[key]
	if l == nil {
		l = &loaded{}
		loads[key] = l
	}
	loadsMu.Unlock()
	l.once.Do(func() { l.c, l.err = New(openapiJSON, options...) })
	return l.c, l.err
}

// New parses an OpenAPI 3.0 document in its JSON form, for a fake with
// the named options on: the members, operations and statuses marked
// x-fake-extension with the name of another option are dropped, so that
// an answer carrying them is a violation. Naming an option the document
// marks nothing with is an error, and so is a document that uses what
// the Checker does not apply.
func New(doc []byte, options ...string) (*Checker, error) {
	d, schemas, err := parseDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("contract: %w", err)
	}
	marked := dropOptionsOff(d, options)
	for _, o := range options {
		if !marked[o] {
			return nil, fmt.Errorf("contract: no member, operation or status is marked %s: %s", ExtMark, o)
		}
	}
	for _, s := range schemas {
		s.empty = s.isEmpty(map[*schema]bool{})
	}
	c := &Checker{doc: d, anyStatus: map[int]bool{}}
	if raw, ok := d.ext["x-any-operation-statuses"].(map[string]any); ok {
		for k := range raw {
			n, err := strconv.Atoi(k)
			if err != nil {
				return nil, fmt.Errorf("contract: x-any-operation-statuses: %q is not a status", k)
			}
			c.anyStatus[n] = true
		}
	}
	return c, nil
}

// A Violation is an exchange that breaks the contract.
type Violation struct {
	// Key names what broke: the operationId, or "METHOD /path" for a
	// request that matches no operation.
	Key string
	// Side is "request" or "response".
	Side string
	Err  error
}

// Error says what broke, where: "contract: <key> <side>: <reason>".
func (v *Violation) Error() string {
	return fmt.Sprintf("contract: %s %s: %v", v.Key, v.Side, v.Err)
}

// Exchange is a request checked against the document, waiting for its
// answer.
type Exchange struct {
	c      *Checker
	op     *operation
	method string
}

// CheckRequest finds the operation of req and validates its parameters,
// security and, unless body is nil (not read whole), its body. The
// request is not changed. It returns a Violation when the request breaks
// the contract; the Exchange is nil when no operation matches.
func (c *Checker) CheckRequest(req *http.Request, body []byte) (*Exchange, *Violation) {
	op, vars, err := c.doc.route(req)
	if err != nil {
		return nil, &Violation{Key: req.Method + " " + req.URL.Path, Side: "request", Err: fmt.Errorf("no operation in api/openapi.yaml: %w", err)}
	}
	x := &Exchange{c: c, op: op, method: req.Method}
	if errs := op.checkRequest(req, vars, body); len(errs) > 0 {
		return x, &Violation{Key: x.Operation(), Side: "request", Err: joinErrors(errs)}
	}
	return x, nil
}

// Operation is the operationId of the exchange.
func (x *Exchange) Operation() string { return x.op.id }

// Method is the HTTP method of the exchange's request.
func (x *Exchange) Method() string { return x.method }

// Template is the path of the exchange's operation as the contract names
// it ("/report/v1/{reportId}/data").
func (x *Exchange) Template() string { return x.op.path.template }

// SDKOps are the operation names (core.Request.Op) of the SDK's requests
// to the exchange's operation, as the contract lists them (x-sdk-ops).
func (x *Exchange) SDKOps() []string {
	list, _ := x.op.ext["x-sdk-ops"].([]any)
	out := make([]string, 0, len(list))
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// CheckResponse validates an answer: its status must be one the
// operation declares (or one of x-any-operation-statuses, whose body is
// not checked), and its body must match the declared media type and
// schema.
func (x *Exchange) CheckResponse(status int, header http.Header, body []byte) *Violation {
	if x.c.anyStatus[status] && x.op.ownResponse(status) == nil {
		return nil
	}
	if err := x.op.checkResponse(x.method, status, header, body); err != nil {
		return &Violation{Key: x.Operation(), Side: "response", Err: fmt.Errorf("%d: %w", status, err)}
	}
	return nil
}
