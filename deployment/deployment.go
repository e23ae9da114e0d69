// Package deployment holds the words of one deployment of the service and
// what a client needs to reach it, as plain values that the client
// (partner.WithWords, partner.WithConnection) and the fake (fake.WithWords,
// fake.Fake.Connection) share.
//
// Where a header or value is named after the operator's brand, the
// interface uses a neutral stand-in: the environment header x-svc-env, the
// portal word partner_portal. A deployment uses its own words and ignores
// or refuses the stand-ins, so a client names them explicitly, toward the
// fake and toward a deployment alike: the fake hands a test the words it
// speaks (the stand-ins unless configured otherwise), and production code
// gives the deployment's.
//
// FromEnv reads a Connection from the PARTNER_* environment variables.
//
// The package imports nothing but the standard library and the SDK's
// plain-http rule (internal/check, itself standard library alone), so that
// the fake, which imports none of the client's packages, can share it.
package deployment

import "log/slog"

// Words are what a deployment calls the things the interface names with
// neutral stand-ins. An empty field leaves the client's default in place.
type Words struct {
	// EnvHeader names the header (and the token requests' query
	// parameter) that selects the environment, such as x-acme-env; the
	// interface's stand-in is x-svc-env.
	EnvHeader string
	// PortalWord is the word the deployment uses where the interface says
	// partner_portal: it names the audit field (AuditField), the referral
	// id field (ReferralField) and the referral event kind
	// (ReferralEvent).
	PortalWord string
	// SubscriptionKeyHeader names the header the API gateway reads its
	// subscription key from (Ocp-Apim-Subscription-Key when empty).
	SubscriptionKeyHeader string
}

// AuditField is the audit field of the deployment,
// <PortalWord>.integration_status, or "" when PortalWord is empty.
func (w Words) AuditField() string { return w.portal(".integration_status") }

// ReferralField is the field that holds an opportunity's partner portal
// referral id, <PortalWord>.referral_id, or "" when PortalWord is empty.
func (w Words) ReferralField() string { return w.portal(".referral_id") }

// ReferralEvent is the event kind of an opportunity submitted to the
// partner portal as a referral, object.<PortalWord>_referral_submit, or ""
// when PortalWord is empty.
func (w Words) ReferralEvent() string {
	if w.PortalWord == "" {
		return ""
	}
	return "object." + w.PortalWord + "_referral_submit"
}

func (w Words) portal(suffix string) string {
	if w.PortalWord == "" {
		return ""
	}
	return w.PortalWord + suffix
}

// Connection is what a client needs to reach one deployment of the
// service, or a fake of it: where it is, the credentials it accepts, its
// API gateway's subscription key (empty when it requires none), its words
// and the environment to act on. FromEnv reads one from the PARTNER_*
// variables; fake.Fake.Connection returns the fake's;
// partner.WithConnection sets a client's options from one.
//
// ClientSecret and SubscriptionKey are secrets, read from the fields
// themselves. Whatever prints or encodes a Connection through its
// methods shows them masked, as "[redacted]" (empty ones stay empty):
// fmt with any verb (Format; String and GoString), log/slog (LogValue),
// encoding/json (MarshalJSON), encoding/xml (MarshalXML) and
// encoding/gob (GobEncode). That holds for a Connection or a pointer to
// one, alone or in a slice, an array, a map, an interface or an exported
// field of a struct, through slog's text and JSON handlers too, since
// they call these methods on what they print. Two things reach the
// fields without the methods and show the secrets: fmt printing a struct
// with a Connection in an unexported field (fmt calls no method of an
// unexported field; a pointer there prints as an address), and
// reflection that walks fields itself (a printer with methods turned
// off, such as a test library's diff). A struct that embeds a Connection
// takes these methods as its own, so it prints and encodes as its
// Connection alone: name the field instead. To send the secrets
// somewhere (a configuration file), copy them from the fields.
type Connection struct {
	BaseURL         string
	ClientID        string
	ClientSecret    string
	SubscriptionKey string
	Words           Words
	// Environment is the host name of the environment to act on, such as
	// sandbox-eu.app.example.com, sent in the environment header
	// (Words.EnvHeader); empty for the deployment's default. FromEnv reads
	// it from PARTNER_ENV; a fake's Connection leaves it empty.
	Environment string
}

// String describes c with its secrets masked, so that a Connection
// printed with %v or %+v names no secret.
func (c Connection) String() string {
	return "{BaseURL:" + c.BaseURL + " ClientID:" + c.ClientID +
		" ClientSecret:" + mask(c.ClientSecret) + " SubscriptionKey:" + mask(c.SubscriptionKey) +
		" Words:{EnvHeader:" + c.Words.EnvHeader + " PortalWord:" + c.Words.PortalWord +
		" SubscriptionKeyHeader:" + c.Words.SubscriptionKeyHeader + "} Environment:" + c.Environment + "}"
}

// LogValue is c as log/slog records it, its secrets masked as String
// masks them, so that a Connection logged by any handler names no secret.
func (c Connection) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("BaseURL", c.BaseURL),
		slog.String("ClientID", c.ClientID),
		slog.String("ClientSecret", mask(c.ClientSecret)),
		slog.String("SubscriptionKey", mask(c.SubscriptionKey)),
		slog.Group("Words", slog.String("EnvHeader", c.Words.EnvHeader), slog.String("PortalWord", c.Words.PortalWord),
			slog.String("SubscriptionKeyHeader", c.Words.SubscriptionKeyHeader)),
		slog.String("Environment", c.Environment),
	)
}

// GoString is String, so that %#v names no secret either.
func (c Connection) GoString() string { return "deployment.Connection" + c.String() }

func mask(secret string) string {
	if secret == "" {
		return ""
	}
	return "[redacted]"
}
