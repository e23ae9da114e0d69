package contract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/partnerapi/partner-go/internal/contract"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// The reference checker: the contract check as kin-openapi's
// openapi3filter does it, with the options the Checker follows. The
// differential test holds the Checker's verdicts to it, and the tests
// that walk the document read it through Reference.Doc.

// fileDecoder registers, once, the decoder of attached files with
// kin-openapi (a registry of its own, global): the multipart parts come as
// CSV, JSON or XLSX, so any media type the document accepts is read as
// bytes. NewReference does it, before the first check: no start-up code.
var fileDecoder sync.Once

// Reference validates exchanges against one contract document with
// kin-openapi.
type Reference struct {
	doc       *openapi3.T
	router    routers.Router
	anyStatus map[int]bool
	opts      *openapi3filter.Options
}

var (
	refMu    sync.Mutex
	refLoads = map[string]*Reference{}
)

// LoadReference returns the Reference of openapi.json for a fake with the
// named options on, parsed once per set of names.
func LoadReference(options ...string) (*Reference, error) {
	options = slices.Sorted(slices.Values(options))
	key := strings.Join(options, ",")
	refMu.Lock()
	defer refMu.Unlock()
	if r := refLoads[key]; r != nil {
		return r, nil
	}
	r, err := NewReference(openapiJSON, options...)
	if err != nil {
		return nil, err
	}
	refLoads[key] = r
	return r, nil
}

// NewReference parses and validates an OpenAPI 3 document (JSON or YAML)
// with kin-openapi, for a fake with the named options on, as New does.
func NewReference(doc []byte, options ...string) (*Reference, error) {
	fileDecoder.Do(func() { openapi3filter.RegisterBodyDecoder("*/*", openapi3filter.FileBodyDecoder) })
	l := openapi3.NewLoader()
	d, err := l.LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("contract: %w", err)
	}
	if err := d.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("contract: %w", err)
	}
	marked := refDropOptionsOff(d, options)
	for _, o := range options {
		if !marked[o] {
			return nil, fmt.Errorf("contract: no member, operation or status is marked %s: %s", contract.ExtMark, o)
		}
	}
	r, err := gorillamux.NewRouter(d)
	if err != nil {
		return nil, fmt.Errorf("contract: %w", err)
	}
	c := &Reference{doc: d, router: r, anyStatus: map[int]bool{}}
	if raw, ok := d.Extensions["x-any-operation-statuses"].(map[string]any); ok {
		for k := range raw {
			n, err := strconv.Atoi(k)
			if err != nil {
				return nil, fmt.Errorf("contract: x-any-operation-statuses: %q is not a status", k)
			}
			c.anyStatus[n] = true
		}
	}
	c.opts = &openapi3filter.Options{
		// The request goes on as the SDK built it: no defaults filled in.
		SkipSettingDefaults:               true,
		IncludeResponseStatus:             true,
		RejectWhenRequestBodyNotSpecified: true,
		MultiError:                        true,
		AuthenticationFunc:                refAuthenticate,
	}
	// The reason and where, without the schema's whole text.
	c.opts.WithCustomSchemaErrorFunc(func(e *openapi3.SchemaError) string {
		return fmt.Sprintf("%s (at /%s)", e.Reason, strings.Join(e.JSONPointer(), "/"))
	})
	return c, nil
}

// refDropOptionsOff removes from d the operations, responses and schema
// properties marked with the name of an option that is not in on, and
// returns the names of all the options d marks.
func refDropOptionsOff(d *openapi3.T, on []string) map[string]bool {
	f := &refOptionFilter{on: on, marked: map[string]bool{}, seen: map[*openapi3.Schema]bool{}}
	if d.Components != nil {
		for _, r := range d.Components.Schemas {
			f.schema(r)
		}
	}
	for _, item := range d.Paths.Map() {
		for method, op := range item.Operations() {
			if f.off(op.Extensions) {
				item.SetOperation(method, nil)
				continue
			}
			f.responses(op.Responses)
		}
	}
	return f.marked
}

// refOptionFilter is the walk of refDropOptionsOff.
type refOptionFilter struct {
	on     []string
	marked map[string]bool
	seen   map[*openapi3.Schema]bool
}

func (f *refOptionFilter) off(ext map[string]any) bool {
	o, ok := ext[contract.ExtMark].(string)
	if ok {
		f.marked[o] = true
	}
	return ok && !slices.Contains(f.on, o)
}

func (f *refOptionFilter) responses(rs *openapi3.Responses) {
	for status, resp := range rs.Map() {
		if f.off(resp.Value.Extensions) {
			rs.Delete(status)
			continue
		}
		for _, mt := range resp.Value.Content {
			f.schema(mt.Schema)
		}
	}
}

func (f *refOptionFilter) schema(r *openapi3.SchemaRef) {
	if r == nil || r.Value == nil || f.seen[r.Value] {
		return
	}
	s := r.Value
	f.seen[s] = true
	for name, p := range s.Properties {
		if p.Value != nil && f.off(p.Value.Extensions) {
			delete(s.Properties, name)
			continue
		}
		f.schema(p)
	}
	f.schema(s.Items)
	f.schema(s.AdditionalProperties.Schema)
	for _, rs := range [][]*openapi3.SchemaRef{s.AllOf, s.AnyOf, s.OneOf} {
		for _, r := range rs {
			f.schema(r)
		}
	}
}

// Doc is the parsed document, without what the options that are off add.
func (c *Reference) Doc() *openapi3.T { return c.doc }

// refAuthenticate checks that a request carries what its security scheme
// names: a bearer token in Authorization.
func refAuthenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	switch in.SecuritySchemeName {
	case "bearerAuth":
		if !strings.HasPrefix(in.RequestValidationInput.Request.Header.Get("Authorization"), "Bearer ") {
			return errors.New("no bearer token in Authorization")
		}
		return nil
	}
	return fmt.Errorf("unknown security scheme %q", in.SecuritySchemeName)
}

// RefExchange is a request checked by the Reference, waiting for its
// answer.
type RefExchange struct {
	c  *Reference
	in *openapi3filter.RequestValidationInput
}

// CheckRequest is Checker.CheckRequest done by kin-openapi.
func (c *Reference) CheckRequest(req *http.Request, body []byte) (*RefExchange, *Violation) {
	probe := req.Clone(context.Background())
	probe.Body = http.NoBody
	if body != nil {
		probe.Body = io.NopCloser(bytes.NewReader(body))
	}
	route, params, err := c.router.FindRoute(probe)
	if err != nil {
		return nil, &Violation{Key: req.Method + " " + req.URL.Path, Side: "request", Err: fmt.Errorf("no operation in api/openapi.yaml: %w", err)}
	}
	opts := *c.opts
	opts.ExcludeRequestBody = body == nil
	in := &openapi3filter.RequestValidationInput{Request: probe, PathParams: params, Route: route, Options: &opts}
	x := &RefExchange{c: c, in: in}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		return x, &Violation{Key: x.Operation(), Side: "request", Err: err}
	}
	return x, nil
}

// Operation is the operationId of the exchange.
func (x *RefExchange) Operation() string { return x.in.Route.Operation.OperationID }

// Template is the path of the exchange's operation.
func (x *RefExchange) Template() string { return x.in.Route.Path }

// CheckResponse is Exchange.CheckResponse done by kin-openapi.
func (x *RefExchange) CheckResponse(status int, header http.Header, body []byte) *Violation {
	if x.c.anyStatus[status] && x.in.Route.Operation.Responses.Status(status) == nil {
		return nil
	}
	opts := *x.c.opts
	err := openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: x.in,
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &opts,
	})
	if err != nil {
		return &Violation{Key: x.Operation(), Side: "response", Err: fmt.Errorf("%d: %w", status, err)}
	}
	return nil
}
