package fake

import (
	"crypto/subtle"
	"net/http"

	shared "github.com/partnerapi/partner-go/deployment"
)

// This file holds the options that make the fake speak like one
// deployment of the service: the words the interface only stands in for
// (the environment header's name, the portal word), the API gateway's
// subscription key, and the checks the fake can do beyond the deployed
// service (scopes). See docs/deployed-service.md.

// Defaults of the deployment words: the interface's neutral stand-ins.
const (
	// defaultEnvHeader is the environment header's name in the interface.
	defaultEnvHeader = "x-svc-env"
	// defaultPortalWord is the interface's stand-in for the operator's
	// portal word, as in partner_portal.integration_status.
	defaultPortalWord = "partner_portal"
	// defaultSubscriptionKeyHeader is the header an API gateway reads the
	// subscription key from; the query parameter subscriptionKeyParam is
	// accepted too.
	defaultSubscriptionKeyHeader = "Ocp-Apim-Subscription-Key"
	// subscriptionKeyParam is the query parameter that may carry the
	// subscription key instead of the header.
	subscriptionKeyParam = "subscription-key"
)

// deployment holds the words and gateway settings of a Fake.
type deployment struct {
	envHeader    string
	portal       string
	subKey       string
	subKeyHeader string
	scopeChecks  bool
	envelope     bool
	// misspellIntegration: withMisspelledIntegrationID.
	misspellIntegration bool
	// viewStatusDetail: WithViewStatusDetail.
	viewStatusDetail bool
	// unknownMembers: WithUnknownMembers.
	unknownMembers bool
}

func (d *deployment) defaults() {
	if d.envHeader == "" {
		d.envHeader = defaultEnvHeader
	}
	if d.portal == "" {
		d.portal = defaultPortalWord
	}
	if d.subKeyHeader == "" {
		d.subKeyHeader = defaultSubscriptionKeyHeader
	}
}

// Deployment describes a deployment of the service where it differs from
// the interface as published: its own words, its API gateway, and the
// variants of its published descriptions, so that a team can run its
// tests against what its deployment does. The zero Deployment is the
// interface; WithDeployment applies the fields that are set.
type Deployment struct {
	// PortalWord is the word the deployment uses where the interface says
	// partner_portal. It names the audit field (AuditField), the referral
	// id field (ReferralField) and the referral event kind
	// (ReferralEvent). The fake accepts the configured words and refuses
	// others, as a deployment accepts only its own: give the SDK and the
	// fake the same word.
	PortalWord string
	// EnvHeader names the header that selects the environment (default
	// x-svc-env, the interface's stand-in). The request log records its
	// value as LoggedRequest.Env.
	EnvHeader string
	// SubscriptionKey makes the fake require an API gateway subscription
	// key on every route (the signed upload URLs excepted, which are not
	// behind the gateway), in the header SubscriptionKeyHeader
	// (Ocp-Apim-Subscription-Key when empty) or the query parameter
	// subscription-key. A request without it, or with another key, gets
	// 401 before any other check. The key never appears in the request log.
	SubscriptionKey       string
	SubscriptionKeyHeader string
	// UploadMethod and UploadContentType make the signed upload URLs take
	// the file only with that method (POST when empty) and, when set,
	// that Content-Type: another is answered 403, as a cloud storage host
	// answers a request its URL's signature does not cover. By default the
	// URLs take POST with any content type, as the interface says.
	UploadMethod, UploadContentType string
	// MisspelledSuccessCount makes the bulk status operation spell the
	// success count succcess_count (three c's), as one of the published
	// descriptions does.
	MisspelledSuccessCount bool
	// MisspelledIntegrationID makes the subscriber read (GET
	// /event/v1/subscriber/{id}) spell its integration member
	// integraion_id, as one of the published descriptions does; the
	// listing keeps integration_id.
	MisspelledIntegrationID bool
	// SCIMZeroTotals makes the SCIM list operation answer totalResults,
	// startIndex and itemsPerPage all 0 beside the page's resources, as the
	// published example does.
	SCIMZeroTotals bool
	// SCIMStartIndexIgnored makes the SCIM list operation ignore
	// startIndex and answer every request from the first matching user, as
	// a service whose published list example answers startIndex 0 may.
	SCIMStartIndexIgnored bool
}

// WithDeployment makes the fake behave as the deployment d describes; see
// Deployment. Fields left zero keep the interface's behaviour.
func WithDeployment(d Deployment) Option {
	return func(f *Fake) {
		set := func(on bool, o Option) {
			if on {
				o(f)
			}
		}
		word := func(dst *string, v string) {
			if v != "" {
				*dst = v
			}
		}
		word(&f.deploy.portal, d.PortalWord)
		word(&f.deploy.envHeader, d.EnvHeader)
		word(&f.deploy.subKey, d.SubscriptionKey)
		word(&f.deploy.subKeyHeader, d.SubscriptionKeyHeader)
		set(d.UploadMethod != "" || d.UploadContentType != "", withSignedUploads(d.UploadMethod, d.UploadContentType))
		set(d.MisspelledSuccessCount, withMisspelledSuccessCount())
		set(d.MisspelledIntegrationID, withMisspelledIntegrationID())
		set(d.SCIMZeroTotals, withSCIMZeroTotals())
		set(d.SCIMStartIndexIgnored, withSCIMStartIndexIgnored())
	}
}

// WithScopeChecks turns on the fake's own per-area OAuth scopes, one per
// area: "scim", "users", "reports", "objects", "bulk" and "events". A client registered with scopes (WithClient) may use
// only those areas, a token request's scope narrows its token to the
// scopes named and must name only allowed ones, and a call outside the
// token's scopes gets 403. The interface defines no scopes, so by default
// the fake requires none: any scope may be asked for and every token may
// use every area.
func WithScopeChecks() Option { return func(f *Fake) { f.deploy.scopeChecks = true } }

// Connection returns what a client needs to talk to the fake as it is
// configured: its URL (NewServer's, or SetURL's), the first client
// registered (WithClient, else DefaultClientID and DefaultClientSecret),
// the subscription key it requires (Deployment.SubscriptionKey, else
// none) and the words it speaks, the interface's stand-ins unless
// WithDeployment gave others: the environment header, the portal word and
// the subscription key's header, each named explicitly. A test gives it
// to the client whole, so the client takes the path it takes toward a
// deployment, with the fake's words:
//
//	c, err := partner.New(partner.WithConnection(srv.Connection()))
//
// Package deployment, which holds its type, imports nothing; the fake
// imports no other package of the SDK.
func (f *Fake) Connection() shared.Connection {
	return shared.Connection{
		BaseURL:         f.URL(),
		ClientID:        f.connClient[0],
		ClientSecret:    f.connClient[1],
		SubscriptionKey: f.deploy.subKey,
		Words: shared.Words{
			EnvHeader:             f.deploy.envHeader,
			PortalWord:            f.deploy.portal,
			SubscriptionKeyHeader: f.deploy.subKeyHeader,
		},
	}
}

// AuditField is the audit field the fake accepts:
// <portal word>.integration_status.
func (f *Fake) AuditField() string { return f.deploy.portal + ".integration_status" }

// ReferralField is the field that holds an opportunity's partner portal
// referral id: <portal word>.referral_id. GET external_id lists it beside
// the default external-id field when it holds a value.
func (f *Fake) ReferralField() string { return f.deploy.portal + ".referral_id" }

// ReferralEvent is the event kind of an opportunity submitted to the
// partner portal as a referral: object.<portal word>_referral_submit. The
// fake lists it and accepts subscriptions to it; it sends it when an
// opportunity's referral field (ReferralField) is set to a value. A
// referral kind of another portal word is unknown, as on a deployment.
func (f *Fake) ReferralEvent() string { return "object." + f.deploy.portal + "_referral_submit" }

// gatewayRefuses answers 401 when a subscription key is required and r
// does not carry it, in the error shape of an API gateway.
func (f *Fake) gatewayRefuses(w http.ResponseWriter, r *http.Request) bool {
	want := f.deploy.subKey
	if want == "" {
		return false
	}
	got := r.Header.Get(f.deploy.subKeyHeader)
	if got == "" {
		got = r.URL.Query().Get(subscriptionKeyParam)
	}
	msg := ""
	switch {
	case got == "":
		msg = "Access denied due to missing subscription key. Make sure to include the subscription key when making requests to the API."
	case subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1:
		msg = "Access denied due to invalid subscription key. Make sure to provide a valid key for an active subscription."
	default:
		return false
	}
	writeJSON(w, http.StatusUnauthorized, struct {
		StatusCode int    `json:"statusCode"`
		Message    string `json:"message"`
	}{http.StatusUnauthorized, msg})
	return true
}
