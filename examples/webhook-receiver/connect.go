package main

import (
	"context"
	"fmt"
	"strings"

	partner "github.com/partnerapi/partner-go"
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
	s := &service{audit: objects.FieldIntegrationStatus}
	if w := getenv("PARTNER_PORTAL_WORD"); w != "" {
		s.audit = objects.FieldName(w + ".integration_status")
	}
	base, id, secret := getenv("PARTNER_BASE_URL"), getenv("PARTNER_CLIENT_ID"), getenv("PARTNER_CLIENT_SECRET")
	if base == "" {
		d := fake.Deployment{EnvHeader: getenv("PARTNER_ENV_HEADER"), PortalWord: getenv("PARTNER_PORTAL_WORD"),
			SubscriptionKey: getenv("PARTNER_SUBSCRIPTION_KEY")}
		s.fake = fake.NewServer(append([]fake.Option{fake.WithDemoData(), fake.WithDeployment(d)}, fakeOpts...)...)
		base, id, secret = s.fake.URL, fake.DefaultClientID, fake.DefaultClientSecret
	}
	opts := []partner.Option{
		partner.WithBaseURL(base),
		partner.WithClientCredentials(id, secret),
		partner.WithUserAgent(userAgent),
	}
	if v := getenv("PARTNER_ENV_HEADER"); v != "" {
		opts = append(opts, partner.WithEnvironmentHeader(v))
	}
	if v := getenv("PARTNER_ENV"); v != "" {
		opts = append(opts, partner.WithEnvironment(v))
	}
	if v := getenv("PARTNER_SUBSCRIPTION_KEY"); v != "" {
		opts = append(opts, partner.WithSubscriptionKey(v))
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
