// Package partner is the Go SDK of the Partner Integration Service.
//
// A Client gets and refreshes its OAuth token by itself and exposes one
// service per area of the interface:
//
//	c, err := partner.New(
//		partner.WithBaseURL("https://api.example.com"),
//		partner.WithClientCredentials(id, secret),
//	)
//	if err != nil { ... }
//	defer c.Close(ctx)
//	u, err := c.SCIM.Get(ctx, "u-123")
//
// Every call takes a context first; collections are iterators; long
// running work has Wait helpers. Errors of the service are *Error values,
// tested with IsNotFound and its siblings.
package partner

import (
	"context"
	"sync/atomic"

	"golang.org/x/oauth2"

	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/internal/transport"
	"github.com/partnerapi/partner-go/oauth"
	"github.com/partnerapi/partner-go/objects"
	"github.com/partnerapi/partner-go/reports"
	"github.com/partnerapi/partner-go/scim"
	"github.com/partnerapi/partner-go/users"
)

// Version is the SDK version, sent in the User-Agent header.
const Version = "0.1.0"

// Client talks to one Partner Integration Service. It is safe for
// concurrent use by many goroutines; they share one access token.
type Client struct {
	// OAuth gets, caches and invalidates the client's tokens (/oauth/token).
	OAuth *oauth.Service
	// SCIM provisions users (/api/scim/v2/Users).
	SCIM *scim.Service
	// Users checks user attributes (/users/v1).
	Users *users.Service
	// Reports lists and exports reports (/report/v1).
	Reports *reports.Service
	// Objects writes audit status and external IDs (/app/v1/object).
	Objects *objects.Service
	// Bulk loads records and follows executions (/bulk/v1).
	Bulk *bulk.Service
	// Events manages webhook subscriptions (/event/v1).
	Events *events.Service

	tokens   transport.TokenSource
	external *closableTokens // the WithTokenSource source, if any
	t        *transport.Client
}

// closableTokens makes calls through a custom token source fail with
// oauth.ErrClosed once the client is closed, as they do with the
// client's own token source.
type closableTokens struct {
	transport.TokenSource
	closed atomic.Bool
}

func (c *closableTokens) Token(ctx context.Context) (*oauth2.Token, error) {
	if c.closed.Load() {
		return nil, oauth.ErrClosed
	}
	return c.TokenSource.Token(ctx)
}

// New returns a Client configured by opts. It does no I/O: the first call
// fetches a token under that call's context.
func New(opts ...Option) (*Client, error) {
	s := settings{}
	for _, o := range opts {
		if o != nil {
			o(&s)
		}
	}
	cfg, err := s.build()
	if err != nil {
		return nil, err
	}
	c := &Client{}
	tokenTransport := transport.New(cfg)
	// Token requests and API calls share one connection pool.
	cfg.HTTPClient = tokenTransport.HTTPClient()
	c.OAuth = oauth.New(tokenTransport, oauth.Config{
		ClientID:     s.clientID,
		ClientSecret: s.clientSecret,
		Scopes:       s.scopes,
		State:        s.state,
		FormEncoded:  s.formTokens,
	})
	c.tokens = c.OAuth
	if s.tokenSource != nil {
		c.external = &closableTokens{TokenSource: oauth.External(s.tokenSource)}
		c.tokens = c.external
	}
	cfg.Tokens = c.tokens
	c.t = tokenTransport.Share(cfg) // one retry budget for both
	c.SCIM = scim.New(c.t)
	c.Users = users.New(c.t)
	c.Reports = reports.New(c.t)
	c.Objects = objects.New(c.t)
	c.Bulk = bulk.New(c.t)
	c.Events = events.New(c.t)
	return c, nil
}

// Close invalidates the client's current access token on the server
// (DELETE /oauth/token). Calls after Close fail with oauth.ErrClosed. A
// second Close does nothing. A client built on a custom token source
// leaves that source's tokens alone.
func (c *Client) Close(ctx context.Context) error {
	if c.external != nil {
		c.external.closed.Store(true)
	}
	return c.OAuth.Close(ctx)
}
