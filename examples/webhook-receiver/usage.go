package main

import (
	"flag"
	"fmt"
	"io"
)

// parseFlags reads the command line args: the receiver is set by its
// environment, so it takes only -h, which prints the usage and settings
// to stderr (flag.ErrHelp). Anything else is said there and refused.
func parseFlags(args []string, stderr io.Writer) error {
	fl := flag.NewFlagSet("webhook-receiver", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() { fmt.Fprint(stderr, usage) }
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		err := fmt.Errorf("unexpected argument %q: the receiver's settings are environment variables (-h lists them)", fl.Arg(0))
		fmt.Fprintf(stderr, "webhook-receiver: %v\n", err)
		return err
	}
	return nil
}

// usage is what -h prints.
const usage = `Usage: webhook-receiver

Receives the Partner Integration Service's webhook deliveries at
<public URL>/partner-events/<secret>, with /healthz, a duplicate guard and
a graceful shutdown on SIGTERM. With no PARTNER_* variables it runs a
demonstration against the embedded fake service and exits.

Settings (environment variables):
  RECEIVER_ADDR
        address to listen on (default :8080; the demonstration: 127.0.0.1, any port)
  RECEIVER_SECRET
        the subscriber secret in the callback URL's last segment (required
        with a deployment; at least 22 characters: events.NewSecret makes one)
  RECEIVER_OLD_SECRET
        the secret before a rotation, accepted too until it is removed
  RECEIVER_REDIS_ADDR
        a Redis the replicas share for the duplicate guard (default: in this
        process's memory): host:port, or a redis:// or rediss:// (TLS) URL with
        a password and database (redis://:password@cache.internal:6379/0);
        never logged whole
  RECEIVER_REDIS_PREFIX
        the guard's key prefix in that Redis (default redisdedup.DefaultPrefix)
  RECEIVER_REDIS_REQUIRED
        1: answer deliveries 503 while Redis fails, instead of passing them on
  PARTNER_BASE_URL, PARTNER_CLIENT_ID, PARTNER_CLIENT_SECRET
        the deployment whose deliveries it receives: all three, or none for
        the demonstration
  PARTNER_ENV
        the environment's host name, sent in the environment header; toward
        a deployment it needs PARTNER_ENV_HEADER
  PARTNER_ENV_HEADER
        the deployment's name of the environment header
  PARTNER_PORTAL_WORD
        the deployment's portal word, as in <word>.integration_status, the
        audit field logged with each delivery
  PARTNER_SUBSCRIPTION_KEY
        the API gateway's subscription key, when a gateway fronts the service
  PARTNER_SUBSCRIPTION_KEY_HEADER
        the header the gateway reads that key from, when not the default

Exit status: 0 after a shutdown (or the demonstration), 1 on a failure,
2 on a bad command line.
`
