// Package plumbing is what the SDK's area packages need of a
// core.Client beyond Do and Send: the masking of their secrets, the
// environment as a query parameter, the plain-http rule, the logger, and
// the spans and metrics of operations made of several requests. core
// fills it when it is initialised (as grpc-go's internal package is
// filled by grpc), so that none of it is on core.Client's public face;
// any package that holds a *core.Client has imported core, so Of is set
// before it can be called.
package plumbing

import (
	"context"
	"errors"
	"log/slog"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/internal/buildinfo"
)

// Pipeline is the plumbing of one core.Client.
type Pipeline interface {
	// MaskSecrets adds values the client must never repeat (see
	// core.Config and docs/DESIGN.md): wherever it writes what a server
	// said, each reads [redacted].
	MaskSecrets(values ...string)
	// EnvQuery is the environment as a query parameter named after the
	// environment header, nil when no environment is set.
	EnvQuery() url.Values
	// InsecureHTTPAllowed reports whether plain http URLs to hosts other
	// than loopback addresses are allowed.
	InsecureHTTPAllowed() bool
	// Logger is the client's logger (never nil), which masks its
	// secrets.
	Logger() *slog.Logger
	// StartSpan starts the span of an operation made of several
	// requests, named "partner." + op; end it with EndSpan.
	StartSpan(ctx context.Context, op string, attrs ...attribute.KeyValue) (context.Context, trace.Span)
	// CountTokenFetch counts a token fetch of kind, and its failure
	// when err is not nil.
	CountTokenFetch(ctx context.Context, kind string, err error)
	// Meter is the meter of the client's metrics.
	Meter() metric.Meter
	// TracerProvider is the provider the client's spans go to, nil for
	// the global one.
	TracerProvider() trace.TracerProvider
	// PortalWord is the deployment's portal word the client was given
	// (core.Config.PortalWord), "" when it was given none.
	PortalWord() string
}

// Version is the SDK's version: partner.Version, and the instrumentation
// version of the spans and metrics of core and events. Its source is
// buildinfo.SDK, which the programs print too.
const Version = buildinfo.SDK

// ErrAbandoned is the cause with which the SDK cancels a request whose
// answer it no longer needs (an export's read-ahead past the last page,
// or in flight when the export ends). core keeps such a request out of
// CallOptions.Capture, which tells the caller of the requests it made.
var ErrAbandoned = errors.New("partner: request abandoned: its answer is no longer needed")

// AuditField is the audit field of the deployment whose portal word p
// was given, by deployment.Words' rule; "" without a word.
func AuditField(p Pipeline) string {
	return deployment.Words{PortalWord: p.PortalWord()}.AuditField()
}

// Of returns the plumbing of c, a *core.Client. core sets it.
var Of func(c any) Pipeline

// EndSpan ends the span of an operation with err: the error status, and
// the outcome-unknown attribute when the service may have processed the
// call. core sets it.
var EndSpan func(span trace.Span, err error)
