package users_test

import (
	"context"
	"fmt"
	"log"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/users"
)

func ExampleService_CheckAttribute() {
	srv := fake.NewServer(fake.WithDemoData())
	defer srv.Close()
	c, err := partner.New(
		partner.WithBaseURL(srv.URL),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret),
	)
	if err != nil {
		log.Fatal(err)
	}

	res, err := c.Users.CheckAttribute(context.Background(), users.CheckAttributeParams{
		Email:       demo.UserEmail1,
		Namespace:   demo.Namespace,
		FilterValue: users.Attribute{Name: "role", Values: []string{"partner_admin", "viewer"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.FilterValue.Data.Name, res.Values())
	fmt.Println("admin:", res.Has("partner_admin"), "viewer:", res.Has("viewer"))
	// Output:
	// role [partner_admin]
	// admin: true viewer: false
}
