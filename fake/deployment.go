package fake

import (
	"crypto/subtle"
	"net/http"

	"github.com/partnerapi/partner-go/deployment"
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

// deploySettings holds the words and gateway settings of a Fake.
type deploySettings struct {
	// words are the words the fake speaks, each field set (defaults).
	words       deployment.Words
	subKey      string
	scopeChecks bool
	envelope    bool
	// misspellIntegration: withMisspelledIntegrationID.
	misspellIntegration bool
	// viewStatusDetail: WithViewStatusDetail.
	viewStatusDetail bool
	// unknownMembers: WithUnknownMembers.
	unknownMembers bool
}

// defaults fills the words not given with the interface's stand-ins.
func (d *deploySettings) defaults() {
	d.words = withWords(deployment.Words{
		EnvHeader:             defaultEnvHeader,
		PortalWord:            defaultPortalWord,
		SubscriptionKeyHeader: defaultSubscriptionKeyHeader,
	}, d.words)
}

// withWords is w with the fields that over sets replaced.
func withWords(w, over deployment.Words) deployment.Words {
	for _, f := range []struct {
		dst *string
		v   string
	}{
		{&w.EnvHeader, over.EnvHeader}, {&w.PortalWord, over.PortalWord}, {&w.SubscriptionKeyHeader, over.SubscriptionKeyHeader},
	} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
	return w
}

// WithWords makes the fake speak a deployment's words w, as
// partner.WithWords makes the client speak them: the environment header
// (x-svc-env when empty), the portal word of the audit field, the
// referral field and the referral event kind (partner_portal when empty),
// and the subscription key's header (Ocp-Apim-Subscription-Key when
// empty). The fake accepts the configured words and refuses others, as a
// deployment accepts only its own: give the client and the fake the same
// words. Connection returns them, so a test derives the names from
// Connection().Words (AuditField, ReferralField, ReferralEvent).
func WithWords(w deployment.Words) Option {
	return func(f *Fake) { f.deploy.words = withWords(f.deploy.words, w) }
}

// Deployment describes a deployment of the service where it differs from
// the interface as published: its API gateway and the variants of its
// published descriptions, so that a team can run its tests against what
// its deployment does. Its own words go in WithWords. The zero Deployment
// is the interface; WithDeployment applies the fields that are set.
type Deployment struct {
	// PortalWord is the word the deployment uses where the interface says
	// partner_portal.
	//
	// Deprecated: Use WithWords(deployment.Words{PortalWord: word}), which
	// takes the words the client takes.
	PortalWord string
	// EnvHeader names the header that selects the environment.
	//
	// Deprecated: Use WithWords(deployment.Words{EnvHeader: name}), which
	// takes the words the client takes.
	EnvHeader string
	// SubscriptionKey makes the fake require an API gateway subscription
	// key on every route (the signed upload URLs excepted, which are not
	// behind the gateway), in the header the words name
	// (Ocp-Apim-Subscription-Key unless WithWords names another) or the
	// query parameter subscription-key. A request without it, or with
	// another key, gets 401 before any other check. The key never appears
	// in the request log.
	SubscriptionKey string
	// SubscriptionKeyHeader names the header the subscription key is read
	// from.
	//
	// Deprecated: Use WithWords(deployment.Words{SubscriptionKeyHeader:
	// name}), which takes the words the client takes.
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
		WithWords(deployment.Words{EnvHeader: d.EnvHeader, PortalWord: d.PortalWord, SubscriptionKeyHeader: d.SubscriptionKeyHeader})(f)
		word(&f.deploy.subKey, d.SubscriptionKey)
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
// none) and the words it speaks (WithWords), the interface's stand-ins
// unless it was given others: the environment header, the portal word and
// the subscription key's header, each named explicitly. A test gives it
// to the client whole, so the client takes the path it takes toward a
// deployment, with the fake's words:
//
//	c, err := partner.New(partner.WithConnection(srv.Connection()))
//
// Its Words name the fields and the event kind the fake accepts: the
// audit field (Words.AuditField), the referral id field
// (Words.ReferralField), which GET external_id lists beside the default
// external-id field when it holds a value, and the referral event kind
// (Words.ReferralEvent), which the fake lists, accepts subscriptions to,
// and sends when an opportunity's referral field is set to a value. A
// referral kind of another portal word is unknown, as on a deployment.
func (f *Fake) Connection() deployment.Connection {
	return deployment.Connection{
		BaseURL:         f.URL(),
		ClientID:        f.connClient[0],
		ClientSecret:    f.connClient[1],
		SubscriptionKey: f.deploy.subKey,
		Words:           f.deploy.words,
	}
}

// AuditField is the audit field the fake accepts:
// <portal word>.integration_status.
//
// Deprecated: Use Connection().Words.AuditField(), derived from the words
// the fake speaks.
func (f *Fake) AuditField() string { return f.deploy.words.AuditField() }

// ReferralField is the field that holds an opportunity's partner portal
// referral id: <portal word>.referral_id.
//
// Deprecated: Use Connection().Words.ReferralField(), derived from the
// words the fake speaks.
func (f *Fake) ReferralField() string { return f.deploy.words.ReferralField() }

// ReferralEvent is the event kind of an opportunity submitted to the
// partner portal as a referral: object.<portal word>_referral_submit.
//
// Deprecated: Use Connection().Words.ReferralEvent(), derived from the
// words the fake speaks.
func (f *Fake) ReferralEvent() string { return f.deploy.words.ReferralEvent() }

// gatewayRefuses answers 401 when a subscription key is required and r
// does not carry it, in the error shape of an API gateway.
func (f *Fake) gatewayRefuses(w http.ResponseWriter, r *http.Request) bool {
	want := f.deploy.subKey
	if want == "" {
		return false
	}
	got := r.Header.Get(f.deploy.words.SubscriptionKeyHeader)
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
