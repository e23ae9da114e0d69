package main

import (
	"flag"
	"fmt"
	"io"
)

// parseFlags reads the command line args: the quickstart is set by its
// environment, so it takes only -h, which prints the usage and settings
// to stderr (flag.ErrHelp). Anything else is said there and refused.
func parseFlags(args []string, stderr io.Writer) error {
	fl := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() { fmt.Fprint(stderr, usage) }
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		err := fmt.Errorf("unexpected argument %q: the quickstart's settings are environment variables (-h lists them)", fl.Arg(0))
		fmt.Fprintf(stderr, "quickstart: %v\n", err)
		return err
	}
	return nil
}

// usage is what -h prints.
const usage = `Usage: quickstart

Walks through every area of the Partner Integration Service, one printed
line per step, and ends with "quickstart: every step passed". With no
PARTNER_* variables it runs against the embedded fake service and its
demo data.

Settings (environment variables):
  PARTNER_BASE_URL, PARTNER_CLIENT_ID, PARTNER_CLIENT_SECRET
        the server to run against: all three, or none for the embedded fake
  PARTNER_ENV
        the environment's host name, sent in the environment header; toward
        a deployment it needs PARTNER_ENV_HEADER
  PARTNER_ENV_HEADER
        the deployment's name of the environment header (the embedded fake
        takes it too)
  PARTNER_PORTAL_WORD
        the deployment's portal word, as in <word>.integration_status, the
        audit field the objects and events steps write (required with a
        deployment)
  PARTNER_SUBSCRIPTION_KEY
        the API gateway's subscription key, when a gateway fronts the service
  PARTNER_SUBSCRIPTION_KEY_HEADER
        the header the gateway reads that key from, when not the default

Exit status: 0 when every step passed, 1 otherwise, 2 on a bad command
line.
`
