package deployment

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/partnerapi/partner-go/internal/check"
)

// ErrNotSet is the error FromEnv returns when none of PARTNER_BASE_URL,
// PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET is set: the variables name no
// deployment. A program that can run without one (against a fake, say)
// tests for it with errors.Is; one that cannot reports it as it is.
var ErrNotSet = errors.New("PARTNER_BASE_URL, PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET are not set: set all three to reach a deployment")

// An EnvError reports a PARTNER_* variable that FromEnv found missing or
// malformed. It never holds the value of a secret.
type EnvError struct {
	// Var is the variable, such as PARTNER_BASE_URL.
	Var string
	// Problem says what is wrong with it, in a sentence that follows the
	// variable's name, such as "is not set".
	Problem string
}

// Error is the variable's name followed by the problem.
func (e *EnvError) Error() string { return e.Var + " " + e.Problem }

// serverVars are the variables that name a deployment: all or none.
var serverVars = []string{"PARTNER_BASE_URL", "PARTNER_CLIENT_ID", "PARTNER_CLIENT_SECRET"}

// FromEnv reads a Connection from the PARTNER_* variables through getenv
// (os.Getenv, or a function that looks elsewhere first, such as a
// program's flags). These are the variables, each optional unless said:
//
//   - PARTNER_BASE_URL: the service's base URL, such as
//     https://api.example.com (Connection.BaseURL).
//   - PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET: the OAuth client
//     credentials (ClientID, ClientSecret). These two and PARTNER_BASE_URL
//     are set all together or not at all.
//   - PARTNER_ENV: the environment's host name, such as
//     sandbox-eu.app.example.com, sent in the environment header
//     (Environment). Toward a deployment it needs PARTNER_ENV_HEADER.
//   - PARTNER_ENV_HEADER: the deployment's name of the environment header,
//     such as x-acme-env (Words.EnvHeader).
//   - PARTNER_PORTAL_WORD: the deployment's word where the interface says
//     partner_portal, as in acme_portal.integration_status
//     (Words.PortalWord).
//   - PARTNER_SUBSCRIPTION_KEY: the API gateway's subscription key
//     (SubscriptionKey), when a gateway fronts the service.
//   - PARTNER_SUBSCRIPTION_KEY_HEADER: the header the gateway reads the key
//     from, when not Ocp-Apim-Subscription-Key
//     (Words.SubscriptionKeyHeader).
//
// An empty variable counts as not set. FromEnv checks the form of each
// value and returns an *EnvError naming the first variable that is
// missing or malformed; the error never repeats a secret. The base URL
// is https, or plain http only to this machine, as partner.New requires
// without partner.WithInsecureHTTP (a program that allows more builds its
// Connection itself).
//
// When none of PARTNER_BASE_URL, PARTNER_CLIENT_ID and
// PARTNER_CLIENT_SECRET is set, FromEnv returns ErrNotSet and a
// Connection that holds what the other variables set (the words, the
// subscription key, the environment), checked as well, for a program that
// runs against a fake with the same words instead.
func FromEnv(getenv func(string) string) (Connection, error) {
	c := Connection{
		BaseURL:         getenv("PARTNER_BASE_URL"),
		ClientID:        getenv("PARTNER_CLIENT_ID"),
		ClientSecret:    getenv("PARTNER_CLIENT_SECRET"),
		SubscriptionKey: getenv("PARTNER_SUBSCRIPTION_KEY"),
		Environment:     getenv("PARTNER_ENV"),
		Words: Words{
			EnvHeader:             getenv("PARTNER_ENV_HEADER"),
			PortalWord:            getenv("PARTNER_PORTAL_WORD"),
			SubscriptionKeyHeader: getenv("PARTNER_SUBSCRIPTION_KEY_HEADER"),
		},
	}
	var set, missing []string
	for _, v := range serverVars {
		if getenv(v) == "" {
			missing = append(missing, v)
		} else {
			set = append(set, v)
		}
	}
	if len(set) > 0 && len(missing) > 0 {
		nor := ""
		if len(missing) > 1 {
			nor = " (nor is " + missing[1] + ")"
		}
		return Connection{}, &EnvError{Var: missing[0], Problem: "is not set" + nor + ", but " + and(set) + " " + isAre(set) +
			": set all of PARTNER_BASE_URL, PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET to reach a deployment, or none"}
	}
	if err := c.checkVars(); err != nil {
		return Connection{}, err
	}
	if len(set) == 0 {
		return c, ErrNotSet
	}
	if c.Environment != "" && c.Words.EnvHeader == "" {
		return Connection{}, &EnvError{Var: "PARTNER_ENV_HEADER", Problem: "is not set, but PARTNER_ENV is: " +
			"a deployment reads the environment from a header named after its operator, not from the interface's stand-in x-svc-env, " +
			"and would act on production; set PARTNER_ENV_HEADER to the deployment's header name"}
	}
	return c, nil
}

// checkVars checks the form of each value that is set, in the order
// FromEnv documents the variables.
func (c Connection) checkVars() error {
	if c.BaseURL != "" {
		if p := baseURLProblem(c.BaseURL); p != "" {
			return &EnvError{Var: "PARTNER_BASE_URL", Problem: p}
		}
	}
	checks := []struct {
		name, value string
		problem     func(string) string
	}{
		{"PARTNER_CLIENT_ID", c.ClientID, oneLine},
		{"PARTNER_CLIENT_SECRET", c.ClientSecret, oneLine},
		{"PARTNER_ENV", c.Environment, hostProblem},
		{"PARTNER_ENV_HEADER", c.Words.EnvHeader, headerProblem},
		{"PARTNER_PORTAL_WORD", c.Words.PortalWord, wordProblem},
		{"PARTNER_SUBSCRIPTION_KEY", c.SubscriptionKey, oneLine},
		{"PARTNER_SUBSCRIPTION_KEY_HEADER", c.Words.SubscriptionKeyHeader, headerProblem},
	}
	for _, ch := range checks {
		if ch.value == "" {
			continue
		}
		if p := ch.problem(ch.value); p != "" {
			return &EnvError{Var: ch.name, Problem: p}
		}
	}
	return nil
}

// baseURLProblem says what is wrong with a base URL, or "". It repeats
// the URL only without its password, and never its query.
func baseURLProblem(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "does not parse as a URL: use an absolute URL such as https://api.example.com"
	case u.User != nil:
		return "must not carry credentials: put them in PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET"
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return "must not have a query or fragment (a subscription key goes in PARTNER_SUBSCRIPTION_KEY)"
	case (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		return strconv.Quote(u.String()) + " is not an absolute http(s) URL such as https://api.example.com"
	case check.PlainHTTPRefused(u, false):
		return strconv.Quote(u.String()) + " must be an https URL (plain http only to this machine: localhost or a loopback address): tokens would travel in clear"
	}
	return ""
}

// oneLine refuses a control character, such as the line break a value
// read from a file keeps; it does not repeat the value, which may be a
// secret.
func oneLine(v string) string {
	if strings.ContainsFunc(v, unicode.IsControl) {
		return "contains a line break or another control character"
	}
	return ""
}

// hostProblem refuses an environment that is not a host name.
func hostProblem(v string) string {
	if strings.ContainsAny(v, "/\\?#@ \t\r\n") || strings.ContainsFunc(v, unicode.IsControl) {
		return strconv.Quote(v) + " is not a host name: name the environment by its host name, such as sandbox.example.com, without scheme or path"
	}
	return ""
}

// headerProblem refuses a header name that is not an HTTP token, or that
// names the header the client sends its token in.
func headerProblem(v string) string {
	if !check.HeaderName(v) {
		return strconv.Quote(v) + " is not a header name: letters, digits and !#$%&'*+-.^_`|~ only, such as x-acme-env"
	}
	if strings.EqualFold(v, "Authorization") {
		return "must not name Authorization: the client sends its token there"
	}
	return ""
}

// wordProblem refuses a portal word that is not one word.
func wordProblem(v string) string {
	if strings.ContainsAny(v, ". \t\r\n") || strings.ContainsFunc(v, unicode.IsControl) {
		return strconv.Quote(v) + " is not one word: it names fields as <word>.integration_status, without dots or spaces"
	}
	return ""
}

// and joins names as "A", "A and B" or "A, B and C".
func and(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func isAre(names []string) string {
	if len(names) == 1 {
		return "is"
	}
	return "are"
}
