package main

import (
	"context"
	"fmt"
	"strings"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/objects"
)

// serverVars point the program at a deployment; all or none of them must
// be set. PARTNER_ENV (the sandbox's host name), PARTNER_ENV_HEADER (the
// deployment's name of the environment header) and
// PARTNER_SUBSCRIPTION_KEY (its gateway key) are optional, and so is
// PARTNER_PORTAL_WORD, the deployment's word in its audit field
// (<word>.integration_status). The embedded fake takes the same words.
var serverVars = []string{"PARTNER_BASE_URL", "PARTNER_CLIENT_ID", "PARTNER_CLIENT_SECRET"}

// service is a client and, when no deployment is named, the embedded fake
// it talks to.
type service struct {
	*partner.Client
	fake *fake.Server // nil against a deployment
	// audit is the deployment's audit field.
	audit objects.FieldName
}

// Close revokes the client's token and stops the embedded fake.
func (s *service) Close(ctx context.Context) error {
	err := s.Client.Close(ctx)
	if s.fake != nil {
		s.fake.Close()
	}
	return err
}

// connect makes a client, with the options extra, from the PARTNER_*
// variables getenv reads. When none of serverVars is set it starts the
// embedded fake with its demo data and fakeOpts instead (tests pass
// options that make it quick).
func connect(getenv func(string) string, userAgent string, extra []partner.Option, fakeOpts ...fake.Option) (*service, error) {
	var set, missing []string
	for _, v := range serverVars {
		if getenv(v) == "" {
			missing = append(missing, v)
		} else {
			set = append(set, v)
		}
	}
	if len(set) > 0 && len(missing) > 0 {
		return nil, fmt.Errorf("%s set but %s not: set all of %s to use a deployment, or none to use the embedded fake",
			strings.Join(set, ", "), strings.Join(missing, ", "), strings.Join(serverVars, ", "))
	}
	// The deployment's words; empty ones keep the interface's own.
	words := deployment.Words{EnvHeader: getenv("PARTNER_ENV_HEADER"), PortalWord: getenv("PARTNER_PORTAL_WORD")}
	conn := deployment.Connection{BaseURL: getenv("PARTNER_BASE_URL"), ClientID: getenv("PARTNER_CLIENT_ID"),
		ClientSecret: getenv("PARTNER_CLIENT_SECRET"), SubscriptionKey: getenv("PARTNER_SUBSCRIPTION_KEY"), Words: words}
	s := &service{}
	if conn.BaseURL == "" {
		// The embedded fake speaks the same words and hands the client
		// its connection: its URL, credentials, key and words.
		d := fake.Deployment{EnvHeader: words.EnvHeader, PortalWord: words.PortalWord, SubscriptionKey: conn.SubscriptionKey}
		s.fake = fake.NewServer(append([]fake.Option{fake.WithDemoData(), fake.WithDeployment(d)}, fakeOpts...)...)
		conn = s.fake.Connection()
	}
	s.audit = objects.FieldIntegrationStatus // the interface's word, without PARTNER_PORTAL_WORD
	if f := conn.Words.AuditField(); f != "" {
		s.audit = objects.FieldName(f)
	}
	opts := []partner.Option{partner.WithConnection(conn), partner.WithUserAgent(userAgent)}
	if v := getenv("PARTNER_ENV"); v != "" {
		opts = append(opts, partner.WithEnvironment(v))
	}
	c, err := partner.New(append(opts, extra...)...)
	if err != nil {
		if s.fake != nil {
			s.fake.Close()
		}
		return nil, fmt.Errorf("the PARTNER_* variables do not make a client: %w", err)
	}
	s.Client = c
	return s, nil
}
