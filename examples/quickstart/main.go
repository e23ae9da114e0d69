// Command quickstart walks through every area of the Partner Integration
// Service, one printed line per step.
//
// With no environment set it starts the embedded fake service (package
// fake) with its demo data and runs against it:
//
//	go run ./examples/quickstart
//
// With PARTNER_BASE_URL, PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET (and
// optionally PARTNER_ENV, the sandbox environment) it runs against that
// server instead.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, os.Getenv); err != nil {
		log.Fatalf("quickstart: %v", err)
	}
}

// step is one part of the walk-through, one area of the interface.
type step struct {
	name string
	run  func(ctx context.Context, c *partner.Client, w io.Writer) error
}

// steps run in order; each area adds its own.
var steps = []step{
	{"auth", authStep},
	{"scim", scimStep},
	{"users", usersStep},
	{"objects", objectsStep},
	{"bulk", bulkStep},
	{"reports", reportsStep},
	{"events", eventsStep},
}

func run(ctx context.Context, w io.Writer, getenv func(string) string) error {
	base := getenv("PARTNER_BASE_URL")
	id, secret := getenv("PARTNER_CLIENT_ID"), getenv("PARTNER_CLIENT_SECRET")
	if base == "" {
		srv := fake.NewServer(fake.WithDemoData())
		defer srv.Close()
		base, id, secret = srv.URL, fake.DefaultClientID, fake.DefaultClientSecret
		fmt.Fprintf(w, "started the embedded fake service at %s\n", base)
	}
	opts := []partner.Option{
		partner.WithBaseURL(base),
		partner.WithClientCredentials(id, secret),
		partner.WithUserAgent("quickstart"),
	}
	if env := getenv("PARTNER_ENV"); env != "" {
		opts = append(opts, partner.WithEnvironment(env))
	}
	c, err := partner.New(opts...)
	if err != nil {
		return err
	}
	for _, s := range steps {
		if err := s.run(ctx, c, w); err != nil {
			c.Close(ctx)
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	if err := c.Close(ctx); err != nil {
		return fmt.Errorf("closing: %w", err)
	}
	fmt.Fprintln(w, "auth: invalidated the access token (DELETE /oauth/token)")
	return nil
}
