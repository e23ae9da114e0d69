// Package scim is the /api/scim/v2/Users area of the Partner Integration Service.
package scim

import "github.com/partnerapi/partner-go/internal/transport"

// Service calls the /api/scim/v2/Users operations. It is safe for concurrent use.
type Service struct {
	t *transport.Client
}

// New returns a Service that sends its requests through t.
func New(t *transport.Client) *Service { return &Service{t: t} }
