// Command partnerctl is the operator's command line for the Partner
// Integration Service, built on the SDK (github.com/partnerapi/partner-go):
// export reports, load files, provision users, watch webhook deliveries.
//
//	go install github.com/partnerapi/partner-go/cmd/partnerctl@latest
//	export PARTNER_BASE_URL=https://api.example.com PARTNER_CLIENT_ID=... PARTNER_CLIENT_SECRET=...
//	partnerctl reports list
//	partnerctl reports export 104 --format xlsx -o deals.xlsx
//	partnerctl bulk load deals.csv --integration int-crm --wait
//	partnerctl users import people.csv
//	partnerctl events listen --events object.update --public-url https://hooks.example.com/p --forward http://localhost:3000/hook
//
// Configuration comes from the flags --base-url, --client-id,
// --client-secret (or --client-secret-file), --env, --env-header,
// --subscription-key (or --subscription-key-file) and
// --subscription-key-header, or else from the PARTNER_* variables that
// deployment.FromEnv reads: PARTNER_BASE_URL, PARTNER_CLIENT_ID,
// PARTNER_CLIENT_SECRET, PARTNER_ENV, PARTNER_ENV_HEADER,
// PARTNER_PORTAL_WORD, PARTNER_SUBSCRIPTION_KEY and
// PARTNER_SUBSCRIPTION_KEY_HEADER. Secrets are never printed; given as
// flags they are visible in the process list, so give them in the
// variables or files.
//
// Every command has --help with an example; every command that prints
// data takes --json. --debug (or PARTNER_DEBUG=1) writes the SDK's log
// records to stderr; --version prints the version. Exit status: 0 on
// success, 1 when the work failed, 2 for a usage error, 3 when a write
// failed after the service may have done it (look before doing it
// again), 4 when the service refused the credentials or their scope, 5
// when the command worked and what it read says something failed (refused
// bulk records, failed import rows), 130 when Ctrl-C ended it.
// `partnerctl completion bash` (zsh, fish, powershell) prints a shell
// completion script.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first Ctrl-C the command cleans up (listen unsubscribes,
		// export removes its temporary file); a second one ends it at once.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
