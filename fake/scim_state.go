package fake

import (
	"fmt"
	"strings"
)

// This file is the seeding and inspection API of the scim area.

// AddUser stores u as if created through SCIM and returns its id (u.ID,
// or a generated one). It fails when the userName is empty or taken, or
// the id is taken.
func (f *Fake) AddUser(u User) (string, error) {
	w := scimUser{
		Schemas: []string{scimSchemaUser}, ID: u.ID, UserName: u.UserName,
		DisplayName: u.DisplayName, Active: new(u.IsActive()),
	}
	if u.GivenName != "" || u.FamilyName != "" {
		w.Name = &scimName{GivenName: u.GivenName, FamilyName: u.FamilyName}
	}
	for _, e := range u.Emails {
		w.Emails = append(w.Emails, scimEmail(e))
	}
	if u.Department != "" {
		w.Enterprise = &scimEnterprise{Department: u.Department}
		w.Schemas = append(w.Schemas, scimSchemaEnterprise)
	}
	if err := validateSCIMUser(&w); err != nil {
		return "", fmt.Errorf("fake: AddUser: %w", err)
	}
	now := f.clock.Now()
	rec, err := f.scim.create(w, nil, now)
	if err != nil {
		return "", fmt.Errorf("fake: AddUser: %w", err)
	}
	if !u.Created.IsZero() {
		f.scim.mu.Lock()
		rec.created, rec.modified = u.Created, u.Created
		if u.Modified.After(u.Created) {
			rec.modified = u.Modified
		}
		f.scim.mu.Unlock()
	}
	return rec.user.ID, nil
}

// User returns the stored user with that id.
func (f *Fake) User(id string) (User, bool) {
	f.scim.mu.RLock()
	defer f.scim.mu.RUnlock()
	rec, ok := f.scim.byID[id]
	if !ok {
		return User{}, false
	}
	return rec.export(), true
}

// Users returns the stored users in creation order.
func (f *Fake) Users() []User {
	f.scim.mu.RLock()
	defer f.scim.mu.RUnlock()
	out := make([]User, 0, len(f.scim.order))
	for _, id := range f.scim.order {
		out = append(out, f.scim.byID[id].export())
	}
	return out
}

func (r *scimRecord) export() User {
	u := User{
		ID: r.user.ID, UserName: r.user.UserName, DisplayName: r.user.DisplayName,
		Active: new(r.active()), Created: r.created, Modified: r.modified,
	}
	if n := r.user.Name; n != nil {
		u.GivenName, u.FamilyName = n.GivenName, n.FamilyName
	}
	for _, e := range r.user.Emails {
		u.Emails = append(u.Emails, UserEmail(e))
	}
	if r.user.Enterprise != nil {
		u.Department = r.user.Enterprise.Department
	}
	return u
}

// hasUserEmail reports whether a SCIM user has email as its userName or
// one of its e-mail addresses, compared without regard to case.
func (s *scimStore) hasUserEmail(email string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	key := strings.ToLower(email)
	_, byName := s.byName[key]
	_, byEmail := s.byEmail[key] // every e-mail of every user (scimEmailKeys)
	return byName || byEmail
}
