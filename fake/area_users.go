package fake

import (
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/partnerapi/partner-go/fake/demo"
)

// This file is the users area of the fake: POST /users/v1/check-attribute.
//
// The interface does not say what the check means; the fake answers with
// the requested values that the user holds for the attribute in the
// namespace, in the order requested, without duplicates (an empty list
// when it holds none of them). Attributes are seeded per e-mail address
// and namespace with SetUserAttributes. A user is known when attributes
// were seeded for the address (in any namespace) or a SCIM user has it as
// its userName or one of its e-mails; e-mails compare without regard to
// case, attribute names and values exactly. An omitted namespace is 0.

// usersStore holds the state of the users area.
type usersStore struct {
	mu sync.RWMutex
	// attrs: lower-case e-mail -> namespace -> attribute -> values
	attrs map[string]map[int64]map[string][]string
}

// SetUserAttributes sets the values a user (by e-mail) holds for an
// attribute in a namespace, replacing earlier ones. With no values the
// user is known but holds nothing for that attribute.
func (f *Fake) SetUserAttributes(email string, namespace int64, attribute string, values ...string) {
	f.users.mu.Lock()
	defer f.users.mu.Unlock()
	if f.users.attrs == nil {
		f.users.attrs = map[string]map[int64]map[string][]string{}
	}
	key := strings.ToLower(email)
	ns := f.users.attrs[key]
	if ns == nil {
		ns = map[int64]map[string][]string{}
		f.users.attrs[key] = ns
	}
	if ns[namespace] == nil {
		ns[namespace] = map[string][]string{}
	}
	ns[namespace][attribute] = slices.Clone(values)
}

// userAttributes returns the values a user holds for an attribute in a
// namespace, and whether any attributes are set for the e-mail at all.
func (f *Fake) userAttributes(email string, namespace int64, attribute string) ([]string, bool) {
	f.users.mu.RLock()
	defer f.users.mu.RUnlock()
	ns, ok := f.users.attrs[strings.ToLower(email)]
	return slices.Clone(ns[namespace][attribute]), ok
}

type attributeValues struct {
	Attribute string   `json:"attribute"`
	Value     []string `json:"value"`
}

type checkAttributeRequest struct {
	Email       string           `json:"email"`
	Namespace   int64            `json:"namespace"`
	FilterValue *attributeValues `json:"filter_value"`
}

type checkAttributeResponse struct {
	Email       string `json:"email"`
	Namespace   int64  `json:"namespace"`
	FilterValue struct {
		Data attributeValues `json:"data"`
	} `json:"filter_value"`
}

// registerUsers registers the routes of the users area.
func (f *Fake) registerUsers() {
	f.handle("POST /users/v1/check-attribute", scopeUsers, f.checkAttribute)
}

func (f *Fake) checkAttribute(w http.ResponseWriter, r *http.Request) {
	var req checkAttributeRequest
	if !decodeJSON(w, r, &req) {
		return
	}
	switch {
	case strings.TrimSpace(req.Email) == "":
		writeError(w, http.StatusBadRequest, "invalid_request", "email is required")
		return
	case req.FilterValue == nil:
		writeError(w, http.StatusBadRequest, "invalid_request", "filter_value is required")
		return
	case strings.TrimSpace(req.FilterValue.Attribute) == "":
		writeError(w, http.StatusBadRequest, "invalid_request", "filter_value.attribute is required")
		return
	}
	f.users.mu.RLock()
	ns, known := f.users.attrs[strings.ToLower(req.Email)]
	held := slices.Clone(ns[req.Namespace][req.FilterValue.Attribute])
	f.users.mu.RUnlock()
	if !known && !f.scim.hasUserEmail(req.Email) {
		writeError(w, http.StatusNotFound, "not_found", "no user with e-mail %q", req.Email)
		return
	}
	out := checkAttributeResponse{Email: req.Email, Namespace: req.Namespace}
	out.FilterValue.Data = attributeValues{Attribute: req.FilterValue.Attribute, Value: []string{}}
	for _, v := range req.FilterValue.Value {
		if slices.Contains(held, v) && !slices.Contains(out.FilterValue.Data.Value, v) {
			out.FilterValue.Data.Value = append(out.FilterValue.Data.Value, v)
		}
	}
	writeJSON(w, http.StatusCreated, out)
}

// seedUsersDemo adds the users part of the demo data set: roles and
// regions of the first two demo users, in demo.Namespace.
func (f *Fake) seedUsersDemo() {
	f.SetUserAttributes(demo.UserEmail1, demo.Namespace, "role", "partner_admin", "deal_registrar")
	f.SetUserAttributes(demo.UserEmail1, demo.Namespace, "region", "emea")
	f.SetUserAttributes(demo.UserEmail2, demo.Namespace, "role", "sales_rep")
	f.SetUserAttributes(demo.UserEmail2, demo.Namespace, "region", "amer")
}
