package core

// This file keeps the client's own secrets out of what it repeats of a
// server's words: an Error's fields, error texts and log records. A
// hostile or broken server may echo the client secret, a token or the
// subscription key back in an error answer.

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// redactedText replaces a secret in what the client repeats.
const redactedText = "[redacted]"

// maxSecrets is how many secrets a client remembers (the most recently
// added): enough for the client secret, the subscription key, the tokens
// of many refreshes and the subscriber secrets in use.
const maxSecrets = 64

// minSecretLen is the shortest value masked: a shorter one would mask
// ordinary words and is no secret anyway.
const minSecretLen = 6

// secretSet holds the secrets of a Client and the forms a server may
// echo them in (as is, JSON-escaped, URL-escaped), most recent first. A
// Client made by WithTokens shares it.
type secretSet struct {
	mu   sync.RWMutex
	vals [][]string // each secret with its escaped forms
}

// add remembers vs (moving those it knows to the front).
func (s *secretSet) add(vs ...string) {
	// Every call adds its request's own token, "" for most: none of
	// the client's calls takes the lock for nothing.
	if s == nil || !slices.ContainsFunc(vs, func(v string) bool { return len(v) >= minSecretLen }) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range vs {
		if len(v) < minSecretLen {
			continue
		}
		if len(s.vals) > 0 && s.vals[0][0] == v {
			continue
		}
		s.vals = slices.DeleteFunc(s.vals, func(f []string) bool { return f[0] == v })
		s.vals = slices.Insert(s.vals, 0, forms(v))
		if len(s.vals) > maxSecrets {
			s.vals = s.vals[:maxSecrets]
		}
	}
}

// forms returns v and the other forms a server may write it in.
func forms(v string) []string {
	f := []string{v}
	if j, err := json.Marshal(v); err == nil {
		f = append(f, string(j[1:len(j)-1]))
	}
	f = append(f, url.QueryEscape(v), url.PathEscape(v))
	slices.Sort(f[1:])
	return slices.Compact(f)
}

// mask returns s with every secret replaced by [redacted].
func (s *secretSet) mask(text string) string {
	if text == "" || s == nil {
		return text
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, f := range s.vals {
		for _, v := range f {
			if strings.Contains(text, v) {
				text = strings.ReplaceAll(text, v, redactedText)
			}
		}
	}
	return text
}

// maskBytes is mask for an answer's body: b itself when it holds no
// secret.
func (s *secretSet) maskBytes(b []byte) []byte {
	if m := s.mask(string(b)); m != string(b) {
		return []byte(m)
	}
	return b
}

// maskError masks the server's words kept on e.
func (s *secretSet) maskError(e *Error) {
	e.Body = s.maskBytes(e.Body)
	e.Message = s.mask(e.Message)
	e.Code = s.mask(e.Code)
	e.URI = s.mask(e.URI)
	e.SCIMType = s.mask(e.SCIMType)
	e.ServiceRequestID = s.mask(e.ServiceRequestID)
}

// maskHeader returns h, or, when a value of h holds a secret, a copy of
// h with those values masked: an answer's headers as the client hands
// them on (ResponseInfo.Header).
func (s *secretSet) maskHeader(h http.Header) http.Header {
	var out http.Header
	for k, vs := range h {
		for i, v := range vs {
			m := s.mask(v)
			if m == v {
				continue
			}
			if out == nil {
				out = h.Clone()
			}
			out[k][i] = m
		}
	}
	if out == nil {
		return h
	}
	return out
}

// maskErr returns err, or, when its text holds a secret, an error whose
// text is masked and that wraps err for errors.Is and errors.As.
func (s *secretSet) maskErr(err error) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	if m := s.mask(text); m != text {
		return &maskedError{text: m, err: err}
	}
	return err
}

type maskedError struct {
	text string
	err  error
}

func (e *maskedError) Error() string { return e.text }
func (e *maskedError) Unwrap() error { return e.err }

// MaskSecrets adds values the client must never repeat: wherever it
// writes what a server said (an Error's Message, Code, Body and
// ServiceRequestID, the text of an error, a log record of its Logger,
// a ResponseInfo's Header and ServiceRequestID), each of them reads
// [redacted]. The client masks its subscription key and the tokens it
// sends by itself; package oauth adds the client secret and the refresh
// token of each token request, package events the subscriber secret of
// each subscription. Values shorter than 6 bytes are not masked; the 64
// most recently added are kept.
//
// Deprecated: give the secrets to the Client as Config.SubscriptionKey
// and through Config.Tokens, which Do and Send mask by themselves (the
// key, and every token they send or are given as Request.Token).
// It stays for v1; the SDK's area packages reach it through
// internal/plumbing.
func (c *Client) MaskSecrets(values ...string) { c.secrets.add(values...) }

// maskHandler masks the client's secrets in the attributes of every
// record it logs.
type maskHandler struct {
	slog.Handler
	secrets *secretSet
}

func (h maskHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.maskAttr(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h maskHandler) maskAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.secrets.mask(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, ga := range g {
			out[i] = h.maskAttr(ga)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.secrets.mask(err.Error()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

func (h maskHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		masked[i] = h.maskAttr(a)
	}
	return maskHandler{h.Handler.WithAttrs(masked), h.secrets}
}

func (h maskHandler) WithGroup(name string) slog.Handler {
	return maskHandler{h.Handler.WithGroup(name), h.secrets}
}
