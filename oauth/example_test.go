package oauth_test

import (
	"context"
	"fmt"
	"log"
	"net/url"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/oauth"
)

// ExampleNew builds a token Service over a core.Client of its own, with
// the scopes it asks for; p.WithTokens(s) would make it the token source
// of other services.
func ExampleNew() {
	srv := fake.NewServer()
	defer srv.Close()
	base, err := url.Parse(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	p := core.New(core.Config{BaseURL: base})
	s := oauth.New(p, oauth.Options{
		ClientID:     fake.DefaultClientID,
		ClientSecret: fake.DefaultClientSecret,
		Scopes:       []string{"scim"},
	})
	tok, err := s.Token(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tok.TokenType, tok.Valid())
	// Output: Bearer true
}

// ExampleService_Token gets the client's access token. It is cached: the
// second call makes no request.
func ExampleService_Token() {
	srv := fake.NewServer()
	defer srv.Close()
	c, err := partner.New(
		partner.WithBaseURL(srv.URL),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret),
	)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	first, err := c.OAuth.Token(ctx)
	if err != nil {
		log.Fatal(err)
	}
	second, err := c.OAuth.Token(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(first.TokenType, first.AccessToken == second.AccessToken, srv.TokensIssued())
	// Output: Bearer true 1
}

// ExampleService_Revoke invalidates a token; a second invalidation is
// refused with 403.
func ExampleService_Revoke() {
	srv := fake.NewServer()
	defer srv.Close()
	c, err := partner.New(
		partner.WithBaseURL(srv.URL),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret),
	)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	tok, err := c.OAuth.Token(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.OAuth.Revoke(ctx, tok.AccessToken))
	err = c.OAuth.Revoke(ctx, tok.AccessToken)
	fmt.Println(partner.IsForbidden(err))
	// Output:
	// <nil>
	// true
}
