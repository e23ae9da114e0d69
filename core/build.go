package core

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/partnerapi/partner-go/internal/errs"
)

// This file is the build stage: the state of a call of a Request and
// the request its attempts send (URL, headers, body). request.go is what
// an operation asks for, body.go its body, callopts.go the per-call
// options read into the call.

// newCall fills st, the state of a call of r, sent to u with body b:
// its options (those of ctx, unless it is a call made for another call,
// such as its token request), its request id and its telemetry.
func (c *Client) newCall(ctx context.Context, st *call, r *Request, u *url.URL, b *body, decodes bool) error {
	st.c, st.method, st.path, st.idempotent, st.body = c, r.Method, u.Path, c.repeatable(r), b
	st.observe, st.read, st.start, st.decodes = r.Observe, r.Read, time.Now(), decodes
	st.auth = c.cfg.Tokens != nil && !r.NoAuth && r.URL == "" && r.Token == ""
	st.maxAnswer, st.sameHost = orDefault(r.MaxAnswerSize, DefaultMaxAnswerSize), r.NoCrossHostRedirect
	c.secrets.add(r.Token)
	if err := st.readOptions(ctx); err != nil {
		return err
	}
	if c.reqIDHeader != "" {
		st.requestIDValue = newRequestID()
		st.requestID = st.requestIDValue[0]
	}
	st.initTel(ctx, r, u, c.toService(r, u))
	return nil
}

// newRequest makes the request of every attempt of r, to u, whose text
// is us (u nil: us is the path, joined to the base URL), in st's pooled
// state.
func (c *Client) newRequest(ctx context.Context, st *call, r *Request, u *url.URL, us string) (*retryablehttp.Request, error) {
	hreq, err := c.httpRequest(ctx, r.Method, u, us)
	if err == nil {
		req := &st.hooks.req
		*req = retryablehttp.Request{Request: hreq}
		return req, req.SetBody(nil)
	}
	if u == nil {
		if u, err = c.parse(r, c.base+strings.TrimPrefix(us, "/")); err != nil {
			return nil, err
		}
	}
	return nil, errs.Wrap(unwrapURLError(err), "%s %s", r.Method, u.Path)
}

// httpRequest makes the request of method to u, whose text is us, or,
// when u is nil, to the base URL joined with the path us. A path that
// reads the same escaped (literalPath) is joined to the base URL parsed
// once (Client.baseURL), without parsing: an empty URL parses to an
// empty url.URL, which the request owns and which is filled in place.
// Any other URL the request parses, once.
func (c *Client) httpRequest(ctx context.Context, method string, u *url.URL, us string) (*http.Request, error) {
	switch {
	case u != nil:
		return http.NewRequestWithContext(ctx, method, us, nil)
	case c.baseURL == nil || !literalPath(us):
		return http.NewRequestWithContext(ctx, method, c.base+strings.TrimPrefix(us, "/"), nil)
	}
	req, err := http.NewRequestWithContext(ctx, method, "", nil)
	if err != nil {
		return nil, err
	}
	*req.URL = *c.baseURL
	if rel, slash := strings.CutPrefix(us, "/"); !slash || req.URL.Path != "/" {
		req.URL.Path += rel
	} else {
		req.URL.Path = us // the base URL's "/" and rel, without a copy
	}
	req.Host = req.URL.Host
	return req, nil
}

// prepare gives req its body b and the headers of r, without
// Authorization for the client's token (call.sign adds it).
func (c *Client) prepare(req *retryablehttp.Request, st *call, r *Request, u *url.URL, b *body) error {
	switch {
	case b != nil && b.mem != nil:
		if err := req.SetBody(b.mem); err != nil {
			return errs.Wrap(err, "%s %s", r.Method, u.Path)
		}
	case b != nil:
		if err := req.SetBody(retryablehttp.ReaderFunc(b.attempt)); err != nil {
			return errs.Wrap(err, "%s %s", r.Method, u.Path)
		}
	}
	if b != nil && b.size >= 0 {
		req.ContentLength = b.size
	}
	c.setHeaders(req.Header, st, r, u)
	return nil
}

// setHeaders sets the headers of r on h.
func (c *Client) setHeaders(h http.Header, st *call, r *Request, u *url.URL) {
	// Fixed headers (a gateway's subscription key), the call's own, its
	// request id and the environment go to the service only, not to an
	// absolute URL on another host.
	toService := c.toService(r, u)
	if toService {
		for k, vs := range c.cfg.Header {
			h[k] = append([]string(nil), vs...)
		}
		for k, vs := range st.header {
			h[k] = append([]string(nil), vs...)
		}
		if st.requestID != "" {
			h[c.reqIDHeader] = st.requestIDValue
		}
	}
	for k, vs := range r.Header {
		h[k] = append([]string(nil), vs...)
	}
	if c.ua != nil {
		h["User-Agent"] = c.ua
	}
	if c.cfg.Env != "" && r.URL == "" {
		h.Set(c.cfg.EnvHeader, c.cfg.Env)
	}
	if c.cfg.SubscriptionKey != "" && toService {
		h.Set(c.cfg.SubscriptionKeyHeader, c.cfg.SubscriptionKey)
	}
	h["Accept"] = jsonValue
	switch {
	case r.JSON != nil:
		h["Content-Type"] = jsonValue
	case r.ContentType != "":
		h.Set("Content-Type", r.ContentType)
	}
	if r.Token != "" {
		h.Set("Authorization", "Bearer "+r.Token)
	}
}

// toService reports whether r, sent to u, goes to the service: a path,
// or an absolute URL on the base URL's host.
func (c *Client) toService(r *Request, u *url.URL) bool {
	return r.URL == "" || (c.cfg.BaseURL != nil && strings.EqualFold(u.Host, c.cfg.BaseURL.Host))
}

// repeatable reports whether r may be repeated after the server may have
// processed it.
func (c *Client) repeatable(r *Request) bool {
	return r.Idempotent || r.Method == http.MethodGet || r.Method == http.MethodHead
}
