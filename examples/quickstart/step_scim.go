package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/scim"
)

// scimStep provisions a user, reads it back, suspends it and finds it by
// filter. The userName gets a random part so that the step can run again
// against a real service (which keeps the suspended user: the interface
// has no delete).
func scimStep(ctx context.Context, c *partner.Client, w io.Writer) error {
	suffix := make([]byte, 4)
	rand.Read(suffix)
	userName := fmt.Sprintf("quickstart-%s@example.com", hex.EncodeToString(suffix))

	u, err := c.SCIM.Create(ctx, &scim.User{
		UserName:    userName,
		Name:        &scim.Name{GivenName: "Quinn", FamilyName: "Start"},
		DisplayName: "Quinn Start",
		Emails:      []scim.Email{{Value: userName, Type: "work", Primary: true}},
		Enterprise:  &scim.EnterpriseUser{Department: "Partner Operations"},
	})
	if err != nil {
		return fmt.Errorf("provisioning %s: %w", userName, err)
	}
	fmt.Fprintf(w, "scim: provisioned user %s with id %s\n", u.UserName, u.ID)

	got, err := c.SCIM.Get(ctx, u.ID)
	if err != nil {
		return fmt.Errorf("reading user %s: %w", u.ID, err)
	}
	dept := ""
	if got.Enterprise != nil {
		dept = got.Enterprise.Department
	}
	fmt.Fprintf(w, "scim: read back %s (department %q, active %t)\n", got.UserName, dept, got.IsActive())

	s, err := c.SCIM.Suspend(ctx, u.ID)
	if err != nil {
		return fmt.Errorf("suspending user %s: %w", u.ID, err)
	}
	fmt.Fprintf(w, "scim: suspended %s (active %t)\n", s.UserName, s.IsActive())

	filter := "userName eq " + scim.Quote(userName)
	n := 0
	for _, err := range c.SCIM.List(ctx, scim.ListParams{Filter: filter}) {
		if err != nil {
			return fmt.Errorf("listing users: %w", err)
		}
		n++
	}
	fmt.Fprintf(w, "scim: listed %d user(s) with filter %s\n", n, filter)
	return nil
}
