package oauth

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"golang.org/x/oauth2"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/internal/plumbing"
)

// Kinds of token fetch, the partner.token.kind attribute of the token
// span and metrics.
const (
	fetchClientCredentials = "client_credentials"
	fetchRefresh           = "refresh"
	fetchExternal          = "external"
)

// tracedFetch wraps a token cache's fetch in the span
// "partner.oauth.Token" and counts it (and its failure) in the token
// metrics. The span carries the kind of fetch, never a token. Without a
// transport (a Service made for an external source alone) fetch is
// returned as it is.
func tracedFetch(t *core.Client, external bool, fetch func(context.Context, *oauth2.Token) (*oauth2.Token, error)) func(context.Context, *oauth2.Token) (*oauth2.Token, error) {
	if t == nil {
		return fetch
	}
	return func(ctx context.Context, held *oauth2.Token) (*oauth2.Token, error) {
		kind := fetchClientCredentials
		switch {
		case external:
			kind = fetchExternal
		case held != nil && held.RefreshToken != "":
			kind = fetchRefresh
		}
		ctx, span := plumbing.Of(t).StartSpan(ctx, "oauth.Token", attribute.String("partner.token.kind", kind))
		tok, err := fetch(ctx, held)
		plumbing.Of(t).CountTokenFetch(ctx, kind, err)
		plumbing.EndSpan(span, err)
		return tok, err
	}
}
