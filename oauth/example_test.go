package oauth_test

import (
	"context"
	"fmt"
	"log"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
)

// ExampleService_Token gets the client's access token. It is cached: the
// second call makes no request.
func ExampleService_Token() {
	srv := fake.NewServer(contractCheck)
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
	srv := fake.NewServer(contractCheck)
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
