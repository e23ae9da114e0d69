package contract

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

var (
	errPathNotFound     = errors.New("no matching operation was found")
	errMethodNotAllowed = errors.New("method not allowed")
)

// route finds the operation of a request and the values of its path's
// variables: the first path template (in matching order) that matches
// the request's escaped path decides, and its operation of the
// request's method.
func (d *document) route(req *http.Request) (*operation, map[string]string, error) {
	path := req.URL.EscapedPath()
	for _, item := range d.paths {
		m := item.re.FindStringSubmatch(path)
		if m == nil {
			continue
		}
		op := item.ops[req.Method]
		if op == nil {
			return nil, nil, errMethodNotAllowed
		}
		vars := make(map[string]string, len(item.vars))
		for i, name := range item.vars {
			vars[name] = m[i+1]
		}
		return op, vars, nil
	}
	return nil, nil, errPathNotFound
}

// checkRequest returns what breaks the operation's security, parameters
// and, unless body is nil, body.
func (op *operation) checkRequest(req *http.Request, vars map[string]string, body []byte) []error {
	var errs []error
	if err := op.checkSecurity(req); err != nil {
		errs = append(errs, err)
	}
	query := req.URL.Query()
	for _, p := range op.params {
		if err := p.check(req, vars, query); err != nil {
			errs = append(errs, err)
		}
	}
	if body != nil {
		if err := op.checkBody(req, body); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// checkSecurity: the request meets one of the operation's alternatives,
// each a set of bearer schemes (a bearer token in Authorization).
func (op *operation) checkSecurity(req *http.Request) error {
	if len(op.security) == 0 {
		return nil
	}
	bearer := strings.HasPrefix(req.Header.Get("Authorization"), "Bearer ")
	for _, names := range op.security {
		if len(names) == 0 || bearer {
			return nil
		}
	}
	return errors.New("security requirements failed: no bearer token in Authorization")
}

// check validates the parameter's value in the request.
func (p *parameter) check(req *http.Request, vars map[string]string, query url.Values) error {
	raw, found := p.raw(req, vars, query)
	value, err := p.parse(raw, found)
	if err != nil {
		return fmt.Errorf("parameter %q in %s has an invalid value %q: %w", p.name, p.in, raw, err)
	}
	switch {
	case p.required && !found:
		return fmt.Errorf("parameter %q in %s has an error: value is required but missing", p.name, p.in)
	case value == nil && found:
		return fmt.Errorf("parameter %q in %s has an error: empty value is not allowed", p.name, p.in)
	case value == nil:
		return nil
	}
	var v validation
	p.schema.validate(&v, value, nil)
	if len(v.errs) > 0 {
		return fmt.Errorf("parameter %q in %s has an error: %w", p.name, p.in, joinErrors(v.errs))
	}
	return nil
}

// raw returns the parameter's text in the request and whether it is
// there: a path variable that is not empty, a query parameter (its
// first value that is not empty, if any), a header's first value.
func (p *parameter) raw(req *http.Request, vars map[string]string, query url.Values) (string, bool) {
	switch p.in {
	case "path":
		v := vars[p.name]
		return v, v != ""
	case "query":
		vs, ok := query[p.name]
		return firstValue(vs), ok
	}
	vs, ok := req.Header[http.CanonicalHeaderKey(p.name)]
	if len(vs) == 0 {
		return "", ok
	}
	return vs[0], true
}

// firstValue is the first of a query's or form's values of one name
// that is not empty, or "".
func firstValue(vs []string) string {
	if i := slices.IndexFunc(vs, func(s string) bool { return s != "" }); i >= 0 {
		return vs[i]
	}
	return ""
}

// parse turns a parameter's text into a value of its schema's type; an
// empty text of another type than string is no value.
func (p *parameter) parse(raw string, found bool) (any, error) {
	if !found || raw == "" && p.schema.typ != "string" {
		return nil, nil
	}
	switch p.schema.typ {
	case "integer":
		bits := 64
		if p.schema.format == "int32" {
			bits = 32
		}
		n, err := strconv.ParseInt(raw, 10, bits)
		if err != nil {
			return nil, errors.Unwrap(err)
		}
		return n, nil
	case "number":
		if strings.ContainsFunc(raw, func(r rune) bool { return !strings.ContainsRune("+-.0123456789eE", r) }) {
			return nil, strconv.ErrSyntax
		}
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return nil, errors.Unwrap(err)
		}
		return f, nil
	case "boolean":
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, errors.Unwrap(err)
		}
		return b, nil
	}
	return raw, nil
}

// checkBody validates a request's body (read whole) against the
// operation's: a body where the operation takes none, a missing required
// one, a Content-Type it does not list, or a value its schema refuses.
func (op *operation) checkBody(req *http.Request, body []byte) error {
	if op.body == nil {
		// kin-openapi compares the request's Content-Length, which its
		// security check (when the operation has one) sets to the body's.
		n := req.ContentLength
		if len(op.security) > 0 {
			n = int64(len(body))
		}
		if n > 0 {
			return errors.New("request body has an error: request body not allowed for this request")
		}
		return nil
	}
	if len(body) == 0 {
		if op.body.required {
			return errors.New("request body has an error: value is required but missing")
		}
		return nil
	}
	if len(op.body.content) == 0 {
		return nil
	}
	return checkContent(op.body.content, req.Header.Get("Content-Type"), body, requestWords)
}

// contentWords are the messages of a failed checkContent, as kin-openapi
// words them for a request's body or an answer's.
type contentWords struct{ badType, badDecode, badSchema string }

var (
	requestWords = contentWords{
		badType:   "request body has an error: header Content-Type has unexpected value %q",
		badDecode: "request body has an error: failed to decode request body: %w",
		badSchema: "request body has an error: doesn't match schema: %w",
	}
	responseWords = contentWords{
		badType:   "response error: response header Content-Type has unexpected value: %q",
		badDecode: "response error: failed to decode response body: %w",
		badSchema: "response error: response body doesn't match schema: %w",
	}
)

// checkContent checks a body sent as media type ct against the media
// types content declares: ct must be one of them, and the body must
// decode as it and match its schema, when it has one.
func checkContent(content []*mediaType, ct string, body []byte, words contentWords) error {
	mt := lookup(content, ct)
	switch {
	case mt == nil:
		return fmt.Errorf(words.badType, ct)
	case mt.schema == nil:
		return nil
	}
	value, err := mt.decode(body, ct)
	if err != nil {
		return fmt.Errorf(words.badDecode, err)
	}
	var v validation
	mt.schema.validate(&v, value, nil)
	if len(v.errs) > 0 {
		return fmt.Errorf(words.badSchema, joinErrors(v.errs))
	}
	return nil
}

// response is the declared answer of a status: its own, its class's
// (2XX), or the default.
func (op *operation) response(status int) *response {
	if r := op.ownResponse(status); r != nil {
		return r
	}
	return op.responses["default"]
}

// ownResponse is the answer declared for status or its class, not the
// default.
func (op *operation) ownResponse(status int) *response {
	s := strconv.Itoa(status)
	if r := op.responses[s]; r != nil {
		return r
	}
	if 99 < status && status < 600 {
		return op.responses[s[:1]+"XX"]
	}
	return nil
}

// checkResponse validates an answer to the operation, as kin-openapi's
// ValidateResponse does: some statuses (redirections, 304) and answers to
// HEAD are not checked; a status must be declared; a body, where the
// answer declares content, must come as one of its media types and
// match its schema.
func (op *operation) checkResponse(method string, status int, header http.Header, body []byte) error {
	switch {
	case method == http.MethodHead, len(op.responses) == 0:
		return nil
	case status == http.StatusNotModified, status == http.StatusPermanentRedirect,
		status == http.StatusTemporaryRedirect, status == http.StatusMovedPermanently:
		return nil
	}
	r := op.response(status)
	if r == nil {
		return errors.New("response error: status is not supported")
	}
	for _, h := range r.headers {
		if err := h.checkAnswer(header); err != nil {
			return err
		}
	}
	if len(r.content) == 0 {
		return nil
	}
	return checkContent(r.content, header.Get("Content-Type"), body, responseWords)
}

// checkAnswer validates the response header p in an answer's header:
// its first value against its schema, and its presence when required.
func (p *parameter) checkAnswer(header http.Header) error {
	vs := header[http.CanonicalHeaderKey(p.name)]
	if len(vs) == 0 {
		if p.required {
			return fmt.Errorf("response header %q missing", p.name)
		}
		return nil
	}
	value, err := p.parse(vs[0], true)
	if err == nil && value == nil {
		err = errors.New("empty value")
	}
	if err != nil {
		return fmt.Errorf("response header %q has an invalid value %q: %w", p.name, vs[0], err)
	}
	var v validation
	p.schema.validate(&v, value, nil)
	if len(v.errs) > 0 {
		return fmt.Errorf("response header %q doesn't match schema: %w", p.name, joinErrors(v.errs))
	}
	return nil
}

// joinErrors is the errors of one value, " | " between them.
func joinErrors[E error](errs []E) error {
	text := make([]string, len(errs))
	for i, e := range errs {
		text[i] = e.Error()
	}
	return errors.New(strings.Join(text, " | "))
}
