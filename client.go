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

	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/internal/version"
	"github.com/partnerapi/partner-go/oauth"
	"github.com/partnerapi/partner-go/objects"
	"github.com/partnerapi/partner-go/reports"
	"github.com/partnerapi/partner-go/scim"
	"github.com/partnerapi/partner-go/users"
)

// Version is the SDK version, sent in the User-Agent header and carried
// by the spans and metrics as their instrumentation version.
const Version = version.Version

// Client talks to one Partner Integration Service. It is safe for
// concurrent use by many goroutines; they share one access token.
type Client struct {
	// OAuth gets, caches and invalidates the client's tokens (/oauth/token).
	// It is the client's active token source: with WithTokenSource,
	// c.OAuth.Token returns that source's token.
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

	t *core.Client
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
	// Token requests go through the pipeline without Authorization; the
	// services' requests through the same pipeline authorized by the
	// OAuth service: one connection pool and one retry budget.
	tokens := core.New(cfg)
	c := &Client{}
	c.OAuth = oauth.New(tokens, s.auth)
	c.t = tokens.WithTokens(c.OAuth)
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
	return c.OAuth.Close(ctx)
}
