// Package events is the /event/v1 area of the Partner Integration Service.
package events

import "github.com/partnerapi/partner-go/internal/transport"

// Service calls the /event/v1 operations. It is safe for concurrent use.
type Service struct {
	t *transport.Client
}

// New returns a Service that sends its requests through t.
func New(t *transport.Client) *Service { return &Service{t: t} }
