// Command quickstart walks through every area of the Partner Integration
// Service, one printed line per step.
//
// With no environment set it starts the embedded fake service (package
// fake) with its demo data and runs against it:
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -h    # its settings
//
// With PARTNER_BASE_URL, PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET (all
// three, and optionally PARTNER_ENV, the sandbox environment) it runs
// against that server instead. A deployment's own words and gateway key
// come from PARTNER_ENV_HEADER (the name of the environment header),
// PARTNER_PORTAL_WORD (as in <word>.integration_status) and
// PARTNER_SUBSCRIPTION_KEY; the embedded fake takes the same words. A
// variable that cannot work is named before anything runs. It ends with a
// line saying that every step passed; the one refused bulk record on the
// way is intended.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/url"
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
// interface's partner_portal.integration_status, or the deployment's own
// with PARTNER_PORTAL_WORD.
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

// serverVars are the environment variables that point the quickstart at
// a real server; all or none of them must be set.
var serverVars = []string{"PARTNER_BASE_URL", "PARTNER_CLIENT_ID", "PARTNER_CLIENT_SECRET"}

// run runs the walk-through, printing to w, with the settings getenv
// reads. Without a server it starts the embedded fake, with the options
// embedded added to its own (tests drive its clock with them).
func run(ctx context.Context, w io.Writer, getenv func(string) string, embedded ...fake.Option) error {
	var set, missing []string
	for _, v := range serverVars {
		if getenv(v) == "" {
			missing = append(missing, v)
		} else {
			set = append(set, v)
		}
	}
	if len(set) > 0 && len(missing) > 0 {
		return fmt.Errorf("%s set but %s not: set all of %s to run against a server, or none of them to run against the embedded fake",
			strings.Join(set, ", "), strings.Join(missing, ", "), strings.Join(serverVars, ", "))
	}
	base := getenv("PARTNER_BASE_URL")
	id, secret := getenv("PARTNER_CLIENT_ID"), getenv("PARTNER_CLIENT_SECRET")
	if base != "" {
		if err := checkBaseURL(base); err != nil {
			return err
		}
	}
	if err := checkDeploymentVars(getenv); err != nil {
		return err
	}
	// The deployment's words; empty ones keep the interface's own.
	words := deployment.Words{EnvHeader: getenv("PARTNER_ENV_HEADER"), PortalWord: getenv("PARTNER_PORTAL_WORD")}
	conn := deployment.Connection{BaseURL: base, ClientID: id, ClientSecret: secret,
		SubscriptionKey: getenv("PARTNER_SUBSCRIPTION_KEY"), Words: words}
	if base == "" {
		// The embedded fake speaks the same words and hands the client
		// its connection: its URL, credentials, key and words.
		d := fake.Deployment{EnvHeader: words.EnvHeader, PortalWord: words.PortalWord, SubscriptionKey: conn.SubscriptionKey}
		srv := fake.NewServer(append([]fake.Option{fake.WithDemoData(), fake.WithDeployment(d)}, embedded...)...)
		defer srv.Close()
		conn = srv.Connection()
		fmt.Fprintf(w, "started the embedded fake service at %s\n", conn.BaseURL)
	}
	audit := objects.FieldIntegrationStatus // the interface's word, without PARTNER_PORTAL_WORD
	if f := conn.Words.AuditField(); f != "" {
		audit = objects.FieldName(f)
	}
	opts := []partner.Option{partner.WithConnection(conn), partner.WithUserAgent("quickstart")}
	if env := getenv("PARTNER_ENV"); env != "" {
		opts = append(opts, partner.WithEnvironment(env))
	}
	c, err := partner.New(opts...)
	if err != nil {
		return fmt.Errorf("the PARTNER_* variables do not make a client: %w", err)
	}
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

// checkBaseURL says what is wrong with PARTNER_BASE_URL in the terms of
// the variable, before partner.New would in the terms of its options.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		// Not raw: it may carry a password.
		return fmt.Errorf("PARTNER_BASE_URL does not parse (%v): use an absolute URL such as https://api.example.com", err.(*url.Error).Err)
	case !u.IsAbs() || u.Host == "":
		return fmt.Errorf("PARTNER_BASE_URL %q is not an absolute URL such as https://api.example.com", u.Redacted())
	case u.User != nil:
		return errors.New("PARTNER_BASE_URL must not carry credentials: put them in PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET")
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("PARTNER_BASE_URL %q must not have a query or fragment", u.Redacted())
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && sdkAccepts(partner.WithBaseURL(raw)):
		// Plain http to this machine: the SDK's own rule decides.
		return nil
	}
	return fmt.Errorf("PARTNER_BASE_URL %q must be an https URL (plain http only to a loopback address): tokens would travel in clear", u.Redacted())
}

// checkDeploymentVars says what is wrong with PARTNER_ENV_HEADER,
// PARTNER_ENV or PARTNER_SUBSCRIPTION_KEY in the terms of the variables,
// before partner.New would in the terms of its options (and before the
// embedded fake starts). partner.New decides (sdkAccepts); this only words
// its refusal. The key itself is never repeated.
func checkDeploymentVars(getenv func(string) string) error {
	const anyBase = "https://api.example.com"
	if h := getenv("PARTNER_ENV_HEADER"); h != "" && !sdkAccepts(partner.WithBaseURL(anyBase), partner.WithEnvironmentHeader(h)) {
		if strings.EqualFold(h, "Authorization") {
			return errors.New("PARTNER_ENV_HEADER must not be Authorization: the client sends its token there")
		}
		return fmt.Errorf("PARTNER_ENV_HEADER %q is not a header name: letters, digits and !#$%%&'*+-.^_`|~ only, such as x-svc-env", h)
	}
	env := getenv("PARTNER_ENV")
	if env != "" && !sdkAccepts(partner.WithBaseURL(anyBase), partner.WithEnvironmentHeader("x-svc-env"), partner.WithEnvironment(env)) {
		if strings.ContainsAny(env, "\r\n") {
			return errors.New("PARTNER_ENV must not contain a line break")
		}
		return fmt.Errorf("PARTNER_ENV %q is not a host name: name the environment by its host name, such as sandbox.example.com, without scheme or path", env)
	}
	// Toward a server (whatever its host) the header must be named; the
	// embedded fake names its own in its Connection.
	if u, err := url.Parse(getenv("PARTNER_BASE_URL")); env != "" && getenv("PARTNER_ENV_HEADER") == "" && err == nil && u.Host != "" &&
		!sdkAccepts(partner.WithBaseURL(u.String()), partner.WithEnvironment(env)) {
		return fmt.Errorf("PARTNER_ENV needs PARTNER_ENV_HEADER toward %s: the deployment reads the environment from a header named after its operator, not from the stand-in x-svc-env, and would act on production", u.Hostname())
	}
	if key := getenv("PARTNER_SUBSCRIPTION_KEY"); key != "" && !sdkAccepts(partner.WithBaseURL(anyBase), partner.WithSubscriptionKey(key)) {
		return errors.New("PARTNER_SUBSCRIPTION_KEY must not contain a line break")
	}
	return nil
}

// sdkAccepts reports whether partner.New accepts opts (with stand-in
// credentials): the SDK's own checks, such as its plain-http rule, asked
// before the example words a refusal in the terms of its variables. It
// sends nothing.
func sdkAccepts(opts ...partner.Option) bool {
	c, err := partner.New(append(opts, partner.WithClientCredentials("id", "secret"))...)
	if err != nil {
		return false
	}
	c.Close(context.Background())
	return true
}
