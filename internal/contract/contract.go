// Package contract holds the SDK and the fake to the service's contract,
// api/openapi.yaml: a Checker validates a request and its answer against
// the document with kin-openapi's openapi3filter, and Middleware does so
// for every exchange a handler serves. The SDK's tests that talk to a fake
// wrap it in Middleware (fake.WithMiddleware; benchmarks aside): through
// internal/mocktest's FakeClient and ContractCheck, or Check. Only tests
// import this
// package: a library user never builds kin-openapi.
package contract

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/partnerapi/partner-go/api"
)

func init() {
	// Attached files (multipart parts) come as CSV, JSON or XLSX: read any
	// media type the document accepts as bytes.
	openapi3filter.RegisterBodyDecoder("*/*", openapi3filter.FileBodyDecoder)
}

// Checker validates exchanges against one contract document.
type Checker struct {
	doc    *openapi3.T
	router routers.Router
	// anyStatus are the statuses every operation may answer
	// (x-any-operation-statuses), their bodies unchecked.
	anyStatus map[int]string
	opts      *openapi3filter.Options
}

// extMark marks what the fake adds of its own: true for what it always
// adds, an option's name for what only that option adds.
const extMark = "x-fake-extension"

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
// options on (fake.Fake.Extensions), parsed and validated once per set of
// names.
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
	l.once.Do(func() { l.c, l.err = New(api.OpenAPI, options...) })
	return l.c, l.err
}

// New parses and validates an OpenAPI 3 document, for a fake with the
// named options on: the members, operations and statuses marked
// x-fake-extension with the name of another option are dropped, so that
// an answer carrying them is a violation. Naming an option the document
// marks nothing with is an error.
func New(doc []byte, options ...string) (*Checker, error) {
	l := openapi3.NewLoader()
	d, err := l.LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("contract: %w", err)
	}
	if err := d.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("contract: %w", err)
	}
	marked := dropOptionsOff(d, options)
	for _, o := range options {
		if !marked[o] {
			return nil, fmt.Errorf("contract: no member, operation or status is marked %s: %s", extMark, o)
		}
	}
	r, err := gorillamux.NewRouter(d)
	if err != nil {
		return nil, fmt.Errorf("contract: %w", err)
	}
	c := &Checker{doc: d, router: r, anyStatus: map[int]string{}}
	if raw, ok := d.Extensions["x-any-operation-statuses"].(map[string]any); ok {
		for k, v := range raw {
			n, err := strconv.Atoi(k)
			if err != nil {
				return nil, fmt.Errorf("contract: x-any-operation-statuses: %q is not a status", k)
			}
			c.anyStatus[n], _ = v.(string)
		}
	}
	c.opts = &openapi3filter.Options{
		// The request goes on as the SDK built it: no defaults filled in.
		SkipSettingDefaults:               true,
		IncludeResponseStatus:             true,
		RejectWhenRequestBodyNotSpecified: true,
		MultiError:                        true,
		AuthenticationFunc:                authenticate,
	}
	// The reason and where, without the schema's whole text.
	c.opts.WithCustomSchemaErrorFunc(func(e *openapi3.SchemaError) string {
		return fmt.Sprintf("%s (at /%s)", e.Reason, strings.Join(e.JSONPointer(), "/"))
	})
	return c, nil
}

// dropOptionsOff removes from d the operations, responses and schema
// properties marked with the name of an option that is not in on, and
// returns the names of all the options d marks.
func dropOptionsOff(d *openapi3.T, on []string) map[string]bool {
	f := &optionFilter{on: on, marked: map[string]bool{}, seen: map[*openapi3.Schema]bool{}}
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

// optionFilter is the walk of dropOptionsOff: the options that are on,
// the options the document marks, and the schemas already walked (a
// schema may be reached from several places).
type optionFilter struct {
	on     []string
	marked map[string]bool
	seen   map[*openapi3.Schema]bool
}

// off reports whether ext marks an option that is not on, and records
// the option it marks.
func (f *optionFilter) off(ext map[string]any) bool {
	o, ok := ext[extMark].(string)
	if ok {
		f.marked[o] = true
	}
	return ok && !slices.Contains(f.on, o)
}

// responses drops the responses marked with an option that is off and
// walks the schemas of the others.
func (f *optionFilter) responses(rs *openapi3.Responses) {
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

// schema drops the properties marked with an option that is off, in r
// and in every schema below it.
func (f *optionFilter) schema(r *openapi3.SchemaRef) {
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

// Doc is the parsed document.
func (c *Checker) Doc() *openapi3.T { return c.doc }

// authenticate checks that a request carries what its security scheme
// names: a bearer token in Authorization.
func authenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	switch in.SecuritySchemeName {
	case "bearerAuth":
		if !strings.HasPrefix(in.RequestValidationInput.Request.Header.Get("Authorization"), "Bearer ") {
			return errors.New("no bearer token in Authorization")
		}
		return nil
	}
	return fmt.Errorf("unknown security scheme %q", in.SecuritySchemeName)
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
	c  *Checker
	in *openapi3filter.RequestValidationInput
}

// CheckRequest finds the operation of req and validates its parameters,
// security and, unless body is nil (not read whole), its body. The
// request is not changed: it is validated through a copy holding body.
// It returns a Violation when the request breaks the contract; the
// Exchange is nil when no operation matches.
func (c *Checker) CheckRequest(req *http.Request, body []byte) (*Exchange, *Violation) {
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
	x := &Exchange{c: c, in: in}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		return x, &Violation{Key: x.Operation(), Side: "request", Err: err}
	}
	return x, nil
}

// Operation is the operationId of the exchange.
func (x *Exchange) Operation() string { return x.in.Route.Operation.OperationID }

// Method is the HTTP method of the exchange's request.
func (x *Exchange) Method() string { return x.in.Request.Method }

// Template is the path of the exchange's operation as the contract names
// it ("/report/v1/{reportId}/data").
func (x *Exchange) Template() string { return x.in.Route.Path }

// SDKMethod is the SDK method the contract says sends the operation
// (x-sdk-method, "Reports.DataPages"), "" when it names none.
func (x *Exchange) SDKMethod() string {
	s, _ := x.in.Route.Operation.Extensions["x-sdk-method"].(string)
	return s
}

// SDKOps are the operation names (core.Request.Op) of the SDK's requests
// to the exchange's operation, as the contract lists them (x-sdk-ops).
func (x *Exchange) SDKOps() []string {
	list, _ := x.in.Route.Operation.Extensions["x-sdk-ops"].([]any)
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
	if _, ok := x.c.anyStatus[status]; ok && x.in.Route.Operation.Responses.Status(status) == nil {
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

// maxChecked caps the bodies the Middleware keeps to check: a larger
// body is served as usual; of a larger request the parameters are still
// checked, a larger answer is not checked at all.
const maxChecked = 8 << 20

// sdkAgent starts the User-Agent of every request the SDK sends.
const sdkAgent = "partner-go/"

// Middleware returns a wrapper of a service's handler (such as the fake,
// through fake.WithMiddleware) that checks every exchange and calls
// report with each Violation, after the handler has answered. A request
// of the SDK (its User-Agent) must match an operation; a test's own
// requests to no operation pass unchecked (tests send them on purpose).
// A request that breaks its operation's parameters, security or body is a
// violation when the handler accepted it (2xx); refused, it shows the
// handler enforcing the contract (tests send bad input on purpose, through
// the SDK too). Every answer to an operation is checked. The body streams to the handler as
// the client sends it, a copy kept on the way; a body the handler did
// not read to its end is not checked. Answers are checked as written:
// not when the connection was taken over (a dropped or cut answer) or
// the client went away before the answer was whole.
func (c *Checker) Middleware(report func(*Violation)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tee := &teeBody{rc: r.Body}
			r.Body = tee
			rec := &recorder{ResponseWriter: w}
			next.ServeHTTP(rec, r)
			if rec.status == 0 {
				rec.status = http.StatusOK
			}
			x, v := c.CheckRequest(r, tee.complete())
			switch {
			case x == nil:
				if strings.HasPrefix(r.Header.Get("User-Agent"), sdkAgent) {
					report(v)
				}
				return
			case v != nil && rec.status/100 == 2:
				report(v)
			}
			if rec.hijacked || rec.body.over || r.Context().Err() != nil {
				return
			}
			if v := x.CheckResponse(rec.status, rec.Header(), rec.body.buf.Bytes()); v != nil {
				report(v)
			}
		})
	}
}

// recorder passes an answer through and keeps its status and a copy of
// its body, up to maxChecked.
type recorder struct {
	http.ResponseWriter
	status   int
	body     capped
	hijacked bool
}

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.body.write(p)
	return w.ResponseWriter.Write(p)
}

// Flush passes a flush on (a slow answer's pieces).
func (w *recorder) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

// Hijack passes the connection on; the answer is then not checked.
func (w *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.hijacked = true
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// capped keeps the bytes written to it until they pass maxChecked, then
// none (over).
type capped struct {
	buf  bytes.Buffer
	over bool
}

func (c *capped) write(p []byte) {
	switch {
	case c.over:
	case c.buf.Len()+len(p) > maxChecked:
		c.over, c.buf = true, bytes.Buffer{}
	default:
		c.buf.Write(p)
	}
}

// teeBody keeps a copy of what is read through it, up to maxChecked.
type teeBody struct {
	rc  io.ReadCloser
	buf capped
	eof bool
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.buf.write(p[:n])
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

func (b *teeBody) Close() error { return b.rc.Close() }

// complete returns the whole body when it was read to its end and kept,
// else nil.
func (b *teeBody) complete() []byte {
	if !b.eof || b.buf.over {
		return nil
	}
	return b.buf.buf.Bytes()
}
