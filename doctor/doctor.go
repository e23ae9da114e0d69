// Package doctor checks a team's own deployment of the Partner
// Integration Service against the contract the bundled fake is held to
// (api/openapi.yaml), so that tests that pass against the fake say
// something about production.
//
// Run reads, in order: the connection (TLS or the plain-http rule, the
// clock against the service's Date, the credentials and their token, the
// environment header and the gateway key); every read-only operation of
// the seven areas it can reach without writing (SCIM list and get, the
// attribute check, the report list, real-time data, chart data and
// metadata, a view's metadata, an object's external ids, bulk status,
// subscribers, integrations and event kinds with their schemas), with ids
// from earlier answers or from Config; each answer against the contract
// (status, the headers the SDK reads, each member's presence and type,
// members the contract does not list, paging, error bodies); and the
// deployment's words (the referral event kind, the audit field) against
// what it lists. It sends no write: no create, update, load, subscribe,
// audit, upload ticket or token invalidation but that of its own token; a
// view is prepared only when Config.PrepareView says so.
//
// A member's presence is held to what the fake answers: a member the fake
// sends in every object of its kind (recorded from the fake's demo data
// in profile.json, which TestProfile keeps current) must be in the
// deployment's too, since a test that reads it passes against the fake.
//
// The report lists each check, passed, diverged, skipped (and why) or
// failed, and each divergence as what the fake answers against what the
// deployment answered, with the operation and the member. cmd/partnerctl's
// doctor command prints it; a team's integration test calls Run against
// staging and fails on Report.Diverged. No package of the SDK imports this
// one: a program that does not call it links none of it.
package doctor

import (
	"errors"
	"net/http"
	"time"

	"github.com/partnerapi/partner-go/deployment"
)

// ErrCredentialsRefused is wrapped by Run's error when the deployment
// refused the credentials, their scope or the gateway key (the token
// endpoint refusing the client, or a 401 or 403).
var ErrCredentialsRefused = errors.New("doctor: the deployment refused the credentials")

// Config says which deployment to check and which ids to read that its
// answers do not give.
type Config struct {
	// Connection is where the deployment is, its credentials, its
	// gateway key, its words (an empty word is the interface's stand-in,
	// as the fake speaks it) and the environment to act on (sent in
	// Words.EnvHeader, which it needs). deployment.FromEnv reads one from
	// the PARTNER_* variables.
	Connection deployment.Connection
	// Scopes are asked for with the token; none asks for the client's.
	Scopes []string
	// HTTPClient sends the requests (a copy of it that follows no
	// redirect: one is an answer); nil is a client with a 30-second
	// timeout per request.
	HTTPClient *http.Client
	// UserEmail, with Attribute (and Namespace), reads the attribute
	// check of that user; Run refuses one of the two without the other.
	UserEmail string
	Attribute string
	Namespace int64
	// ObjectID reads the external ids of that object.
	ObjectID string
	// IntegrationID reads the bulk status of ExecutionID of that
	// integration, or the answer to an execution that does not exist
	// when ExecutionID is empty; Run refuses an ExecutionID without it.
	IntegrationID string
	ExecutionID   string
	// ViewID reads that prepared view's status, metadata and data.
	ViewID int64
	// PrepareView prepares a view of the first report (a write, the only
	// one Run sends) when ViewID is zero, and reads it.
	PrepareView bool
	// MaxPages bounds the pages of a listing read before it counts as a
	// list that does not end; zero is 50, and Run refuses a negative one.
	MaxPages int
	// Now is the clock the service's Date is compared with; nil is
	// time.Now.
	Now func() time.Time

	// record, in tests, receives the objects of each answer (TestProfile).
	record func(op string, objs []object)
}

// Status is the outcome of a check.
type Status string

// The outcomes of a check.
const (
	Passed   Status = "passed"
	Diverged Status = "diverged"
	Skipped  Status = "skipped"
	// Failed: the check could not be made (the credentials were refused,
	// the deployment could not be reached).
	Failed Status = "failed"
)

// A Check is one step of the report.
type Check struct {
	// Name says what was checked: "connection", "token", "clock", or
	// an operation and what of it ("getReports: paging").
	Name string `json:"name"`
	// Operation is the contract's operationId of the requests, if any.
	Operation string `json:"operation,omitempty"`
	Status    Status `json:"status"`
	// Note says what passed, or why the check was skipped or failed.
	Note        string       `json:"note,omitempty"`
	Divergences []Divergence `json:"divergences,omitempty"`
}

// A Divergence is one place where the deployment answers otherwise than
// the fake.
type Divergence struct {
	Operation string `json:"operation"`
	// Member is a JSON pointer into the answer, array items as "[]"
	// ("/results/[]/name"), or "status", a header's name, "Content-Type"
	// or "body".
	Member string `json:"member"`
	// Fake is what the fake answers there (as the contract declares it);
	// Deployment is what the deployment answered.
	Fake       string `json:"fake"`
	Deployment string `json:"deployment"`
}

// Report is what Run found.
type Report struct {
	BaseURL string  `json:"base_url"`
	Checks  []Check `json:"checks"`
}

// Diverged reports whether any check found a divergence.
func (r *Report) Diverged() bool {
	for _, c := range r.Checks {
		if c.Status == Diverged {
			return true
		}
	}
	return false
}

// Divergences are the divergences of every check, in order.
func (r *Report) Divergences() []Divergence {
	var out []Divergence
	for _, c := range r.Checks {
		out = append(out, c.Divergences...)
	}
	return out
}
