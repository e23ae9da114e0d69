// Command quickstart walks through every area of the Partner Integration
// Service, one printed line per step.
//
// With no environment set it starts the embedded fake service (package
// fake) with its demo data and runs against it:
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -h    # its settings
//
// With PARTNER_BASE_URL, PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET it
// runs against that deployment instead, whose portal word
// PARTNER_PORTAL_WORD names the audit field; the other PARTNER_*
// variables (deployment.FromEnv) give its words, gateway key and
// environment, and the embedded fake takes the same words. A variable
// that cannot work is named before anything runs. It ends with a line
// saying that every step passed; the one refused bulk record on the way
// is intended.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/objects"
)

func main() {
	if err := parseFlags(os.Args[1:], os.Stderr); errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	} else if err != nil {
		os.Exit(2)
	}
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

// steps returns the steps, which run in order; each area adds its own.
// audit is the audit field the objects and events steps write: the
// deployment's <PARTNER_PORTAL_WORD>.integration_status, or the embedded
// fake's.
func steps(audit objects.FieldName) []step {
	return []step{
		{"auth", authStep},
		{"scim", scimStep},
		{"users", usersStep},
		{"objects", func(ctx context.Context, c *partner.Client, w io.Writer) error { return objectsStep(ctx, c, w, audit) }},
		{"bulk", bulkStep},
		{"reports", reportsStep},
		{"events", func(ctx context.Context, c *partner.Client, w io.Writer) error { return eventsStep(ctx, c, w, audit) }},
	}
}

// run runs the walk-through, printing to w, with the settings getenv
// reads. Without a deployment it starts the embedded fake, with the
// options embedded added to its own (tests drive its clock with them).
func run(ctx context.Context, w io.Writer, getenv func(string) string, embedded ...fake.Option) error {
	// The deployment the PARTNER_* variables name, or else the embedded
	// fake with its demo data, speaking the words they give.
	conn, err := deployment.FromEnv(getenv)
	if errors.Is(err, deployment.ErrNotSet) {
		srv := fake.NewServer(append([]fake.Option{fake.WithDemoData(), fake.WithWords(conn.Words),
			fake.WithDeployment(fake.Deployment{SubscriptionKey: conn.SubscriptionKey})}, embedded...)...)
		defer srv.Close()
		env := conn.Environment
		conn, err = srv.Connection(), nil
		conn.Environment = env
		fmt.Fprintf(w, "started the embedded fake service at %s\n", conn.BaseURL)
	}
	if err != nil {
		return err
	}
	if conn.Words.PortalWord == "" {
		return errors.New("PARTNER_PORTAL_WORD is not set: the objects and events steps write the deployment's audit field, <word>.integration_status; set it to the deployment's portal word")
	}
	c, err := partner.New(partner.WithConnection(conn), partner.WithUserAgent("quickstart"))
	if err != nil {
		return fmt.Errorf("the PARTNER_* variables do not make a client: %w", err)
	}
	audit := objects.FieldName(conn.Words.AuditField())
	parts := steps(audit)
	for _, s := range parts {
		if err := s.run(ctx, c, w); err != nil {
			// Revoke the token on the way out; the step's error is the
			// one to report, so Close's is joined to it.
			return errors.Join(fmt.Errorf("%s: %w", s.name, err), c.Close(ctx))
		}
	}
	if err := c.Close(ctx); err != nil {
		return fmt.Errorf("closing: %w", err)
	}
	fmt.Fprintln(w, "auth: invalidated the access token (DELETE /oauth/token)")
	names := make([]string, len(parts))
	for i, s := range parts {
		names[i] = s.name
	}
	fmt.Fprintf(w, "quickstart: every step passed (%s)\n", strings.Join(names, ", "))
	return nil
}
