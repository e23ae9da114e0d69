// Package users is the /users/v1 area of the Partner Integration Service:
// checking which values of an attribute a user holds.
package users

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/partnerapi/partner-go/core"
)

// Service calls the /users/v1 operations. It is safe for concurrent use.
// A partner.Client has one as its Users field; New builds one over any
// core.Client.
type Service struct {
	t *core.Client
}

// New returns a Service that sends its requests through p, which
// authorizes them (core.Config.Tokens).
func New(p *core.Client) *Service { return &Service{t: p} }

// CheckAttributeParams is the body of an attribute check.
type CheckAttributeParams struct {
	// Email identifies the user. Required.
	Email string `json:"email"`
	// Namespace is the namespace the attribute belongs to; the deployment
	// says which namespace its attributes are in (the fake's demo data
	// uses fake/demo.Namespace). The interface does not document its
	// rules; 0 is sent as 0. A namespace in which the user has no such
	// attribute is no error: the answer lists no value, as it does for a
	// user who holds none of the values asked about.
	Namespace int64 `json:"namespace"`
	// FilterValue names the attribute (required) and the values to check
	// whether the user holds.
	FilterValue Attribute `json:"filter_value"`
}

// Attribute is an attribute name with values; on the wire
// {"attribute": name, "value": [values]}.
type Attribute struct {
	Name   string   `json:"attribute"`
	Values []string `json:"value"`
}

// CheckAttributeResult is the answer of an attribute check.
type CheckAttributeResult struct {
	Email       string      `json:"email"`
	Namespace   int64       `json:"namespace"`
	FilterValue FilterValue `json:"filter_value"`
}

// FilterValue wraps the attribute of a check result, as the wire does.
type FilterValue struct {
	Data Attribute `json:"data"`
}

// Values returns the values of the result's attribute.
func (r *CheckAttributeResult) Values() []string { return r.FilterValue.Data.Values }

// Has reports whether the result lists value for its attribute.
func (r *CheckAttributeResult) Has(value string) bool {
	return slices.Contains(r.FilterValue.Data.Values, value)
}

// CheckAttribute checks an attribute of a user: POST
// /users/v1/check-attribute, answered with 201. Email and the attribute
// name are required; a nil value list is sent as []. An unknown e-mail is
// a 404 (partner.IsNotFound). The check only reads, so it is repeated on
// transient failures.
func (s *Service) CheckAttribute(ctx context.Context, p CheckAttributeParams) (*CheckAttributeResult, error) {
	if strings.TrimSpace(p.Email) == "" {
		return nil, errors.New("partner: users: email is required")
	}
	if strings.TrimSpace(p.FilterValue.Name) == "" {
		return nil, errors.New("partner: users: filter_value.attribute is required")
	}
	if p.FilterValue.Values == nil {
		p.FilterValue.Values = []string{}
	}
	req := &core.Request{Op: "users.CheckAttribute", Method: http.MethodPost, Path: "/users/v1/check-attribute", JSON: p, Idempotent: true}
	return core.DoNew[CheckAttributeResult](ctx, s.t, req)
}
