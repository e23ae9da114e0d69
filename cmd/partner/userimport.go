package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/scim"
)

// userFields are the attributes the CLI sets on a user. Empty fields are
// left as they are.
type userFields struct {
	UserName, DisplayName, GivenName, FamilyName, Email, Department string
	Active                                                          *bool
}

// apply sets the non-empty fields on u and reports whether u changed.
func (in userFields) apply(u *scim.User) bool {
	changed := false
	set := func(dst *string, v string) {
		if v != "" && *dst != v {
			*dst, changed = v, true
		}
	}
	set(&u.UserName, in.UserName)
	set(&u.DisplayName, in.DisplayName)
	if in.GivenName != "" || in.FamilyName != "" {
		if u.Name == nil {
			u.Name = &scim.Name{}
		}
		set(&u.Name.GivenName, in.GivenName)
		set(&u.Name.FamilyName, in.FamilyName)
	}
	if in.Email != "" && !strings.EqualFold(u.PrimaryEmail(), in.Email) {
		emails := []scim.Email{{Value: in.Email, Type: "work", Primary: true}}
		for _, e := range u.Emails {
			if !strings.EqualFold(e.Value, in.Email) {
				e.Primary = false
				emails = append(emails, e)
			}
		}
		u.Emails, changed = emails, true
	}
	if in.Department != "" {
		if u.Enterprise == nil {
			u.Enterprise = &scim.EnterpriseUser{}
		}
		set(&u.Enterprise.Department, in.Department)
	}
	if in.Active != nil && u.IsActive() != *in.Active {
		v := *in.Active
		u.Active, changed = &v, true
	}
	return changed
}

// Outcomes of importing one user.
const (
	importCreated   = "created"
	importUpdated   = "updated"
	importUnchanged = "unchanged"
	importFailed    = "failed"
)

// importResult is what happened to one row of an import.
type importResult struct {
	Line     int // in the CSV file, the header being line 1
	UserName string
	ID       string
	Outcome  string
	Err      error
}

// importUsers reads users from CSV (a header row naming the columns
// userName, displayName, givenName, familyName, email, department, active,
// in any order and case; userName required) and creates each user whose
// userName is unknown, updates one that differs, and leaves one that
// matches alone, so that running it again changes nothing. It calls report
// for every row. A row that fails does not stop the import.
func importUsers(ctx context.Context, c *partner.Client, r io.Reader, report func(importResult)) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("reading the header row: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		key := strings.ToLower(strings.NewReplacer("_", "", " ", "", "-", "").Replace(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))))
		switch key {
		case "username", "displayname", "givenname", "familyname", "email", "department", "active":
			col[key] = i
		default:
			return fmt.Errorf("unknown column %q (known: userName, displayName, givenName, familyName, email, department, active)", h)
		}
	}
	if _, ok := col["username"]; !ok {
		return errors.New("the header row has no userName column")
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		get := func(k string) string {
			if i, ok := col[k]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		in := userFields{UserName: get("username"), DisplayName: get("displayname"), GivenName: get("givenname"),
			FamilyName: get("familyname"), Email: get("email"), Department: get("department")}
		res := importResult{Line: line, UserName: in.UserName}
		if s := get("active"); s != "" {
			b, err := strconv.ParseBool(s)
			if err != nil {
				res.Outcome, res.Err = importFailed, fmt.Errorf("active %q is not true or false", s)
				report(res)
				continue
			}
			in.Active = &b
		}
		if in.UserName == "" {
			res.Outcome, res.Err = importFailed, errors.New("no userName")
			report(res)
			continue
		}
		res.ID, res.Outcome, res.Err = importUser(ctx, c, in)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		report(res)
	}
}

func importUser(ctx context.Context, c *partner.Client, in userFields) (id, outcome string, err error) {
	u, err := c.SCIM.FindByUserName(ctx, in.UserName)
	if errors.Is(err, scim.ErrNotFound) {
		nu := &scim.User{}
		in.apply(nu)
		created, err := c.SCIM.Create(ctx, nu)
		if err != nil {
			return "", importFailed, err
		}
		return created.ID, importCreated, nil
	}
	if err != nil {
		return "", importFailed, err
	}
	in.UserName = "" // matched without regard to case: keep the stored spelling
	if !in.apply(u) {
		return u.ID, importUnchanged, nil
	}
	if _, err := c.SCIM.Update(ctx, u); err != nil {
		return u.ID, importFailed, err
	}
	return u.ID, importUpdated, nil
}
