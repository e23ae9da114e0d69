package doctor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/partnerapi/partner-go/internal/check"
	"github.com/partnerapi/partner-go/internal/contract"
)

// Run checks the deployment cfg names and returns what it found. The
// error is nil when every check could be made, whatever they found
// (Report.Diverged); it wraps ErrCredentialsRefused when the deployment
// refused the credentials (the report says where); any other error says
// why the run could not go on, with the report of the checks made so far
// (nil when none was). Run sends no write but a view's preparation when
// cfg.PrepareView asks for it; it invalidates its own token when done.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	p, err := newProber(cfg)
	if err != nil {
		return nil, err
	}
	err = p.run(ctx)
	r := &Report{BaseURL: p.base.Redacted()}
	for _, c := range p.checks {
		r.Checks = append(r.Checks, *c)
	}
	if err == nil {
		err = p.refused
	}
	return r, err
}

// newProber checks cfg and readies a run.
func newProber(cfg Config) (*prober, error) {
	c := cfg.Connection
	if c.BaseURL == "" {
		return nil, errors.New("doctor: no base URL")
	}
	base, err := url.Parse(c.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("doctor: base URL: %w", check.URLParseError(err))
	}
	if !check.IsHTTPURL(base) {
		return nil, fmt.Errorf("doctor: base URL %s: not an http or https URL", base.Redacted())
	}
	if c.ClientID == "" || c.ClientSecret == "" {
		return nil, errors.New("doctor: no client credentials (Connection.ClientID, Connection.ClientSecret)")
	}
	if c.Environment != "" && c.Words.EnvHeader == "" {
		return nil, errors.New("doctor: an environment (Connection.Environment) needs the environment header's name (Connection.Words.EnvHeader)")
	}
	if err := cfg.checkReads(); err != nil {
		return nil, err
	}
	checker, err := contract.Load()
	if err != nil {
		return nil, err
	}
	prof, err := loadProfile()
	if err != nil {
		return nil, fmt.Errorf("doctor: profile.json: %w", err)
	}
	p := &prober{cfg: cfg, base: base, checker: checker, profile: prof, hc: &http.Client{Timeout: 30 * time.Second},
		envHeader: c.Words.EnvHeader, keyHeader: c.Words.SubscriptionKeyHeader, maxPages: cfg.MaxPages}
	if cfg.HTTPClient != nil {
		hc := *cfg.HTTPClient
		p.hc = &hc
	}
	// A redirect is an answer: the credentials, the token and the gateway
	// key go to the base URL's host only.
	p.hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if p.keyHeader == "" {
		p.keyHeader = "Ocp-Apim-Subscription-Key"
	}
	if p.maxPages <= 0 {
		p.maxPages = 50
	}
	return p, nil
}

// checkReads refuses the fields that name a read only together with
// another one when the other is missing: a check they would have asked
// for is not quietly skipped.
func (cfg Config) checkReads() error {
	switch {
	case (cfg.UserEmail == "") != (cfg.Attribute == ""):
		return errors.New("doctor: the attribute check needs both Config.UserEmail and Config.Attribute")
	case cfg.ExecutionID != "" && cfg.IntegrationID == "":
		return errors.New("doctor: Config.ExecutionID needs its integration's id (Config.IntegrationID)")
	case cfg.MaxPages < 0:
		return fmt.Errorf("doctor: Config.MaxPages %d is negative", cfg.MaxPages)
	}
	return nil
}

// run makes the checks in order; a refusal or a broken connection skips
// the rest.
func (p *prober) run(ctx context.Context) error {
	if err := p.connection(); err != nil {
		return err
	}
	if err := p.getToken(ctx); err != nil {
		return p.skipRest(err)
	}
	if p.stop != "" {
		return p.skipRest(nil)
	}
	defer p.revoke(ctx)
	p.environment()
	for _, step := range []func(context.Context) error{
		p.scim, p.attribute, p.reports, p.view, p.externalIDs, p.bulkStatus,
		p.subscribers, p.integrations, p.eventKinds,
	} {
		if err := step(ctx); err != nil {
			return p.skipRest(err)
		}
		if p.stop != "" {
			return p.skipRest(nil)
		}
	}
	return nil
}

// skipRest records that the checks left were not made, and why.
func (p *prober) skipRest(err error) error {
	why := p.stop
	if err != nil && !errors.Is(err, ErrCredentialsRefused) {
		why = err.Error()
	}
	p.add(&Check{Name: "the other checks", Status: Skipped, Note: why})
	if errors.Is(err, ErrCredentialsRefused) {
		return nil // p.refused
	}
	return err
}

// connection checks the base URL: https, or plain http to this machine
// (the SDK's plain-http rule).
func (p *prober) connection() error {
	c := p.add(&Check{Name: "connection"})
	if p.base.Scheme == "https" {
		c.note("TLS to " + p.base.Host)
		return nil
	}
	if !check.PlainHTTPRefused(p.base, false) {
		c.note("plain http to this machine (the SDK allows it only there)")
		return nil
	}
	c.Status, c.Note = Failed, "plain http to "+p.base.Host+": the SDK allows it to this machine only; use https"
	return errors.New("doctor: " + c.Note)
}

// environment says which environment and gateway key the requests named.
func (p *prober) environment() {
	c := p.add(&Check{Name: "environment header"})
	if p.cfg.Connection.Environment == "" {
		c.Status, c.Note = Skipped, "no environment given: the requests act on the deployment's default environment"
	} else {
		c.note(fmt.Sprintf("every request named the environment %q in %s, and the token was granted", p.cfg.Connection.Environment, p.envHeader))
	}
	k := p.add(&Check{Name: "gateway key"})
	if p.cfg.Connection.SubscriptionKey == "" {
		k.Status, k.Note = Skipped, "no subscription key given, and none was asked for"
	} else {
		k.note("the gateway accepted the subscription key in " + p.keyHeader)
	}
}

// revoke invalidates the run's own token, the one write Run always sends
// (DELETE /oauth/token), under a context of its own.
func (p *prober) revoke(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var q url.Values
	if p.cfg.Connection.Environment != "" {
		q = url.Values{p.envHeader: {p.cfg.Connection.Environment}}
	}
	if a, err := p.call(ctx, http.MethodDelete, "/oauth/token", q, nil); err == nil && a.status/100 != 2 {
		p.add(&Check{Name: "token invalidation", Operation: a.op, Status: Skipped,
			Note: "the deployment did not invalidate the run's token: " + p.statusText(a)})
	}
}

// firstRead: the first answer of the service proper is 401 or 403 (the
// credentials) or another refusal of every request (a header the
// deployment requires that the SDK does not send), which ends the run.
func (p *prober) firstRead(c *Check, a *answer, want int) bool {
	if a.status == want || a.status == http.StatusNotFound || a.status >= 500 ||
		a.status == http.StatusUnauthorized || a.status == http.StatusForbidden {
		return p.judge(c, a, want)
	}
	p.refusesRequests(c, a, want)
	return false
}

// refusesRequests records on the connection check that the deployment
// refuses a request the fake answers with want, which ends the run: a
// header or parameter it requires that the SDK does not send.
func (p *prober) refusesRequests(c *Check, a *answer, want int) {
	conn := p.checks[0]
	conn.diverge(Divergence{Operation: a.op, Member: "request", Fake: fmt.Sprintf("%d to the SDK's requests", want),
		Deployment: p.statusText(a) + requiredHeaderHint(p.message(a))})
	c.Status, c.Note = Skipped, "the deployment refuses the SDK's requests (connection)"
	if a.op == "post-token" {
		c.Status, c.Note = Failed, "no token: the deployment refuses the SDK's token request (connection)"
	}
	p.stop = "the deployment refuses the SDK's requests: " + p.statusText(a)
}

// requiredHeaderHint points at a header when a refusal names one.
func requiredHeaderHint(msg string) string {
	if strings.Contains(strings.ToLower(msg), "header") {
		return " (a header the deployment requires that the SDK does not send)"
	}
	return ""
}
