// Package scim is the /api/scim/v2/Users area of the Partner Integration
// Service: provisioning users with SCIM 2.0 resources (RFC 7643, 7644).
//
// Create, Get and Update map one to one onto the interface; Suspend and
// Reactivate are read-modify-write helpers over Get and Update's PUT;
// List and FindByUserName read the user listing with a SCIM filter.
//
// Errors of the service are *partner.Error values carrying the SCIM error
// fields: Message holds `detail` and SCIMType holds `scimType`, so that a
// taken userName reads as
//
//	if scim.ErrorTypeOf(err) == scim.ErrorTypeUniqueness { ... }
//
// or simply partner.IsConflict(err).
package scim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/internal/plumbing"
)

// ErrorTypeOf returns the scimType of the service's error in err's chain:
// empty when err holds no *partner.Error or the error carried none.
func ErrorTypeOf(err error) ErrorType {
	if e, ok := errors.AsType[*core.Error](err); ok {
		return ErrorType(e.SCIMType)
	}
	return ""
}

// usersPath is the collection of user resources.
const usersPath = "/api/scim/v2/Users"

// Service calls the /api/scim/v2/Users operations. It is safe for concurrent use.
// A partner.Client has one as its SCIM field; New builds one over any
// core.Client.
type Service struct {
	t *core.Client
}

// New returns a Service that sends its requests through p, which
// authorizes them (core.Config.Tokens).
func New(p *core.Client) *Service { return &Service{t: p} }

// Create provisions a user: POST /api/scim/v2/Users. The service answers
// 201 with the user as stored, including its generated ID, which Create
// returns. u is not modified.
//
// UserName is required and ID must be empty. Schemas gets SchemaUser, and
// SchemaEnterpriseUser when u.Enterprise is set, when they are missing.
// A userName already taken (compared without regard to case) is a 409
// whose SCIMType is ErrorTypeUniqueness (partner.IsConflict). Create is not
// repeated after a failure the service may have acted on, since a repeat
// could provision the user twice. Such an error says so:
// partner.IsOutcomeUnknown(err) is true. Then look the user up by its
// userName with FindByUserName before trying again: found, it was
// created; scim.ErrNotFound, create it again.
func (s *Service) Create(ctx context.Context, u *User) (*User, error) {
	if u == nil {
		return nil, errors.New("partner: scim: user is nil")
	}
	if u.ID != "" {
		return nil, errors.New("partner: scim: id is assigned by the service; leave it empty on create")
	}
	body, err := prepare(u)
	if err != nil {
		return nil, err
	}
	req := &core.Request{Op: "scim.Create", Method: http.MethodPost, Path: usersPath, JSON: body}
	return s.doUser(ctx, req)
}

// Get reads the user with that id: GET /api/scim/v2/Users/{user_id}. An
// unknown id is a 404 (partner.IsNotFound).
func (s *Service) Get(ctx context.Context, id string) (*User, error) {
	if id == "" {
		return nil, errors.New("partner: scim: user id is required")
	}
	return s.doUser(ctx, &core.Request{Op: "scim.Get", Method: http.MethodGet, Route: core.PathOf(userPath, id)})
}

// Update replaces the user u.ID with u: PUT /api/scim/v2/Users/{user_id},
// with the id both in the path and in the body. The members u carries
// replace the stored ones and a member of the published PUT body left out
// (the enterprise extension) is removed, so update a user read with Get
// (whose unmodelled members travel in Extra) rather than one built from
// scratch. The published reads return no name, displayName or emails
// (the interface marks them "used on create"), so a user read with Get
// carries none and Update does not send them; what a service does with
// members a PUT leaves out is not published (RFC 7644 lets it clear or
// keep them), and the fake keeps them unless fake.WithSCIMFullResources.
// ID and UserName are required; Schemas are filled in as for Create.
// Setting Active to false suspends the user. An unknown id is a 404.
//
// The request is idempotent and is repeated on transient failures.
func (s *Service) Update(ctx context.Context, u *User) (*User, error) {
	if u == nil {
		return nil, errors.New("partner: scim: user is nil")
	}
	if u.ID == "" {
		return nil, errors.New("partner: scim: id is required for update")
	}
	body, err := prepare(u)
	if err != nil {
		return nil, err
	}
	req := &core.Request{Op: "scim.Update", Method: http.MethodPut, Route: core.PathOf(userPath, u.ID), JSON: body, Idempotent: true}
	return s.doUser(ctx, req)
}

// Suspend deactivates the user with that id and returns it: it reads the
// user (GET /api/scim/v2/Users/{user_id}) and writes it back with
// "active": false (PUT on the same path). The user is written back exactly
// as read apart from "active", including members this package does not
// model, so nothing the read returned is lost. Members the read does not
// return (the published reads show no name, displayName or emails) are
// not sent and are left to the service, as for Update. A user already
// suspended is returned without a write.
//
// The read and the write are not atomic: a change made by someone else in
// between is overwritten (the interface offers no conditional PUT).
func (s *Service) Suspend(ctx context.Context, id string) (u *User, err error) {
	ctx, span := plumbing.Of(s.t).StartSpan(ctx, "scim.Suspend")
	defer func() { plumbing.EndSpan(span, err) }()
	return s.setActive(ctx, id, false)
}

// Reactivate sets "active": true on the user with that id and returns it,
// as Suspend does (GET, then PUT /api/scim/v2/Users/{user_id}).
func (s *Service) Reactivate(ctx context.Context, id string) (u *User, err error) {
	ctx, span := plumbing.Of(s.t).StartSpan(ctx, "scim.Reactivate")
	defer func() { plumbing.EndSpan(span, err) }()
	return s.setActive(ctx, id, true)
}

func (s *Service) setActive(ctx context.Context, id string, active bool) (*User, error) {
	if id == "" {
		return nil, errors.New("partner: scim: user id is required")
	}
	// Work on the raw members so that a user carrying attributes this
	// package does not model (nested ones too) is written back whole.
	var body json.RawMessage
	if err := s.t.Do(ctx, &core.Request{Op: "scim.Get", Method: http.MethodGet, Route: core.PathOf(userPath, id)}, &body); err != nil {
		return nil, err
	}
	var cur User
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &cur); err != nil {
		return nil, fmt.Errorf("partner: scim: decoding user %s: %w", id, err)
	}
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return nil, fmt.Errorf("partner: scim: user %s: answer is not a JSON object", id)
	}
	if cur.Active != nil && *cur.Active == active {
		return &cur, nil
	}
	raw["active"] = json.RawMessage(strconv.FormatBool(active))
	if cur.ID == "" {
		raw["id"], _ = json.Marshal(id)
	}
	req := &core.Request{Op: "scim.Update", Method: http.MethodPut, Route: core.PathOf(userPath, id), JSON: raw, Idempotent: true}
	return s.doUser(ctx, req)
}

// doUser makes a call whose answer is a user.
func (s *Service) doUser(ctx context.Context, r *core.Request) (*User, error) {
	a, err := core.DoNew[answerUser](ctx, s.t, r)
	if err != nil {
		return nil, err
	}
	return &a.User, nil
}

// userPath is the path of one user.
const userPath = usersPath + "/{user_id}"

// prepare validates u and returns the body to send: a copy of u with its
// schemas completed.
func prepare(u *User) (*User, error) {
	if strings.TrimSpace(u.UserName) == "" {
		return nil, errors.New("partner: scim: userName is required")
	}
	for _, sc := range u.Schemas {
		if !strings.HasPrefix(strings.ToLower(string(sc)), "urn:") {
			return nil, fmt.Errorf("partner: scim: schema %q is not a URN", sc)
		}
	}
	for i, e := range u.Emails {
		if strings.TrimSpace(e.Value) == "" {
			return nil, fmt.Errorf("partner: scim: emails[%d]: value is required", i)
		}
	}
	body := *u
	body.Schemas = slices.Clone(u.Schemas)
	if !hasSchema(body.Schemas, SchemaUser) {
		body.Schemas = append([]Schema{SchemaUser}, body.Schemas...)
	}
	if u.Enterprise != nil && !hasSchema(body.Schemas, SchemaEnterpriseUser) {
		body.Schemas = append(body.Schemas, SchemaEnterpriseUser)
	}
	return &body, nil
}

func hasSchema(list []Schema, s Schema) bool {
	return slices.ContainsFunc(list, func(x Schema) bool { return strings.EqualFold(string(x), string(s)) })
}
