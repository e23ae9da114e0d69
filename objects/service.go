// Package objects is the /app/v1/object area of the Partner Integration Service.
package objects

import "github.com/partnerapi/partner-go/internal/transport"

// Service calls the /app/v1/object operations. It is safe for concurrent use.
type Service struct {
	t *transport.Client
}

// New returns a Service that sends its requests through t.
func New(t *transport.Client) *Service { return &Service{t: t} }
