package core

// This file is the request side of the pipeline: what an operation asks
// for (Request), how its path is built from a template and its values
// (PathOf), and how the URL with its query is resolved against the base
// URL.

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/go-querystring/query"

	"github.com/partnerapi/partner-go/internal/check"
)

// Decoder reads a successful response body itself, for streaming
// answers: Do hands it the body after the call, so an answer cut off
// while it reads is not repeated.
//
// Deprecated: set Request.Read, which reads the body inside the retry
// loop (an answer cut off is retried as a lost one), and call Do with a
// nil out, or Send.
type Decoder func(r io.Reader) error

// Request describes one operation.
type Request struct {
	// Op names the SDK operation ("reports.Export"): its span is
	// "partner." + Op.
	Op     string
	Method string
	// Path is relative to the base URL, for a path without variable
	// segments ("/report/v1/list"); without its query it is the
	// url.template of the request's spans and metrics.
	Path string
	// Route is the path of a request with variable segments, in place
	// of Path: Route: core.PathOf("/report/v1/{reportId}/data", id).
	Route Route
	// URL, when set, is an absolute URL used instead of base URL and Path
	// (signed upload URLs). Authorization is never sent to it.
	URL string
	// Query is a struct with `url` tags (go-querystring) or url.Values.
	Query any
	// JSON is encoded as the request body when non-nil.
	JSON any
	// Body is sent as is when JSON is nil. An io.ReadSeeker is rewound for
	// each attempt; any other reader can be sent only once.
	Body io.Reader
	// BodyFunc, when set, opens a fresh body for each attempt.
	BodyFunc BodyFunc
	// ContentType of Body or BodyFunc ("application/json" for JSON).
	ContentType string
	// Header adds headers to this request only.
	Header http.Header
	// Idempotent marks an operation that is safe to repeat after the
	// server may have processed it (reads, PUT, PATCH that set a value).
	Idempotent bool
	// NoAuth sends no Authorization header (the token endpoint itself).
	NoAuth bool
	// Token, when set, is sent as the bearer token instead of the
	// client's (token invalidation names the token this way).
	Token string
	// MaxAnswerSize caps the body of a 2xx answer, in bytes counted after
	// decompression (default DefaultMaxAnswerSize): a longer one fails
	// with ErrAnswerTooLarge.
	MaxAnswerSize int64
	// NoCrossHostRedirect refuses any redirect to another host
	// (ErrCrossHostRedirect), not only one that would carry the body: a
	// token request, whose answer another host must not give.
	NoCrossHostRedirect bool
	// Observe, when set, is called with every response the server sends
	// to this request, those that are retried included, before any retry
	// (an export slows down on 429 and 503 this way). It must not read or
	// close the body.
	Observe func(*http.Response)
	// Read, when set, reads the body of the 2xx answer inside the retry
	// loop, in place of the caller of Send: for a caller that decides
	// itself when to read an answer and how much of it to hold (an
	// export's pages wait unread in their connections until it takes
	// them). An answer cut off while Read reads it fails the attempt,
	// which is retried as a lost answer is; any other error of Read ends
	// the call with it. Read may be called once for each attempt that
	// was answered 2xx. The body is closed after Read, and Send returns
	// the response with an empty body.
	Read func(resp *http.Response) error
}

// Route is the path of a request with variable segments: its template,
// which is the url.template of the request's spans and metrics, and the
// escaped path built from the template and its values. Make one with
// PathOf.
type Route struct {
	template, path string
	err            error
}

// PathOf builds the Route of template, each "{name}" placeholder in it
// replaced in order by the matching value escaped as one path segment: a
// string (of any string type, such as a named ID type) with "/" and "?"
// inside it escaped, and the dot segments "." and ".." escaped too, so
// that an identifier can never climb to another path; an integer in
// decimal. A count of placeholders other than the count of values, or a
// value of another type, is a programming error that Client.Do and
// Client.Send return.
func PathOf(template string, values ...any) Route {
	rt := Route{template: template}
	rt.path, rt.err = expand(template, values)
	return rt
}

// Template is the path as the template writes it
// ("/report/v1/{reportId}/data").
func (rt Route) Template() string { return rt.template }

// String is the escaped path ("/report/v1/42/data"), "" when the values
// do not fit the template.
func (rt Route) String() string { return rt.path }

func expand(template string, values []any) (string, error) {
	if len(values) == 0 && strings.IndexByte(template, '{') < 0 {
		return template, nil
	}
	size := len(template)
	for _, v := range values {
		if str, ok := v.(string); ok {
			size += len(str) // unless it needs escaping
		} else {
			size += 20 // an integer
		}
	}
	var b strings.Builder
	b.Grow(size)
	p := template
	next := 0
	for {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(p[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("partner: path %q: unclosed placeholder", template)
		}
		if next == len(values) {
			return "", placeholderCount(template, len(values))
		}
		b.WriteString(p[:i])
		if !appendValue(&b, values[next]) {
			return "", fmt.Errorf("partner: path %q: %s: value of type %s, want a string or an integer",
				template, p[i:i+j+1], reflect.TypeOf(values[next]))
		}
		next++
		p = p[i+j+1:]
	}
	if next != len(values) {
		return "", placeholderCount(template, len(values))
	}
	b.WriteString(p)
	return b.String(), nil
}

func placeholderCount(template string, values int) error {
	return fmt.Errorf("partner: path %q has %d placeholders, given %d values",
		template, strings.Count(template, "{"), values)
}

// appendValue writes a as one escaped path segment (see PathOf) and
// reports whether it could.
func appendValue(b *strings.Builder, a any) bool {
	var num [20]byte
	switch v := a.(type) {
	case string:
		b.WriteString(escapeSegment(v))
	case int64:
		b.Write(strconv.AppendInt(num[:0], v, 10))
	case int:
		b.Write(strconv.AppendInt(num[:0], int64(v), 10))
	default:
		switch rv := reflect.ValueOf(a); rv.Kind() {
		case reflect.String:
			b.WriteString(escapeSegment(rv.String()))
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			b.Write(strconv.AppendInt(num[:0], rv.Int(), 10))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			b.Write(strconv.AppendUint(num[:0], rv.Uint(), 10))
		default:
			return false
		}
	}
	return true
}

// requestPath is the path of r: its Route's, or Path. A request with an
// absolute URL has neither.
func requestPath(r *Request) (string, error) {
	if r.URL != "" {
		if r.Path != "" || r.Route.template != "" {
			return "", fmt.Errorf("partner: request with both URL and a path")
		}
		return "", nil
	}
	if r.Route.template == "" {
		return r.Path, nil
	}
	if r.Path != "" {
		return "", fmt.Errorf("partner: request with both Path %q and Route %q", r.Path, r.Route.template)
	}
	return r.Route.path, r.Route.err
}

func escapeSegment(s string) string {
	switch s {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return url.PathEscape(s)
}

// url is the URL of r and its text; in the common case, the base URL
// joined with a plain path, the URL is nil and the text is the path,
// which newRequest joins to the base URL.
func (c *Client) url(r *Request) (*url.URL, string, error) {
	path, err := requestPath(r)
	if err != nil {
		return nil, "", err
	}
	if r.URL == "" && r.Query == nil && c.base != "" && plainPath(path) {
		// The common case, without resolving a reference.
		return nil, path, nil
	}
	u, err := c.resolve(r, path)
	if err != nil {
		return nil, "", err
	}
	return u, u.String(), nil
}

// parse parses us, the text of r's URL (url), for the error of a request
// that could not be made of it.
func (c *Client) parse(r *Request, us string) (*url.URL, error) {
	u, err := url.Parse(us)
	if err != nil {
		// The error of url.Parse repeats the base URL, which may
		// carry a password.
		path, _ := requestPath(r)
		return nil, fmt.Errorf("partner: bad path %q: %w", path, check.URLParseError(err))
	}
	return u, nil
}

// parseBase returns base, the base URL with a trailing slash, as
// net/http parses the URL of a request (its host's empty port dropped),
// when a relative path that reads the same escaped (literalPath) can be
// appended to its Path as it is: nil when base has an escaped path, a
// query or a fragment.
func parseBase(base string) *url.URL {
	req, err := http.NewRequest(http.MethodGet, base, nil)
	if err != nil {
		return nil
	}
	u := req.URL
	if u.Opaque != "" || u.RawPath != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Host == "" {
		return nil
	}
	return u
}

// literalPath reports whether url.Parse reads p, a path, as it is: no
// byte in it is escaped or would be (its Path is p, its RawPath empty).
func literalPath(p string) bool {
	for i := 0; i < len(p); i++ {
		if !literalBytes[p[i]] {
			return false
		}
	}
	return true
}

// literalBytes holds the bytes that url.Parse leaves as they are in a
// path, and that escaping it leaves so (literalPath).
var literalBytes = byteSet("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/$&+,:;=@")

func byteSet(bytes string) (set [256]bool) {
	for i := 0; i < len(bytes); i++ {
		set[bytes[i]] = true
	}
	return set
}

// plainPath reports whether p joins the base URL as it is: no dot
// segment, no empty segment.
func plainPath(p string) bool {
	p = strings.TrimPrefix(p, "/")
	return !strings.HasPrefix(p, ".") && !strings.Contains(p, "/.") && !strings.Contains(p, "//")
}

// resolve joins path (r.Path expanded) to the base URL, or parses r.URL,
// and adds r.Query.
func (c *Client) resolve(r *Request, path string) (*url.URL, error) {
	var u *url.URL
	if r.URL != "" {
		var err error
		if u, err = url.Parse(r.URL); err != nil {
			// Not the URL: it may carry a password or a signature.
			return nil, fmt.Errorf("partner: bad URL: %w", check.URLParseError(err))
		}
		if err := c.checkScheme("URL", u); err != nil {
			return nil, err
		}
	} else {
		if c.cfg.BaseURL == nil {
			return nil, errors.New("partner: no base URL configured")
		}
		rel, err := url.Parse(strings.TrimPrefix(path, "/"))
		if err != nil {
			return nil, fmt.Errorf("partner: bad path %q: %w", path, check.URLParseError(err))
		}
		base := *c.cfg.BaseURL
		if !strings.HasSuffix(base.Path, "/") {
			base.Path += "/"
			if base.RawPath != "" {
				base.RawPath += "/"
			}
		}
		u = base.ResolveReference(rel)
	}
	if r.Query != nil {
		var vals url.Values
		switch q := r.Query.(type) {
		case url.Values:
			vals = q
		default:
			var err error
			if vals, err = query.Values(q); err != nil {
				return nil, fmt.Errorf("partner: encoding query: %w", err)
			}
		}
		if len(vals) > 0 {
			merged := u.Query()
			for k, vs := range vals {
				merged[k] = append(merged[k], vs...)
			}
			u.RawQuery = merged.Encode()
		}
	}
	return u, nil
}
