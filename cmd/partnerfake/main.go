// Command partnerfake serves the fake Partner Integration Service (package
// fake), for tests in other languages and manual runs:
//
//	go run ./cmd/partnerfake -addr 127.0.0.1:8080
//
// It prints its URL, the client credentials, the ids of the demo data and
// each integration's object type and bulk key field, and shuts down
// cleanly on SIGINT or SIGTERM. Exit status: 0 after a
// clean shutdown (or -h), 2 for a bad flag or argument, 1 when it could
// not start (a bad -seed file, an address in use).
//
// Flags:
//
//	-addr ADDR          address to listen on (default 127.0.0.1:8080)
//	-client-id ID       OAuth client id (default partner-test-client)
//	-client-secret S    OAuth client secret (default partner-test-secret);
//	                    visible to other users of the machine in the process
//	                    list: prefer -client-secret-file or the variable
//	                    PARTNERFAKE_CLIENT_SECRET
//	-client-secret-file FILE  read the client secret from FILE
//	-token-lifetime D   lifetime of access tokens (default 1h)
//	-demo=false         start without the demo data set
//	-seed FILE.json     load a data set in the fake.Seed JSON format (reports
//	                    with columns, rows and charts; objects; integrations;
//	                    users), after the demo data unless -demo=false
//	-latency D          add D to every request of the service's routes
//	-manual-clock       run on a manual clock, stopped at the start time, that
//	                    only POST /_fake/clock/advance moves
//	-bulk-delay D       how long a bulk execution stays running (default 1s)
//	-view-delay D       how long a report view takes to be ready (default 250ms)
//	-admin-remote       let the admin API answer non-loopback clients
//	-request-log N      how many of the last requests the request log keeps
//	                    (default 100000)
//	-full-scim-filter   take every RFC 7644 SCIM filter, not only the
//	                    deployed service's userName eq "..."
//	-unknown-members    accept and ignore members of write bodies (subscribe,
//	                    audit, external id) that their published descriptions
//	                    do not name, instead of answering 400 naming each
//	-allow-host NAME    admit this Host name besides loopback ones
//	                    (repeatable); on an address that is not loopback
//	                    (0.0.0.0 in a container), turns the Host check on
//	-redirect-uri URI   a redirect URI of the client for GET /oauth/authorize,
//	                    the connector's sign-in (repeatable); loopback
//	                    ones need none, others not registered are refused
//	-max-tokens N       live access tokens kept (default 100000)
//	-max-uploads N      signed upload URLs kept (default 10000)
//	-max-upload-bytes N bytes of uploaded files held (default 1073741824)
//	-max-spool-bytes N  bytes of load bodies spooled at once, over all loads
//	                    running (default 1073741824)
//
// Connections (a shared fake must keep serving while clients hold
// connections open):
//
//	-read-timeout D     longest a request may take to arrive, its headers
//	                    within 10s or D if shorter (default 1m); the body of
//	                    a bulk load or upload is bounded by its progress
//	                    instead: 30s without a byte ends it
//	-write-timeout D    longest from a request's headers to the end of its
//	                    answer (default 2m), after -latency; bulk loads and
//	                    uploads are bounded by their body's progress instead,
//	                    and an injected fault's latency or dribble by the
//	                    client's leaving
//	-idle-timeout D     longest a keep-alive connection stays idle between
//	                    requests (default 1m)
//	-max-connections N  connections served at once (default 1024); at most
//	                    three quarters of them stay idle between requests, a
//	                    connection going idle past them being closed; past
//	                    the cap, a new connection closes the oldest one that
//	                    is waiting for a request (events.LimitConns), so
//	                    silent connections cannot keep new clients out
//	-version            print the version (of the module, as partnerctl
//	                    --version prints it), the Go release and the
//	                    platform, and exit
//
// A deployment's own words and gateway (docs/deployed-service.md):
//
//	-env-header NAME        name of the environment header (default x-svc-env)
//	-portal-word WORD       portal word of the audit field, referral field and
//	                        referral event kind (default partner_portal)
//	-subscription-key KEY   require an API gateway subscription key (visible
//	                        in the process list: prefer
//	                        -subscription-key-file or the variable
//	                        PARTNERFAKE_SUBSCRIPTION_KEY)
//	-subscription-key-file FILE  read the subscription key from FILE
//	-scope-checks           check the fake's own per-area OAuth scopes
//	-delivery-envelope      add the fake's own envelope members to deliveries
//
// The admin API under /_fake/ (inject, list, remove and clear faults, on
// requests and on webhook deliveries: a delivery sent again after the
// receiver's 2xx, a receiver's answer dropped so that the fake retries;
// advance the manual clock, read the request log and the deliveries, seed,
// reset, health) is documented in internal/fakeserver/fakeadmin and at GET
// /_fake/openapi.json. It answers loopback clients only unless
// -admin-remote is given, since it can read every request and create
// state.
//
// Listening on a loopback address, or on any address with -allow-host,
// partnerfake answers every route, service and admin, only when the
// request's Host is a loopback name or address (or one -allow-host names),
// and its Origin, when it has one, is too (403 otherwise), so that a web
// page whose DNS name is rebound to 127.0.0.1 cannot drive it; it answers
// no CORS.
//
// Bodies of bulk loads past 4 MiB are spooled in a directory of its own
// under the system's temporary directory (partnerfake-spool-PID-...),
// removed when it exits on SIGINT, SIGTERM or an error; a directory left
// by a partnerfake killed otherwise (SIGKILL) is removed by the next one
// that starts, which tells it by the lock a running partnerfake holds on
// its own.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/fakeserver/fakeadmin"
	"github.com/partnerapi/partner-go/internal/fakeserver/fakehttp"
	"github.com/partnerapi/partner-go/internal/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
	if code := exitCode(err); code != 0 {
		var ue usageError
		if !errors.As(err, &ue) || !ue.printed {
			log.Printf("partnerfake: %v", err)
		}
		stop()
		os.Exit(code)
	}
}

// usageError is a mistake in the command line: exit status 2. printed
// says the flag package has shown it already, with the usage.
type usageError struct {
	err     error
	printed bool
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitCode is the exit status for run's error: 0 for none or -h, 2 for a
// usage error, 1 otherwise.
func exitCode(err error) int {
	var ue usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		return 2
	}
	return 1
}

// secretValue sets *value, the value of the secret flag name (or its
// default), from the file given with name+"-file" when there is one, else
// from the variable when the flag was not given: the flag form is visible
// in the process list.
func secretValue(fs *flag.FlagSet, name, file, variable string, value *string) error {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	switch {
	case file != "" && given:
		return usageError{err: fmt.Errorf("give -%s or -%s-file, not both", name, name)}
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return usageError{err: fmt.Errorf("-%s-file: %w", name, err)}
		}
		if *value = strings.TrimRight(string(b), "\r\n"); *value == "" {
			return usageError{err: fmt.Errorf("-%s-file: %s is empty", name, file)}
		}
	case !given && os.Getenv(variable) != "":
		*value = os.Getenv(variable)
	}
	return nil
}

// config is what partnerfake's flags set.
type config struct {
	addr, id, secret, secretFile, seedFile  string
	subKey, subKeyFile                      string
	words                                   deployment.Words // the deployment's words it speaks
	lifetime, latency, bulkDelay, viewDelay time.Duration
	demo, manual, adminRemote, fullSCIM     bool
	scopes, envelope, unknownMembers        bool
	logSize                                 int
	// the fake's totals (fake.Limits) and the Host names it admits
	limits     fake.Limits
	allowHosts []string
	// redirect URIs of the client (fake.WithRedirectURIs)
	redirects []string
	// the server's bounds on connections
	readTimeout, writeTimeout, idleTimeout time.Duration
	maxConns                               int
	version                                bool
}

// newFlags returns partnerfake's flags, which parse into the config.
func newFlags() (*flag.FlagSet, *config) {
	c := &config{}
	fs := flag.NewFlagSet("partnerfake", flag.ContinueOnError)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&c.id, "client-id", fake.DefaultClientID, "OAuth client id of the demo client")
	fs.StringVar(&c.secret, "client-secret", fake.DefaultClientSecret, "OAuth client secret of the demo client (`S`, or $PARTNERFAKE_CLIENT_SECRET); visible to other users of this machine in the process list: prefer the variable or -client-secret-file")
	fs.StringVar(&c.secretFile, "client-secret-file", "", "read the OAuth client secret from this `file`")
	fs.DurationVar(&c.lifetime, "token-lifetime", fake.DefaultTokenLifetime, "lifetime of access tokens")
	fs.BoolVar(&c.demo, "demo", true, "seed the demo data set")
	fs.StringVar(&c.seedFile, "seed", "", "JSON `file` with a data set to load (format: fake.Seed)")
	fs.DurationVar(&c.latency, "latency", 0, "base latency added to every request of the service's routes")
	fs.BoolVar(&c.manual, "manual-clock", false, "run on a manual clock that only POST /_fake/clock/advance moves")
	fs.DurationVar(&c.bulkDelay, "bulk-delay", fake.DefaultBulkDelay, "how long a bulk execution stays running")
	fs.DurationVar(&c.viewDelay, "view-delay", fake.ViewPendingFor+fake.ViewRunningFor, "how long a report view takes to be ready")
	fs.BoolVar(&c.adminRemote, "admin-remote", false, "let the admin API under /_fake/ answer non-loopback clients")
	fs.IntVar(&c.logSize, "request-log", fake.DefaultRequestLogSize, "how many of the last requests the request log keeps")
	fs.BoolVar(&c.fullSCIM, "full-scim-filter", false, "take every RFC 7644 SCIM filter, not only the deployed service's userName eq \"...\"")
	words := defaultWords()
	fs.StringVar(&c.words.EnvHeader, "env-header", words.EnvHeader, "name of the environment header (a deployment's own word)")
	fs.StringVar(&c.words.PortalWord, "portal-word", words.PortalWord, "the deployment's portal word, as in <word>.integration_status")
	fs.StringVar(&c.subKey, "subscription-key", "", "require this API gateway subscription `key` (header Ocp-Apim-Subscription-Key or query subscription-key; or $PARTNERFAKE_SUBSCRIPTION_KEY); visible to other users of this machine in the process list: prefer the variable or -subscription-key-file")
	fs.StringVar(&c.subKeyFile, "subscription-key-file", "", "read the API gateway subscription key from this `file`")
	fs.BoolVar(&c.scopes, "scope-checks", false, "check the fake's own per-area OAuth scopes")
	fs.BoolVar(&c.envelope, "delivery-envelope", false, "add the fake's own envelope members (event, delivery_id, ...) to webhook deliveries")
	fs.BoolVar(&c.unknownMembers, "unknown-members", false, "accept and ignore members of write bodies (subscribe, audit, external id) that their published descriptions do not name, instead of answering 400")
	limits := fake.DefaultLimits()
	fs.IntVar(&c.limits.AccessTokens, "max-tokens", limits.AccessTokens, "how many live access tokens the fake keeps (the oldest forgotten past it)")
	fs.IntVar(&c.limits.Uploads, "max-uploads", limits.Uploads, "how many signed upload URLs the fake keeps (the oldest forgotten past it)")
	fs.Int64Var(&c.limits.UploadBytes, "max-upload-bytes", limits.UploadBytes, "how many bytes of uploaded files the fake holds (413 past it)")
	fs.BoolVar(&c.version, "version", false, "print partnerfake's version, the Go release that built it and the platform, as partnerctl --version does, and exit")
	fs.Int64Var(&c.limits.SpoolBytes, "max-spool-bytes", limits.SpoolBytes, "how many bytes of load bodies the fake spools at once, over all loads running (413 past it)")
	fs.DurationVar(&c.readTimeout, "read-timeout", time.Minute, "longest a request may take to arrive (headers within 10s); a bulk load's or upload's body may instead take as long as it keeps arriving, 30s without a byte ending it")
	fs.DurationVar(&c.writeTimeout, "write-timeout", 2*time.Minute, "longest from a request's headers to the end of its answer (bulk loads and uploads: bounded by their body's progress instead)")
	fs.DurationVar(&c.idleTimeout, "idle-timeout", time.Minute, "longest a keep-alive connection stays idle between requests")
	fs.IntVar(&c.maxConns, "max-connections", 1024, "connections served at once, three quarters of them at most idle; past it a new one closes the oldest that is waiting for a request")
	fs.Func("redirect-uri", "a redirect `URI` of the client for GET /oauth/authorize, the connector's sign-in (repeatable); loopback ones need none", func(v string) error {
		c.redirects = append(c.redirects, v)
		return nil
	})
	fs.Func("allow-host", "admit this Host `name` besides loopback ones (repeatable, or comma-separated); on an address that is not loopback, turns the Host check on", func(v string) error {
		for h := range strings.SplitSeq(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				c.allowHosts = append(c.allowHosts, h)
			}
		}
		return nil
	})
	return fs, c
}

// defaultWords are the words a fake speaks unless told others (the
// interface's stand-ins), read from one, so that the flags' defaults are
// the fake's.
func defaultWords() deployment.Words {
	f := fake.New()
	defer f.Close()
	return f.Connection().Words
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs, c := newFlags()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err: err, printed: true}
	}
	if fs.NArg() > 0 {
		return usageError{err: fmt.Errorf("unexpected arguments %q (flags start with -)", fs.Args())}
	}
	if c.version {
		_, err := fmt.Fprintln(out, version.Line("partnerfake"))
		return err
	}
	if c.readTimeout <= 0 || c.writeTimeout <= 0 || c.idleTimeout <= 0 || c.maxConns <= 0 {
		return usageError{err: errors.New("-read-timeout, -write-timeout, -idle-timeout and -max-connections must be positive")}
	}
	for _, sec := range []struct {
		flag, file, variable string
		value                *string
	}{
		{"client-secret", c.secretFile, "PARTNERFAKE_CLIENT_SECRET", &c.secret},
		{"subscription-key", c.subKeyFile, "PARTNERFAKE_SUBSCRIPTION_KEY", &c.subKey},
	} {
		if err := secretValue(fs, sec.flag, sec.file, sec.variable, sec.value); err != nil {
			return err
		}
	}
	var seed *fake.Seed
	if c.seedFile != "" {
		file, err := os.Open(c.seedFile)
		if err != nil {
			return err
		}
		seed, err = fake.ParseSeed(file)
		file.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", c.seedFile, err)
		}
		// Check it on a throwaway fake, so that a bad seed is an error
		// here; build applies it again on every fresh fake.
		var chkOpts []fake.Option
		if c.demo {
			chkOpts = append(chkOpts, fake.WithDemoData())
		}
		chk := fake.New(chkOpts...)
		err = chk.ApplySeed(seed)
		chk.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", c.seedFile, err)
		}
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	spool, err := newSpoolDir(os.TempDir())
	if err != nil {
		return err
	}
	defer spool.remove()
	start := time.Now().UTC().Truncate(time.Second)
	build := func() *fake.Fake {
		opts := []fake.Option{fake.WithClient(c.id, c.secret), fake.WithTokenLifetime(c.lifetime), fake.WithBulkDelay(c.bulkDelay),
			fake.WithViewDelay(c.viewDelay), fake.WithRequestLogSize(c.logSize), fake.WithLimits(c.limits), fake.WithSpoolDir(spool.path)}
		if c.demo {
			opts = append(opts, fake.WithDemoData())
		}
		if len(c.redirects) > 0 {
			opts = append(opts, fake.WithRedirectURIs(c.id, c.redirects...))
		}
		if c.manual {
			opts = append(opts, fake.WithClock(fake.NewManualClock(start)))
		}
		if c.fullSCIM {
			opts = append(opts, fake.WithFullSCIMFilter())
		}
		opts = append(opts, fake.WithWords(c.words), fake.WithDeployment(fake.Deployment{SubscriptionKey: c.subKey}))
		if c.scopes {
			opts = append(opts, fake.WithScopeChecks())
		}
		if c.envelope {
			opts = append(opts, fake.WithDeliveryEnvelope())
		}
		if c.unknownMembers {
			opts = append(opts, fake.WithUnknownMembers())
		}
		f := fake.New(opts...)
		if seed != nil {
			f.ApplySeed(seed) // checked above on the same data set: no error
		}
		return f
	}
	admin := fakeadmin.New(build)
	admin.AllowRemote = c.adminRemote
	defer admin.Close()
	url := "http://" + ln.Addr().String()
	admin.SetURL(url)
	handler := withLatency(admin, c.latency, c.writeTimeout)
	if fakehttp.LoopbackAddr(ln.Addr()) || len(c.allowHosts) > 0 {
		handler = fakehttp.LocalOnly(handler, c.allowHosts)
	}
	srv := &http.Server{Handler: handler, MaxHeaderBytes: fakehttp.MaxHeaderBytes,
		ReadHeaderTimeout: min(10*time.Second, c.readTimeout), ReadTimeout: c.readTimeout,
		WriteTimeout: c.writeTimeout, IdleTimeout: c.idleTimeout, ConnState: newIdleCap(c.maxConns).connState}

	fmt.Fprintf(out, "partnerfake serving at %s\n", url)
	fmt.Fprintf(out, "  admin API:     %s/_fake/\n", url)
	fmt.Fprintf(out, "  client id:     %s\n", c.id)
	if c.secret == fake.DefaultClientSecret {
		fmt.Fprintf(out, "  client secret: %s\n", c.secret) // the documented default, not a secret
	} else {
		fmt.Fprintln(out, "  client secret: the one given (not printed)")
	}
	if c.demo {
		printDemo(out)
	}
	printIntegrations(out, admin.Fake().Integrations())
	fmt.Fprintf(out, "try: PARTNER_BASE_URL=%s PARTNER_CLIENT_ID=%s PARTNER_CLIENT_SECRET=... PARTNER_PORTAL_WORD=%s go run ./examples/quickstart\n",
		url, c.id, c.words.PortalWord)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(events.LimitConns(srv, ln, c.maxConns)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		srv.Close() // ends the requests still running: a load cut off changes nothing
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(out, "partnerfake stopped")
	return nil
}

// withLatency delays every request outside the admin API by d, which
// the write timeout then counts from the end of.
func withLatency(h http.Handler, d, writeTimeout time.Duration) http.Handler {
	if d <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, fakehttp.AdminPrefix) {
			http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d + writeTimeout))
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

func printDemo(out io.Writer) {
	fmt.Fprintf(out, "  opportunities: %s %s %s\n", demo.Opportunity1, demo.Opportunity2, demo.Opportunity3)
	fmt.Fprintf(out, "  accounts:      %s %s\n", demo.Account1, demo.Account2)
	fmt.Fprintf(out, "  users:         %s (%s), %s (%s), %s (%s, suspended)\n",
		demo.User1, demo.UserEmail1, demo.User2, demo.UserEmail2, demo.User3, demo.UserEmail3)
	fmt.Fprintf(out, "  attributes:    namespace %d\n", demo.Namespace)
	fmt.Fprintf(out, "  reports:       %d (pipeline, object-backed), %d (partners), %d (draft), %d (%d rows)\n",
		demo.ReportPipeline, demo.ReportPartners, demo.ReportDraft, demo.ReportLarge, demo.ReportLargeRows)
}

// printIntegrations lists the integrations with the object type their bulk
// loads write and the key field rows are matched on, which the service's
// own listing does not show.
func printIntegrations(out io.Writer, ins []fake.Integration) {
	if len(ins) == 0 {
		return
	}
	fmt.Fprintln(out, "  integrations (bulk loads write the object type, matching rows on the key field):")
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, in := range ins {
		fmt.Fprintf(tw, "    %s\tobject type %s\tkey field %s\n", in.ID, in.ObjectType, in.KeyField)
	}
	tw.Flush()
}
