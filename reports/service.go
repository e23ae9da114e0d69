// Package reports is the /report/v1 area of the Partner Integration Service.
package reports

import "github.com/partnerapi/partner-go/internal/transport"

// Service calls the /report/v1 operations. It is safe for concurrent use.
type Service struct {
	t *transport.Client
}

// New returns a Service that sends its requests through t.
func New(t *transport.Client) *Service { return &Service{t: t} }
