package scim_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/url"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/oauth"
	"github.com/partnerapi/partner-go/scim"
)

// exampleClient returns a client of a fake service with its demo data.
func exampleClient() (*partner.Client, func()) {
	srv := fake.NewServer(fake.WithDemoData())
	c, err := partner.New(
		partner.WithBaseURL(srv.URL),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret),
	)
	if err != nil {
		log.Fatal(err)
	}
	return c, srv.Close
}

// ExampleNew builds the SCIM service alone, without a partner.Client:
// a core.Client sends the token requests, and the same pipeline,
// authorized by the oauth.Service, sends the SCIM calls.
func ExampleNew() {
	srv := fake.NewServer(fake.WithDemoData())
	defer srv.Close()
	base, err := url.Parse(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	tokens := core.New(core.Config{BaseURL: base, UserAgent: "my-provisioner/1.0"})
	auth := oauth.New(tokens, oauth.Options{ClientID: fake.DefaultClientID, ClientSecret: fake.DefaultClientSecret})
	users := scim.New(tokens.WithTokens(auth))

	ctx := context.Background()
	u, err := users.Get(ctx, demo.User1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.ID == demo.User1)
	_, err = users.Get(ctx, "usr-missing")
	fmt.Println(partner.IsNotFound(err))
	// Output:
	// true
	// true
}

func ExampleService_Create() {
	c, done := exampleClient()
	defer done()
	ctx := context.Background()

	u, err := c.SCIM.Create(ctx, &scim.User{
		UserName:    "bjensen@example.com",
		Name:        &scim.Name{GivenName: "Barbara", FamilyName: "Jensen"},
		DisplayName: "Babs Jensen",
		Emails:      []scim.Email{{Value: "bjensen@example.com", Type: "work", Primary: true}},
		Enterprise:  &scim.EnterpriseUser{Department: "Tour Operations"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.UserName, u.IsActive(), u.Enterprise.Department, u.ID != "")

	// The userName is taken now, in any case.
	_, err = c.SCIM.Create(ctx, &scim.User{UserName: "BJensen@example.com"})
	if scim.ErrorTypeOf(err) == scim.ErrorTypeUniqueness {
		fmt.Println("conflict:", partner.IsConflict(err))
	}
	// Output:
	// bjensen@example.com true Tour Operations true
	// conflict: true
}

func ExampleService_Suspend() {
	c, done := exampleClient()
	defer done()
	ctx := context.Background()

	u, err := c.SCIM.Suspend(ctx, demo.User1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.UserName, "active:", u.IsActive())

	u, err = c.SCIM.Reactivate(ctx, demo.User1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.UserName, "active:", u.IsActive())
	// Output:
	// ada.lovelace@example.com active: false
	// ada.lovelace@example.com active: true
}

func ExampleService_List() {
	c, done := exampleClient()
	defer done()

	// The deployed service documents only `userName eq "..."` filters;
	// other conditions are checked on the listed users.
	for u, err := range c.SCIM.List(context.Background(), scim.ListParams{Count: 100}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(u.UserName, "active:", u.IsActive())
	}
	// Output:
	// ada.lovelace@example.com active: true
	// grace.hopper@example.com active: true
	// alan.turing@example.com active: false
}

// ExampleService_ListWith stops a listing after its first user, keeps
// where it stood (a ListCheckpoint is plain JSON: store it) and goes on
// from there later.
func ExampleService_ListWith() {
	c, done := exampleClient()
	defer done()
	ctx := context.Background()

	var at scim.ListCheckpoint
	keep := scim.ListOptions{Checkpoint: func(cp scim.ListCheckpoint) { at = cp }}
	for u, err := range c.SCIM.ListWith(ctx, scim.ListParams{Count: 2}, keep) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("first run:", u.UserName)
		break
	}
	for u, err := range c.SCIM.ListWith(ctx, scim.ListParams{Count: 2}, scim.ListOptions{From: &at}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("resumed:", u.UserName)
	}
	// Output:
	// first run: ada.lovelace@example.com
	// resumed: grace.hopper@example.com
	// resumed: alan.turing@example.com
}

func ExampleService_FindByUserName() {
	c, done := exampleClient()
	defer done()

	u, err := c.SCIM.FindByUserName(context.Background(), "Grace.Hopper@example.com")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.ID, u.UserName, u.IsActive())

	_, err = c.SCIM.FindByUserName(context.Background(), "nobody@example.com")
	fmt.Println(errors.Is(err, scim.ErrNotFound))
	// Output:
	// usr-demo-0002 grace.hopper@example.com true
	// true
}

func ExampleQuote() {
	fmt.Println("userName eq " + scim.Quote(`o"brien@example.com`))
	// Output:
	// userName eq "o\"brien@example.com"
}
