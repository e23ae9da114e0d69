// Package objects writes audit status onto objects of the partner platform
// and maps them to the ids of external systems (/app/v1/object/{object_id}).
package objects

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/internal/plumbing"
)

// Service calls the /app/v1/object operations. It is safe for concurrent use.
// A partner.Client has one as its Objects field; New builds one over any
// core.Client.
type Service struct {
	t *core.Client
}

// New returns a Service that sends its requests through p, which
// authorizes them (core.Config.Tokens).
func New(p *core.Client) *Service { return &Service{t: p} }

// FieldName names the audit field an AuditParams writes.
type FieldName string

// FieldIntegrationStatus is the integration status field of an object, the
// one audit field of the interface. Its "partner_portal" is the
// interface's neutral stand-in: a deployment spells the field with its own
// portal word (<portal>.integration_status), and AuditParams.FieldName
// takes that name as it is.
const FieldIntegrationStatus FieldName = "partner_portal.integration_status"

// FieldReferralID is the field in which the service keeps an
// opportunity's partner portal referral id, with the interface's word; a
// deployment spells it <portal>.referral_id. ExternalIDs lists it beside
// DefaultOpportunityExternalIDField when it holds a value.
const FieldReferralID = "partner_portal.referral_id"

// AuditStatus is the value of an audit field: where the partner's side
// of an object stands (the wire's status_code).
type AuditStatus string

// StatusCode is the earlier name of AuditStatus.
//
// Deprecated: Use AuditStatus; the two are one type.
type StatusCode = AuditStatus

// Audit statuses.
const (
	StatusScheduled    AuditStatus = "SCHEDULED"
	StatusCreateFailed AuditStatus = "CREATE_FAILED"
	StatusUpdateFailed AuditStatus = "UPDATE_FAILED"
	StatusLinked       AuditStatus = "LINKED"
)

// Valid reports whether c is one of the documented statuses.
func (c AuditStatus) Valid() bool {
	switch c {
	case StatusScheduled, StatusCreateFailed, StatusUpdateFailed, StatusLinked:
		return true
	}
	return false
}

// Default external-ID fields, used by the service when a link names none.
const (
	DefaultOpportunityExternalIDField = "sales_details.crm_opportunity_id"
	DefaultAccountExternalIDField     = "account_info.external_account_id"
)

// AuditParams is the body of PATCH /app/v1/object/{object_id}/audit.
type AuditParams struct {
	// FieldName is the field to write, sent as it is: a deployment names
	// the field after its portal (<portal>.integration_status) and refuses
	// any other. When it is empty, Audit sends <portal>.integration_status
	// of the portal word the client was given (partner.WithWords, or
	// partner.WithConnection with a fake's Connection, whose word is the
	// stand-in's unless the fake was given another); a client given no
	// portal word returns an error before sending, whatever the host.
	FieldName FieldName `json:"field_name"`
	// IntegrationID names the related integration (optional).
	IntegrationID string `json:"integration_id,omitempty"`
	// ExternalID is the object's id in the external system (optional).
	ExternalID string `json:"external_id,omitempty"`
	// StatusCode is the value to write (required).
	StatusCode AuditStatus `json:"status_code"`
	// Message details the audit request (required).
	Message string `json:"message"`
}

// AuditResult is the answer of Audit: the field written and its value now.
type AuditResult struct {
	ObjectID   string      `json:"object_id"`
	FieldName  FieldName   `json:"field_name"`
	StatusCode AuditStatus `json:"status_code"`
}

// Audit writes p onto the object (PATCH /app/v1/object/{object_id}/audit)
// and returns the field's resulting value. Writing a value is idempotent,
// so the call is retried like a read. When p.FieldName is empty, Audit
// writes the field of the portal word the client was given
// (partner.WithWords), and without one it fails before sending, toward the
// fake and toward a deployment alike (see AuditParams.FieldName).
func (s *Service) Audit(ctx context.Context, objectID string, p AuditParams) (*AuditResult, error) {
	if err := checkID(objectID); err != nil {
		return nil, err
	}
	switch {
	case p.FieldName != "" && strings.TrimSpace(string(p.FieldName)) == "":
		return nil, errors.New("partner: objects: audit field_name is blank")
	case p.StatusCode == "":
		return nil, errors.New("partner: objects: audit status_code is required")
	case !p.StatusCode.Valid():
		return nil, fmt.Errorf("partner: objects: audit status_code %q is not one of SCHEDULED, CREATE_FAILED, UPDATE_FAILED, LINKED", p.StatusCode)
	case strings.TrimSpace(p.Message) == "":
		return nil, errors.New("partner: objects: audit message is required")
	case p.FieldName == "" && plumbing.AuditField(plumbing.Of(s.t)) == "":
		return nil, fmt.Errorf("partner: objects: audit field_name is empty: set AuditParams.FieldName to the deployment's <portal>.integration_status, or give the client the deployment's portal word (partner.WithWords; a fake's words come with partner.WithConnection(srv.Connection())); a deployment refuses the interface's stand-in %s", FieldIntegrationStatus)
	case p.FieldName == "":
		p.FieldName = FieldName(plumbing.AuditField(plumbing.Of(s.t)))
	}
	return core.DoNew[AuditResult](ctx, s.t, &core.Request{
		Op:         "objects.Audit",
		Method:     http.MethodPatch,
		Route:      core.PathOf("/app/v1/object/{object_id}/audit", objectID),
		JSON:       p,
		Idempotent: true,
	})
}

// ConnectExternalIDParams is the body of PATCH /app/v1/object/{object_id}/external_id.
type ConnectExternalIDParams struct {
	// ExternalID is the id of the object in the external system (required).
	ExternalID string `json:"external_id"`
	// FieldName is the dotted field that holds it. When empty the service
	// uses the type's default: DefaultOpportunityExternalIDField for
	// opportunities, DefaultAccountExternalIDField for accounts. Any
	// dotted name is accepted, portal-named ones such as
	// <portal>.referral_id (FieldReferralID) included.
	FieldName string `json:"field_name,omitempty"`
}

// Link is an external id held in one field of an object.
type Link struct {
	ObjectID   string `json:"object_id,omitempty"`
	FieldName  string `json:"field_name"`
	ExternalID string `json:"external_id"`
}

// ConnectExternalID stores an external id on the object
// (PATCH /app/v1/object/{object_id}/external_id) and returns where it went.
func (s *Service) ConnectExternalID(ctx context.Context, objectID string, p ConnectExternalIDParams) (*Link, error) {
	if err := checkID(objectID); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.ExternalID) == "" {
		return nil, errors.New("partner: objects: external_id is required")
	}
	if p.FieldName != "" && !fieldNameRE.MatchString(p.FieldName) {
		return nil, fmt.Errorf("partner: objects: field_name %q is not a dotted field name such as %q", p.FieldName, DefaultAccountExternalIDField)
	}
	return core.DoNew[Link](ctx, s.t, &core.Request{
		Op:         "objects.ConnectExternalID",
		Method:     http.MethodPatch,
		Route:      core.PathOf("/app/v1/object/{object_id}/external_id", objectID),
		JSON:       p,
		Idempotent: true,
	})
}

// ExternalIDs is the answer of Service.ExternalIDs.
type ExternalIDs struct {
	ObjectID string `json:"object_id"`
	// Links are the object's external ids, each with ObjectID set (the
	// service names the object once, outside them).
	Links []Link `json:"external_ids"`
}

// Get returns the external id held in field, if any.
func (e *ExternalIDs) Get(field string) (string, bool) {
	for _, l := range e.Links {
		if l.FieldName == field {
			return l.ExternalID, true
		}
	}
	return "", false
}

// ExternalIDs reads the external ids of an object
// (GET /app/v1/object/{object_id}/external_id).
func (s *Service) ExternalIDs(ctx context.Context, objectID string) (*ExternalIDs, error) {
	if err := checkID(objectID); err != nil {
		return nil, err
	}
	out, err := core.DoNew[ExternalIDs](ctx, s.t, &core.Request{
		Op:     "objects.ExternalIDs",
		Method: http.MethodGet,
		Route:  core.PathOf("/app/v1/object/{object_id}/external_id", objectID),
	})
	if err != nil {
		return nil, err
	}
	if out.ObjectID == "" {
		out.ObjectID = objectID
	}
	for i := range out.Links {
		if out.Links[i].ObjectID == "" {
			out.Links[i].ObjectID = out.ObjectID
		}
	}
	return out, nil
}

// fieldNameRE matches a dotted field name: non-empty names without
// spaces joined by dots. Field names belong to the deployment (portal
// words, custom fields), so nothing stricter is asked.
var fieldNameRE = regexp.MustCompile(`^[^.\s]+(\.[^.\s]+)*$`)

func checkID(id string) error {
	if strings.TrimSpace(id) == "" {
		return errors.New("partner: objects: object id is required")
	}
	return nil
}
