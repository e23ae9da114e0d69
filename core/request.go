package core

// This file is the request side of the pipeline: what an operation asks
// for (Request), how its path is built (Pathf, PathSegment), and how the
// URL with its query is resolved against the base URL.

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
)

// Decoder reads a successful response body itself, for streaming answers.
type Decoder func(r io.Reader) error

// Request describes one operation.
type Request struct {
	// Op names the SDK operation ("reports.Export"): its span is
	// "partner." + Op.
	Op     string
	Method string
	// Path is relative to the base URL and already escaped (see Pathf).
	Path string
	// Template is the path with its variable segments named, the
	// url.template of the request's spans and metrics
	// ("/report/v1/{reportId}/data"); "" means Path without its query.
	Template string
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
	// Observe, when set, is called with every response the server sends
	// to this request, those that are retried included, before any retry
	// (an export slows down on 429 and 503 this way). It must not read or
	// close the body.
	Observe func(*http.Response)
}

// Pathf formats a path, escaping every string argument (of any string
// type, such as a named ID type) as one path segment: "/" and "?" inside
// it are escaped, and the dot segments "." and ".." are escaped too so
// that an identifier can never climb to another path.
func Pathf(format string, args ...any) string {
	// The usual verbs (%s of a string, %d of an integer) are written
	// here; anything else goes through fmt.
	var b strings.Builder
	b.Grow(len(format) + 40*len(args)) // room for a UUID each
	next := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		if i+1 == len(format) || next == len(args) {
			return pathfSlow(format, args)
		}
		i++
		if !appendArg(&b, format[i], args[next]) {
			return pathfSlow(format, args)
		}
		next++
	}
	if next != len(args) {
		return pathfSlow(format, args)
	}
	return b.String()
}

// appendArg writes a with the verb %s or %v (a string, escaped) or %d
// or %v (an integer), and reports whether it could.
func appendArg(b *strings.Builder, verb byte, a any) bool {
	var num [20]byte
	switch v := a.(type) {
	case string:
		if verb != 's' && verb != 'v' {
			return false
		}
		b.WriteString(escapeSegment(v))
	case int64:
		if verb != 'd' && verb != 'v' {
			return false
		}
		b.Write(strconv.AppendInt(num[:0], v, 10))
	case int:
		if verb != 'd' && verb != 'v' {
			return false
		}
		b.Write(strconv.AppendInt(num[:0], int64(v), 10))
	default:
		return false
	}
	return true
}

func pathfSlow(format string, args []any) string {
	esc := make([]any, len(args))
	for i, a := range args {
		if v := reflect.ValueOf(a); v.Kind() == reflect.String {
			esc[i] = escapeSegment(v.String())
		} else {
			esc[i] = a
		}
	}
	return fmt.Sprintf(format, esc...)
}

// PathSegment escapes s as one path segment, as Pathf escapes a string
// argument.
func PathSegment(s string) string { return escapeSegment(s) }

func escapeSegment(s string) string {
	switch s {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return url.PathEscape(s)
}

func (c *Client) pathOf(r *Request) string {
	if r.URL != "" {
		if u, err := url.Parse(r.URL); err == nil {
			return u.Path
		}
	}
	p, _, _ := strings.Cut(r.Path, "?")
	return p
}

func (c *Client) url(r *Request) (*url.URL, string, error) {
	if r.URL == "" && r.Query == nil && c.base != "" && plainPath(r.Path) {
		// The common case, without resolving a reference: the base URL
		// and the path, parsed once.
		us := c.base + strings.TrimPrefix(r.Path, "/")
		u, err := url.Parse(us)
		if err != nil {
			return nil, "", fmt.Errorf("partner: bad path %q: %w", r.Path, err)
		}
		return u, us, nil
	}
	u, err := c.resolve(r)
	if err != nil {
		return nil, "", err
	}
	return u, u.String(), nil
}

// plainPath reports whether p joins the base URL as it is: no dot
// segment, no empty segment.
func plainPath(p string) bool {
	p = strings.TrimPrefix(p, "/")
	return !strings.HasPrefix(p, ".") && !strings.Contains(p, "/.") && !strings.Contains(p, "//")
}

func (c *Client) resolve(r *Request) (*url.URL, error) {
	var u *url.URL
	if r.URL != "" {
		var err error
		if u, err = url.Parse(r.URL); err != nil {
			return nil, fmt.Errorf("partner: bad URL: %w", err)
		}
		if err := c.CheckScheme("URL", u); err != nil {
			return nil, err
		}
	} else {
		if c.cfg.BaseURL == nil {
			return nil, errors.New("partner: no base URL configured")
		}
		rel, err := url.Parse(strings.TrimPrefix(r.Path, "/"))
		if err != nil {
			return nil, fmt.Errorf("partner: bad path %q: %w", r.Path, err)
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
