package partner_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
)

// ExampleNew builds a client against the in-memory fake service, as a
// test would. New does no I/O: the first call fetches the token.
func ExampleNew() {
	srv := fake.NewServer()
	defer srv.Close()

	c, err := partner.New(
		partner.WithBaseURL(srv.URL),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret),
		partner.WithEnvironment("sandbox"),
	)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	fmt.Println("requests after New:", len(srv.Requests()))

	tok, err := c.OAuth.Token(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("token type:", tok.TokenType)

	// Close invalidates the access token on the server.
	if err := c.Close(ctx); err != nil {
		log.Fatal(err)
	}
	for _, r := range srv.Requests() {
		fmt.Println(r.Method, r.Path, r.Status, r.Env)
	}
	// Output:
	// requests after New: 0
	// token type: Bearer
	// POST /oauth/token 200 sandbox
	// DELETE /oauth/token 200 sandbox
}

// ExampleNew_validation shows the configuration errors New reports.
func ExampleNew_validation() {
	_, err := partner.New(
		partner.WithBaseURL("http://api.example.com"),
		partner.WithClientCredentials("id", "secret"),
	)
	fmt.Println(err)
	_, err = partner.New(partner.WithBaseURL("https://api.example.com"))
	fmt.Println(err)
	// Output:
	// partner: base URL "http://api.example.com" is not HTTPS; tokens would travel in clear (use WithInsecureHTTP to allow it)
	// partner: no client credentials: use WithClientCredentials or WithTokenSource
}

// ExampleError tells apart the service's answers with the Is helpers and
// reads the details from *partner.Error.
func ExampleError() {
	srv := fake.NewServer()
	defer srv.Close()
	c, err := partner.New(
		partner.WithBaseURL(srv.URL),
		partner.WithClientCredentials(fake.DefaultClientID, "not-the-secret"),
	)
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.OAuth.Token(context.Background())

	var apiErr *partner.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Code)
	}
	fmt.Println("unauthorized:", partner.IsUnauthorized(err)) // a wrong secret counts
	fmt.Println("bad request:", partner.IsBadRequest(err))
	fmt.Println("not found:", partner.IsNotFound(err))
	fmt.Println(err)
	// Output:
	// 400 invalid_client
	// unauthorized: true
	// bad request: true
	// not found: false
	// partner: POST /oauth/token: 400 Bad Request: invalid_client: unknown client or wrong client secret
}
