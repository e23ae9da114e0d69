// Package plumbing is what the SDK's area packages need of a
// core.Client beyond Do and Send: the masking of their secrets, the
// environment as a query parameter, the plain-http rule, the logger, the
// spans and metrics of operations made of several requests, and the
// deployment's portal word. It calls the Client's methods of the same
// names, which are deprecated for a user's code (they stay for v1):
// the areas reach them through this package only, so that a later major
// version can take them off the Client's public face without touching
// an area.
package plumbing

//lint:file-ignore SA1019 this package is the areas' one way to the Client's deprecated plumbing methods, which stay for v1

import (
	"context"
	"log/slog"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/deployment"
)

// Pipeline is the plumbing of one core.Client.
type Pipeline struct{ c *core.Client }

// Of returns the plumbing of c.
func Of(c *core.Client) Pipeline { return Pipeline{c} }

// MaskSecrets adds values the client must never repeat (see
// core.Config and docs/DESIGN.md): wherever it writes what a server
// said, each reads [redacted].
func (p Pipeline) MaskSecrets(values ...string) { p.c.MaskSecrets(values...) }

// EnvQuery is the environment as a query parameter named after the
// environment header, nil when no environment is set.
func (p Pipeline) EnvQuery() url.Values { return p.c.EnvQuery() }

// InsecureHTTPAllowed reports whether plain http URLs to hosts other
// than loopback addresses are allowed.
func (p Pipeline) InsecureHTTPAllowed() bool { return p.c.InsecureHTTPAllowed() }

// Logger is the client's logger (never nil), which masks its secrets.
func (p Pipeline) Logger() *slog.Logger { return p.c.Logger() }

// StartSpan starts the span of an operation made of several requests,
// named "partner." + op; end it with EndSpan.
func (p Pipeline) StartSpan(ctx context.Context, op string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return p.c.StartSpan(ctx, op, attrs...)
}

// CountTokenFetch counts a token fetch of kind, and its failure when
// err is not nil.
func (p Pipeline) CountTokenFetch(ctx context.Context, kind string, err error) {
	p.c.CountTokenFetch(ctx, kind, err)
}

// Meter is the meter of the client's metrics.
func (p Pipeline) Meter() metric.Meter { return p.c.Meter() }

// TracerProvider is the provider the client's spans go to, nil for the
// global one.
func (p Pipeline) TracerProvider() trace.TracerProvider { return p.c.TracerProvider() }

// AuditField is the audit field of the deployment whose portal word p's
// client was given (core.Config.PortalWord), by deployment.Words' rule;
// "" without a word.
func AuditField(p Pipeline) string {
	return deployment.Words{PortalWord: p.c.PortalWord()}.AuditField()
}

// EndSpan ends the span of an operation with err: the error status, and
// the outcome-unknown attribute when the service may have processed the
// call.
func EndSpan(span trace.Span, err error) { core.EndSpan(span, err) }
