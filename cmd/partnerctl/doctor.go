package main

import (
	"errors"
	"net/http"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/doctor"
)

func (a *app) doctorCmd() *cobra.Command {
	var (
		asJSON bool
		cfg    doctor.Config
		portal string
	)
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that a deployment answers as the fake does",
		Long: `doctor checks the deployment the connection settings name against the
contract the bundled fake is held to (api/openapi.yaml), so that tests that
pass against the fake say something about production. In order:

  the connection: TLS (or plain http to this machine), the service's clock
  against this machine's, the credentials and their token, the environment
  header and the gateway key;
  every read-only operation it can reach: SCIM list (paged) and get, a user
  that does not exist, the attribute check (--user, --attribute), the report
  list (paged), the first report's data, charts and metadata, a view
  (--view, or --prepare-view), an object's external ids (--object), bulk
  status (--integration, --execution), subscribers, integrations and event
  kinds with their schemas;
  each answer against the contract: status, the headers the SDK reads, each
  member's presence and type (a member the fake sends in every answer must
  be there), members the contract does not list, paging;
  the deployment's words (the referral event kind, the audit field) against
  the portal word (--portal-word, PARTNER_PORTAL_WORD; the stand-in
  partner_portal when none is given).

It sends no write: no create, update, load, subscribe, audit or upload
ticket, and invalidates only its own token. --prepare-view prepares one view
of the first report, the one write it sends when asked to.

Each check is passed, diverged, skipped (and why) or failed; each divergence
says what the fake answers and what the deployment answered, with the
operation and the member (a JSON pointer, list items as []). --json prints
the report as one JSON object: base_url, checks (name, operation, status,
note, divergences: operation, member, fake, deployment) and diverged.

Exit status: 0 nothing diverged, 5 something diverged, 4 the credentials
(or the gateway key) were refused, 1 the checks could not run, 2 a usage
error.`,
		Example: `  partnerctl doctor
  partnerctl doctor --object opp-0001 --integration int-crm --json
  PARTNER_BASE_URL=https://staging.example.com partnerctl doctor --portal-word acme_portal`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case (cfg.UserEmail == "") != (cfg.Attribute == ""):
				return usagef("doctor: --user and --attribute go together: the attribute check needs both")
			case cfg.ExecutionID != "" && cfg.IntegrationID == "":
				return usagef("doctor: --execution needs --integration")
			case cmd.Flags().Changed("max-pages") && cfg.MaxPages < 1:
				return usagef("doctor: --max-pages %d: at least 1", cfg.MaxPages)
			}
			if err := a.doctorConnection(cmd, &cfg, portal); err != nil {
				return err
			}
			r, err := doctor.Run(cmd.Context(), cfg)
			if r != nil {
				if asJSON {
					if werr := writeJSON(cmd.OutOrStdout(), doctorJSON{Report: r, Diverged: r.Diverged()}); werr != nil {
						return werr
					}
				} else {
					printf(cmd.OutOrStdout(), "%s", r.String())
				}
			}
			switch {
			case errors.Is(err, doctor.ErrCredentialsRefused):
				return authFailure{err}
			case err != nil:
				return err
			case r.Diverged():
				n, places := len(r.Divergences()), "places"
				if n == 1 {
					places = "place"
				}
				return dataFailedf("doctor: the deployment answers otherwise than the fake in %d %s", n, places)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.StringVar(&portal, "portal-word", "", "the deployment's portal word, as in <word>.integration_status (PARTNER_PORTAL_WORD)")
	f.StringVar(&cfg.UserEmail, "user", "", "check an attribute of the user of this `e-mail` (with --attribute)")
	f.StringVar(&cfg.Attribute, "attribute", "", "the `name` of the attribute to check (with --user)")
	f.Int64Var(&cfg.Namespace, "namespace", 0, "the attribute's namespace")
	f.StringVar(&cfg.ObjectID, "object", "", "read the external ids of this object `id`")
	f.StringVar(&cfg.IntegrationID, "integration", "", "read the bulk status of this integration `id` (of --execution, else of one that does not exist)")
	f.StringVar(&cfg.ExecutionID, "execution", "", "the bulk execution `id` of --integration to read")
	f.Int64Var(&cfg.ViewID, "view", 0, "read this prepared report view `id`")
	f.BoolVar(&cfg.PrepareView, "prepare-view", false, "prepare a view of the first report and read it (a write)")
	f.IntVar(&cfg.MaxPages, "max-pages", 0, "read at most `n` pages of a listing (default 50)")
	return cmd
}

// doctorConnection fills cfg's connection from the settings, as client
// reads them (connection), the portal word from --portal-word or
// PARTNER_PORTAL_WORD.
func (a *app) doctorConnection(cmd *cobra.Command, cfg *doctor.Config, portal string) error {
	conn, from, err := a.connection(cmd, portal)
	if err != nil {
		return err
	}
	if conn.Environment != "" && conn.Words.EnvHeader == "" {
		return usagef("%s needs --env-header (or PARTNER_ENV_HEADER)", from["PARTNER_ENV"])
	}
	cfg.Connection, cfg.Scopes = conn, a.scopes
	return nil
}

// doctorJSON is the report as --json prints it.
type doctorJSON struct {
	*doctor.Report
	Diverged bool `json:"diverged"`
}

// authFailure is a refusal of the credentials that a check found, not
// an SDK call's error: it reads as a 401 partner.Error, so that the
// command exits with the status of refused credentials (4).
type authFailure struct{ err error }

func (e authFailure) Error() string { return e.err.Error() }
func (e authFailure) Unwrap() error { return e.err }

// As makes errors.As find a 401 *partner.Error in the failure.
func (e authFailure) As(target any) bool {
	if p, ok := target.(**partner.Error); ok {
		*p = &partner.Error{StatusCode: http.StatusUnauthorized, Message: e.err.Error()}
		return true
	}
	return false
}
