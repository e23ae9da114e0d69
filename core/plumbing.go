package core

// This file fills internal/plumbing: what the area packages need of a
// Client beyond Do and Send, off the Client's public face.

import (
	"context"
	"log/slog"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/partnerapi/partner-go/internal/plumbing"
)

func init() {
	plumbing.Of = func(c any) plumbing.Pipeline { return pipe{c.(*Client)} }
	plumbing.EndSpan = EndSpan
}

// pipe is a Client's plumbing.Pipeline.
type pipe struct{ c *Client }

// The Client's methods of the same names are deprecated for area
// packages and kept for v1; the plumbing is theirs.

func (p pipe) MaskSecrets(values ...string)         { p.c.MaskSecrets(values...) }
func (p pipe) EnvQuery() url.Values                 { return p.c.EnvQuery() }
func (p pipe) InsecureHTTPAllowed() bool            { return p.c.InsecureHTTPAllowed() }
func (p pipe) Logger() *slog.Logger                 { return p.c.Logger() }
func (p pipe) Meter() metric.Meter                  { return p.c.Meter() }
func (p pipe) TracerProvider() trace.TracerProvider { return p.c.TracerProvider() }
func (p pipe) PortalWord() string                   { return p.c.cfg.PortalWord }

func (p pipe) StartSpan(ctx context.Context, op string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return p.c.StartSpan(ctx, op, attrs...)
}

func (p pipe) CountTokenFetch(ctx context.Context, kind string, err error) {
	p.c.CountTokenFetch(ctx, kind, err)
}
