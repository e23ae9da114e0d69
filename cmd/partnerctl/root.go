package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/internal/text"
)

// Exit statuses, documented in the root command's help (exitCodesHelp)
// and README's CLI section.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
	// exitUnknown is a failure after which the service may have done
	// the work (partner.IsOutcomeUnknown): look before doing it again.
	exitUnknown = 3
	// exitAuth is a refusal of the credentials (401, the token endpoint
	// refusing the client) or of their scope (403).
	exitAuth = 4
	// exitDataFailed says the command did its work and what it read says
	// something failed: a load whose records were refused, an import
	// with failed rows (dataFailure).
	exitDataFailed = 5
	// exitInterrupted is the shell's status for a command ended by
	// SIGINT (128+2): Ctrl-C.
	exitInterrupted = 130
)

// exitCodesHelp is the exit statuses as the help lists them.
const exitCodesHelp = `Exit status:
  0    success
  1    failure: the command could not do its work
  2    usage error: nothing was sent
  3    outcome unknown: a write failed after the service may have done it;
       look before doing it again
  4    authentication: the service refused the credentials or their scope
  5    the command worked, and what it read says something failed: a bulk
       load's records were refused, an import's rows failed
  130  interrupted (Ctrl-C)`

// dataFailure is an error of a command that did its work, where what it
// read says something failed (refused records): exit status 5.
type dataFailure struct{ err error }

func (e dataFailure) Error() string { return e.err.Error() }
func (e dataFailure) Unwrap() error { return e.err }

// dataFailedf returns a dataFailure.
func dataFailedf(format string, args ...any) error {
	return dataFailure{fmt.Errorf(format, args...)}
}

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// app is what every command shares: the streams, the environment and the
// connection settings.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// isTerminal says whether w is a terminal; progress goes to stderr
	// only when it is.
	isTerminal func(w io.Writer) bool
	// now is the clock of progress rates; nil means time.Now.
	now func() time.Time
	// clientOpts are added to the client's options; tests shorten the
	// retry back-off with them. Nil in the command.
	clientOpts []partner.Option

	baseURL, clientID, clientSecret, secretFile string
	env, envHeader, subKey, subKeyHeader        string
	subKeyFile                                  string
	scopes                                      []string
	debug                                       bool
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// run executes the command line args and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv, isTerminal: isTerminal}
	return a.execute(ctx, args)
}

func (a *app) execute(ctx context.Context, args []string) int {
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	// The SDK's errors start with its package name ("partner: "); this
	// command names itself once, also where a command wrapped one.
	msg := strings.ReplaceAll(strings.TrimPrefix(err.Error(), "partner: "), ": partner: ", ": ")
	if ctx.Err() != nil {
		// Ctrl-C (or SIGTERM) cancelled the work; the command cleaned up.
		printf(a.stderr, "partnerctl: interrupted: %s\n", msg)
		return exitInterrupted
	}
	printf(a.stderr, "partnerctl: %s\n", msg)
	if _, ok := errors.AsType[usageError](err); ok {
		printf(a.stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return exitUsage
	}
	var df dataFailure
	switch {
	case partner.IsOutcomeUnknown(err):
		return exitUnknown
	case partner.IsUnauthorized(err) || partner.IsForbidden(err):
		return exitAuth
	case errors.As(err, &df):
		return exitDataFailed
	}
	return exitFail
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "partnerctl",
		Short: "Operate the Partner Integration Service from a terminal",
		Long: `partnerctl exports reports, loads files, provisions users and watches webhook
deliveries of the Partner Integration Service.

Connection settings come from flags, or else from the variables
PARTNER_BASE_URL, PARTNER_CLIENT_ID, PARTNER_CLIENT_SECRET, PARTNER_ENV,
PARTNER_ENV_HEADER, PARTNER_PORTAL_WORD, PARTNER_SUBSCRIPTION_KEY and
PARTNER_SUBSCRIPTION_KEY_HEADER (go doc github.com/partnerapi/partner-go/deployment.FromEnv).
Secrets are never printed. A secret given as a flag (--client-secret,
--subscription-key) is visible to other users of this machine in the
process list: give it in its variable or in a file (--client-secret-file,
--subscription-key-file) instead.

--json, on every command that prints data, prints it as JSON on stdout
(each command's help gives the shape); messages go to stderr. --debug (or
PARTNER_DEBUG=1) writes the SDK's log records to stderr: one line per
attempt of a request (method, path, attempt, status, request id; a retry
with its wait); never a secret.

` + exitCodesHelp,
		Example: `  export PARTNER_BASE_URL=https://api.example.com PARTNER_CLIENT_ID=me PARTNER_CLIENT_SECRET=...
  partnerctl reports list
  partnerctl reports export 104 --format csv -o deals.csv`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          noArgs,
		RunE:          groupRun,
		Version:       buildVersion(),
	}
	root.SetVersionTemplate(currentVersion().String() + "\n")
	pf := root.PersistentFlags()
	pf.StringVar(&a.baseURL, "base-url", "", "base URL of the service (PARTNER_BASE_URL)")
	pf.StringVar(&a.clientID, "client-id", "", "OAuth client id (PARTNER_CLIENT_ID)")
	pf.StringVar(&a.clientSecret, "client-secret", "", "OAuth client secret (PARTNER_CLIENT_SECRET); visible to other users of this machine in the process list: prefer the variable or --client-secret-file")
	pf.StringVar(&a.secretFile, "client-secret-file", "", "read the client secret from this `file`")
	pf.StringVar(&a.env, "env", "", "host name of the environment, sent in the environment header (PARTNER_ENV); a deployment needs --env-header too")
	pf.StringVar(&a.envHeader, "env-header", "", "name of the deployment's environment header, needed with --env toward any host; the fake's is x-svc-env unless it was given another (PARTNER_ENV_HEADER)")
	pf.StringVar(&a.subKey, "subscription-key", "", "gateway subscription key (PARTNER_SUBSCRIPTION_KEY); visible to other users of this machine in the process list: prefer the variable or --subscription-key-file")
	pf.StringVar(&a.subKeyFile, "subscription-key-file", "", "read the gateway subscription key from this `file`")
	pf.StringVar(&a.subKeyHeader, "subscription-key-header", "", "name of the subscription key header (PARTNER_SUBSCRIPTION_KEY_HEADER)")
	pf.StringSliceVar(&a.scopes, "scope", nil, "scopes to request for the token (repeatable)")
	pf.BoolVar(&a.debug, "debug", false, "write the SDK's log records (requests, retries, request ids) to stderr (PARTNER_DEBUG=1)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })

	root.AddCommand(a.reportsCmd(), a.bulkCmd(), a.usersCmd(), a.eventsCmd(), a.tokenCmd(), a.versionCmd(), a.doctorCmd())
	return root
}

// groupRun is the RunE of a command that only groups others: without a
// subcommand it shows its help and fails with a usage error.
func groupRun(cmd *cobra.Command, args []string) error {
	cmd.Help()
	return usagef("%s needs a command", cmd.CommandPath())
}

// group returns a command that groups subs.
func group(use, short, example string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{Use: use, Short: short, Example: example, Args: noArgs, RunE: groupRun}
	c.AddCommand(subs...)
	return c
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		if cmd.HasSubCommands() {
			return usagef("unknown command %q for %q%s", args[0], cmd.CommandPath(), didYouMean(cmd, args[0]))
		}
		return usagef("%s takes no arguments", cmd.CommandPath())
	}
	return nil
}

// didYouMean returns the names of cmd's commands near typed, nearest
// first, as "; did you mean ...?", or "". A name is near when typed begins
// it or is at most two edits from it, without regard to case; a command's
// other names (aliases) count, as cobra's own suggestions do not.
func didYouMean(cmd *cobra.Command, typed string) string {
	typed = strings.ToLower(typed)
	if typed == "" {
		return ""
	}
	type candidate struct {
		name string
		dist int
	}
	var near []candidate
	for _, sub := range cmd.Commands() {
		if !sub.IsAvailableCommand() {
			continue
		}
		for _, name := range append([]string{sub.Name()}, sub.Aliases...) {
			d := text.Levenshtein(typed, strings.ToLower(name))
			if strings.HasPrefix(name, typed) || d <= 2 {
				near = append(near, candidate{name, d})
			}
		}
	}
	if len(near) == 0 {
		return ""
	}
	slices.SortStableFunc(near, func(a, b candidate) int { return a.dist - b.dist })
	quoted := make([]string, len(near))
	for i, c := range near {
		quoted[i] = strconv.Quote(c.name)
	}
	return "; did you mean " + strings.Join(quoted, " or ") + "?"
}

// exactArgs takes one argument for each of names, none of them empty.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return usagef("%s needs %s", cmd.CommandPath(), strings.Join(names, " "))
		}
		for i, arg := range args {
			if arg == "" {
				return usagef("%s: %s is empty", cmd.CommandPath(), names[i])
			}
		}
		return nil
	}
}

// settingFrom returns the flag's value when it was given, else the
// variable's, and where the value came from (the flag or the variable),
// for messages in the operator's terms.
func (a *app) settingFrom(cmd *cobra.Command, flag, value, variable string) (v, from string) {
	if f := cmd.Flags().Lookup(flag); f != nil && f.Changed {
		return value, "--" + flag
	}
	return a.getenv(variable), variable
}

// secretSetting is settingFrom for a secret, which may also come from the
// file given with the flag flag+"-file" (file): its content without the
// final line break. The flag form is visible in the process list; the
// file and the variable are not.
func (a *app) secretSetting(cmd *cobra.Command, flag, value, file, variable string) (v, from string, err error) {
	if file == "" {
		v, from = a.settingFrom(cmd, flag, value, variable)
		return v, from, nil
	}
	from = "--" + flag + "-file"
	if cmd.Flags().Changed(flag) {
		return "", from, usagef("give --%s or %s, not both", flag, from)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", from, usagef("%s: %w", from, err)
	}
	v = strings.TrimRight(string(b), "\r\n")
	if v == "" {
		return "", from, usagef("%s: %s is empty", from, file)
	}
	return v, from, nil
}

// connection reads the connection from the settings: the PARTNER_*
// variables, through deployment.FromEnv, each overridden by its flag
// (portal, when the command has --portal-word, overrides
// PARTNER_PORTAL_WORD). It returns where each value came from (the flag
// or the variable), for messages in the operator's words. Errors are
// usage errors (nothing was sent yet) that never repeat a secret.
func (a *app) connection(cmd *cobra.Command, portal string) (deployment.Connection, map[string]string, error) {
	vars := map[string]string{} // the value of each variable, or of the flag that overrides it
	from := map[string]string{} // the flag or variable each value came from
	for _, s := range []struct{ flag, value, variable string }{
		{"base-url", a.baseURL, "PARTNER_BASE_URL"}, {"client-id", a.clientID, "PARTNER_CLIENT_ID"},
		{"env", a.env, "PARTNER_ENV"}, {"env-header", a.envHeader, "PARTNER_ENV_HEADER"},
		{"subscription-key-header", a.subKeyHeader, "PARTNER_SUBSCRIPTION_KEY_HEADER"},
		{"portal-word", portal, "PARTNER_PORTAL_WORD"},
	} {
		vars[s.variable], from[s.variable] = a.settingFrom(cmd, s.flag, s.value, s.variable)
	}
	var err error
	if vars["PARTNER_CLIENT_SECRET"], from["PARTNER_CLIENT_SECRET"], err = a.secretSetting(cmd, "client-secret", a.clientSecret, a.secretFile, "PARTNER_CLIENT_SECRET"); err != nil {
		return deployment.Connection{}, nil, err
	}
	if vars["PARTNER_SUBSCRIPTION_KEY"], from["PARTNER_SUBSCRIPTION_KEY"], err = a.secretSetting(cmd, "subscription-key", a.subKey, a.subKeyFile, "PARTNER_SUBSCRIPTION_KEY"); err != nil {
		return deployment.Connection{}, nil, err
	}
	if base := vars["PARTNER_BASE_URL"]; base != "" && !strings.Contains(base, "://") {
		return deployment.Connection{}, nil, usagef("%s %q has no scheme: add http:// or https://", from["PARTNER_BASE_URL"], base)
	}
	conn, err := deployment.FromEnv(func(name string) string { return vars[name] })
	if err != nil {
		return deployment.Connection{}, nil, settingsError(err, vars, from)
	}
	return conn, from, nil
}

// client builds an SDK client from the settings (connection). Errors are
// usage errors (nothing was sent yet) in the operator's words: the flag or
// variable a value came from, never an SDK option, and never a secret.
func (a *app) client(cmd *cobra.Command) (*partner.Client, error) {
	conn, from, err := a.connection(cmd, "")
	if err != nil {
		return nil, err
	}
	opts := []partner.Option{
		partner.WithConnection(conn),
		partner.WithUserAgent(userAgent()),
		partner.WithScopes(a.scopes...),
	}
	if a.debugging(cmd) {
		opts = append(opts, partner.WithLogger(slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	}
	c, err := partner.New(append(opts, a.clientOpts...)...)
	if err != nil {
		// The SDK names its options; say it with the settings' names.
		baseFrom, envFrom, envHeaderFrom := from["PARTNER_BASE_URL"], from["PARTNER_ENV"], from["PARTNER_ENV_HEADER"]
		keyFrom, keyHeaderFrom := from["PARTNER_SUBSCRIPTION_KEY"], from["PARTNER_SUBSCRIPTION_KEY_HEADER"]
		msg := strings.NewReplacer(
			"no base URL: use WithBaseURL", "no base URL: set --base-url or PARTNER_BASE_URL",
			"no client credentials: use WithClientCredentials or WithTokenSource",
			"no client credentials: set --client-id and --client-secret (or --client-secret-file), or PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET",
			"use WithClientCredentials", "give them with --client-id and --client-secret",
			"use WithInsecureHTTP to allow it", "plain http is allowed to this machine only",
			"base URL", baseFrom,
			"WithEnvironment needs WithEnvironmentHeader", envFrom+" needs --env-header (or PARTNER_ENV_HEADER)",
			"WithEnvironmentHeader:", envHeaderFrom, "WithEnvironmentHeader", envHeaderFrom,
			"WithEnvironment:", envFrom, "WithEnvironment", envFrom,
			"WithSubscriptionKeyHeader:", keyHeaderFrom, "WithSubscriptionKeyHeader", keyHeaderFrom,
			"WithSubscriptionKey:", keyFrom+":",
		).Replace(err.Error())
		return nil, usageError{errors.New(msg)}
	}
	return c, nil
}

// flagOf names the flag that overrides each PARTNER_* variable.
var flagOf = map[string]string{
	"PARTNER_BASE_URL": "--base-url", "PARTNER_CLIENT_ID": "--client-id", "PARTNER_CLIENT_SECRET": "--client-secret",
	"PARTNER_ENV": "--env", "PARTNER_ENV_HEADER": "--env-header",
	"PARTNER_SUBSCRIPTION_KEY": "--subscription-key", "PARTNER_SUBSCRIPTION_KEY_HEADER": "--subscription-key-header",
}

// settingsError is deployment.FromEnv's error err as a usage error in the
// operator's words: each variable named as the flag or variable its value
// came from (from), or, when it is not set, as both.
func settingsError(err error, vars, from map[string]string) error {
	var e *deployment.EnvError
	switch {
	case errors.Is(err, deployment.ErrNotSet), errors.As(err, &e) && vars[e.Var] == "" &&
		(e.Var == "PARTNER_BASE_URL" || e.Var == "PARTNER_CLIENT_ID" || e.Var == "PARTNER_CLIENT_SECRET"):
		if vars["PARTNER_BASE_URL"] == "" {
			return usagef("no base URL: set --base-url or PARTNER_BASE_URL")
		}
		return usagef("no client credentials: set --client-id and --client-secret (or --client-secret-file), or PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET")
	case e == nil:
		return usageError{err}
	}
	// Every name, longer ones first: PARTNER_ENV is the start of
	// PARTNER_ENV_HEADER, which must match as a whole.
	names := slices.SortedFunc(maps.Keys(flagOf), func(a, b string) int { return len(b) - len(a) })
	var pairs []string
	for _, v := range names {
		if vars[v] == "" {
			pairs = append(pairs, v, flagOf[v]+" (or "+v+")")
		} else {
			pairs = append(pairs, v, from[v])
		}
	}
	return usageError{errors.New(strings.NewReplacer(pairs...).Replace(err.Error()))}
}

// debugging says whether --debug, or else PARTNER_DEBUG (1 or true),
// asks for the SDK's log records.
func (a *app) debugging(cmd *cobra.Command) bool {
	if f := cmd.Flags().Lookup("debug"); f != nil && f.Changed {
		return a.debug
	}
	v, _ := strconv.ParseBool(a.getenv("PARTNER_DEBUG"))
	return v
}

// withClient runs fn with a client and closes the client afterwards
// (invalidating its token) under a fresh context, so that Ctrl-C still
// cleans up.
func (a *app) withClient(cmd *cobra.Command, fn func(ctx context.Context, c *partner.Client) error) error {
	c, err := a.client(cmd)
	if err != nil {
		return err
	}
	err = fn(cmd.Context(), c)
	closeClient(cmd.Context(), c)
	return err
}

// closeClient closes c (invalidating its token) under a context of its
// own, derived from ctx but not cancelled with it, so that Ctrl-C still
// cleans up.
func closeClient(ctx context.Context, c *partner.Client) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return c.Close(ctx)
}
