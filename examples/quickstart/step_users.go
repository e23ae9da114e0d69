package main

import (
	"context"
	"fmt"
	"io"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/users"
)

// usersStep checks which of two roles a demo user holds. Against a real
// service the demo e-mail is likely unknown: the 404 is reported, not
// fatal.
func usersStep(ctx context.Context, c *partner.Client, w io.Writer) error {
	asked := []string{"partner_admin", "viewer"}
	res, err := c.Users.CheckAttribute(ctx, users.CheckAttributeParams{
		Email:       demo.UserEmail1,
		Namespace:   demo.Namespace,
		FilterValue: users.Attribute{Name: "role", Values: asked},
	})
	if partner.IsNotFound(err) {
		fmt.Fprintf(w, "users: %s is not known to this service (it is in the fake's demo data)\n", demo.UserEmail1)
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking %s: %w", demo.UserEmail1, err)
	}
	fmt.Fprintf(w, "users: %s holds %s %v of %v (namespace %d)\n",
		res.Email, res.FilterValue.Data.Name, res.Values(), asked, res.Namespace)
	return nil
}
