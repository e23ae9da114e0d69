package partner_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/scim"
)

// ExampleNew builds a client against the in-memory fake service, as a
// test would: the fake's Connection gives its URL, credentials and words
// (toward a deployment: WithBaseURL, WithClientCredentials and WithWords
// with the deployment's). New does no I/O: the first call fetches the
// token.
func ExampleNew() {
	srv := fake.NewServer()
	defer srv.Close()

	c, err := partner.New(
		partner.WithConnection(srv.Connection()),
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

	if apiErr, ok := errors.AsType[*partner.Error](err); ok {
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

// ExampleIsOutcomeUnknown creates a user whose answer is lost after the
// service stored it (the fake drops the connection after handling the
// request). The error says the outcome is unknown, so the user is looked
// up by userName before being created again.
func ExampleIsOutcomeUnknown() {
	srv := fake.NewServer(fake.WithFullSCIMFilter())
	defer srv.Close()
	c, err := partner.New(partner.WithBaseURL(srv.URL),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	defer c.Close(ctx)

	srv.InjectFault(fake.Fault{Method: "POST", Path: "/api/scim/v2/Users", Times: 1, DropAfter: true})
	want := &scim.User{UserName: "ada@example.com"}
	u, err := c.SCIM.Create(ctx, want)
	if partner.IsOutcomeUnknown(err) {
		fmt.Println("create: outcome unknown")
		u, err = c.SCIM.FindByUserName(ctx, want.UserName)
		if errors.Is(err, scim.ErrNotFound) {
			u, err = c.SCIM.Create(ctx, want)
		}
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("user:", u.UserName, "stored once:", len(srv.Users()) == 1)
	// Output:
	// create: outcome unknown
	// user: ada@example.com stored once: true
}

// ExampleWithRetryBudget sizes the retry budget that all calls of a client
// share: while the service fails, the retries stop once it is spent and
// calls fail at once with ErrRetryBudgetExhausted.
func ExampleWithRetryBudget() {
	srv := fake.NewServer()
	defer srv.Close()
	c, err := partner.New(partner.WithBaseURL(srv.URL),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret),
		partner.WithRetryBudget(10), // two retries of 5 tokens each
		partner.WithRetryWait(time.Millisecond, time.Millisecond))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	defer c.Close(ctx)

	srv.InjectFault(fake.Fault{Method: "GET", Path: "/event/v1/subscriber", Status: 503})
	for range 2 {
		for _, err := range c.Events.Subscribers(ctx) {
			if err != nil {
				fmt.Println(partner.IsServerError(err), errors.Is(err, partner.ErrRetryBudgetExhausted))
				break
			}
		}
	}
	fmt.Println("requests:", srv.CountRequests("GET", "/event/v1/subscriber"))
	// Output:
	// true true
	// true true
	// requests: 4
}
