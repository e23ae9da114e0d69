// Command nightly-export exports a report to a CSV file, for a scheduler
// to run every night. It writes the rows to FILE.partial and keeps beside
// it, in FILE.checkpoint, where the export stands (the SDK's
// reports.Checkpoint and the length and SHA-256 of the partial file). A
// run that stops
// (a crash, a kill, SIGTERM) leaves both, and the next run goes on from the
// checkpoint: the file ends with every row once. A run that completes
// renames FILE.partial to FILE, so FILE is never half written. A run that
// starts over says why: a partial file without a checkpoint (the run
// before stopped before its first one), or a checkpoint whose view the
// service no longer has.
//
// The files are the program's own, written and read through package
// ownfile (checkpoint.go): none is written through a symbolic link
// planted at its name, and the partial file and checkpoint are read back
// only when they are regular files of this user's (the checkpoint a small
// one), so a directory others can write to cannot turn the export against
// another file. A checkpoint is used only when it describes the partial
// file exactly, at a position an export reaches; otherwise the run says
// what differs and changes nothing.
//
//	go run ./examples/nightly-export                  # the demo report of 100,000 rows, to report-104.csv
//	go run ./examples/nightly-export -report 7 -out pipeline.csv
//
// With no PARTNER_* variables it runs against the embedded fake service;
// with PARTNER_BASE_URL, PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET
// against that deployment (the variables deployment.FromEnv reads).
//
// Exit status: 0 when the file is complete; 3 when a signal stopped the
// export (the checkpoint is kept: run again to go on); 1 on any other
// failure, 2 on bad flags, each with a message on standard error. -h
// prints the flags and settings.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/ownfile"
	"github.com/partnerapi/partner-go/reports"
)

// config is what a run needs; main fills it from flags and the
// environment, tests directly.
type config struct {
	getenv   func(string) string
	log      *slog.Logger
	reportID int64  // 0: demo.ReportLarge, against the embedded fake only
	out      string // "": report-<id>.csv
	pageSize int64  // 0: the SDK's default
	fakeOpts []fake.Option
	// progress, when set, is called after each page with the rows in the
	// file so far (tests stop the export with it).
	progress func(rows int64)
}

// errStopped is the error of a run stopped by a signal (or ctx), whose
// checkpoint is kept.
var errStopped = errors.New("stopped")

func main() {
	cfg := config{getenv: os.Getenv, log: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	if err := parseFlags(&cfg, os.Args[1:], os.Stderr); errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	} else if err != nil {
		os.Exit(2)
	}
	// SIGTERM (a scheduler's stop) and Ctrl-C end the export at the next
	// page, with the checkpoint saved.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, cfg)
	switch {
	case err == nil:
	case errors.Is(err, errStopped):
		fmt.Fprintf(os.Stderr, "nightly-export: %v\n", err)
		os.Exit(3)
	default:
		fmt.Fprintf(os.Stderr, "nightly-export: %v\n", err)
		os.Exit(1)
	}
}

// parseFlags reads the command line args into cfg. -h prints the usage to
// stderr (flag.ErrHelp); a bad flag or argument is said there too.
func parseFlags(cfg *config, args []string, stderr io.Writer) error {
	fl := flag.NewFlagSet("nightly-export", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Int64Var(&cfg.reportID, "report", 0, "id of the report to export (default: the embedded fake's demo report)")
	fl.StringVar(&cfg.out, "out", "", "CSV file to write (default report-<id>.csv)")
	fl.Usage = func() {
		fmt.Fprint(stderr, "Usage: nightly-export [-report ID] [-out FILE]\n\n"+
			"Exports a report to a CSV file, going on from where a stopped run left it.\n\nFlags:\n")
		fl.PrintDefaults()
		fmt.Fprint(stderr, settings)
	}
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		err := fmt.Errorf("unexpected argument %q", fl.Arg(0))
		fmt.Fprintf(stderr, "nightly-export: %v\n", err)
		return err
	}
	return nil
}

// settings is the part of the usage that names the environment
// variables the program reads.
const settings = `
Settings (environment variables):
  PARTNER_BASE_URL, PARTNER_CLIENT_ID, PARTNER_CLIENT_SECRET
        the deployment to export from: all three, or none to run against
        the embedded fake service and its demo report
  PARTNER_ENV
        the environment's host name, sent in the environment header; toward
        a deployment it needs PARTNER_ENV_HEADER
  PARTNER_ENV_HEADER
        the deployment's name of the environment header
  PARTNER_PORTAL_WORD
        the deployment's portal word, as in <word>.integration_status (an
        export does not need it)
  PARTNER_SUBSCRIPTION_KEY
        the API gateway's subscription key, when a gateway fronts the service
  PARTNER_SUBSCRIPTION_KEY_HEADER
        the header the gateway reads that key from, when not the default

Files: FILE.partial holds the rows so far and FILE.checkpoint where the
export stands; a run that stops keeps both and the next one goes on.

Exit status: 0 complete, 3 stopped by a signal (run again to go on),
1 failed, 2 bad flags.
`

// service is the client and, when no deployment is named, the embedded
// fake it talks to.
type service struct {
	*partner.Client
	fake *fake.Server // nil against a deployment
}

func run(ctx context.Context, cfg config) (err error) {
	// The deployment the PARTNER_* variables name, or else the embedded
	// fake with its demo data, speaking the words they give.
	conn, err := deployment.FromEnv(cfg.getenv)
	svc := &service{}
	if errors.Is(err, deployment.ErrNotSet) {
		svc.fake = fake.NewServer(append([]fake.Option{fake.WithDemoData(), fake.WithWords(conn.Words),
			fake.WithDeployment(fake.Deployment{SubscriptionKey: conn.SubscriptionKey})}, cfg.fakeOpts...)...)
		defer svc.fake.Close()
		env := conn.Environment
		conn, err = svc.fake.Connection(), nil
		conn.Environment = env
	}
	if err != nil {
		return err
	}
	if svc.Client, err = partner.New(partner.WithConnection(conn), partner.WithUserAgent("nightly-export"), partner.WithLogger(cfg.log)); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, svc.Close(context.WithoutCancel(ctx))) }()
	id := cfg.reportID
	if id == 0 {
		if svc.fake == nil {
			return errors.New("-report is required against a deployment")
		}
		id = demo.ReportLarge
	}
	out := cfg.out
	if out == "" {
		out = fmt.Sprintf("report-%d.csv", id)
	}
	partial, checkpoint := out+".partial", out+".checkpoint"

	from, f, err := resumePoint(ctx, svc, cfg.log, id, partial, checkpoint)
	if err != nil {
		return err
	}
	defer f.Close()
	opts := reports.ExportOptions{Wait: reports.WaitOptions{Interval: time.Second}}
	if from != nil {
		opts.From = &from.Checkpoint // its page size too
		cfg.log.Info("going on with a stopped export", "report", id, "view", from.Checkpoint.ViewID, "rows", from.Checkpoint.Rows, "file", partial)
	} else {
		opts.PageSize = cfg.pageSize
		cfg.log.Info("exporting", "report", id, "file", partial)
	}
	// ExportCSV calls Checkpoint once the rows before it are in f: keep
	// it with f's length and hash, so that a next run checks f and cuts
	// it to what the checkpoint covers.
	opts.Checkpoint = func(cp reports.Checkpoint) {
		if cp.Rows == 0 {
			return
		}
		if err := f.save(checkpoint, id, cp); err != nil {
			// The previous checkpoint stays: a next run repeats more.
			cfg.log.Warn("saving the checkpoint", "err", err)
		}
	}
	opts.Progress = func(rows int64) {
		cfg.log.Info("progress", "rows", rows)
		if cfg.progress != nil {
			cfg.progress(rows)
		}
	}
	n, err := svc.Reports.ExportCSV(ctx, id, f, opts)
	if err != nil {
		if ctx.Err() != nil {
			cfg.log.Warn("stopped; run again to go on from the checkpoint", "checkpoint", checkpoint, "rows_this_run", n)
			return fmt.Errorf("%w after %d rows this run: %s keeps where the export stands, run again to go on", errStopped, n, checkpoint)
		}
		return fmt.Errorf("exporting report %d: %w (%s keeps where it stands: run again to go on)", id, err, checkpoint)
	}
	// Synced, closed, and renamed to out: what is at out (a file of an
	// earlier night, or a link) is replaced, never written through.
	if err := ownfile.Place(f.File, out, true); err != nil {
		return err
	}
	os.Remove(checkpoint)
	total := n
	if from != nil {
		total += from.Checkpoint.Rows
	}
	cfg.log.Info("export complete", "report", id, "file", out, "rows", total, "rows_this_run", n)
	return nil
}

// resumePoint reads the checkpoint file of a stopped export of report id
// and opens its partial file, ready to go on from it, or returns a nil
// state and a new partial file to start over, saying why when a stopped
// export is dropped: when there is no checkpoint, or when its view is
// gone (a view lasts 24 hours). A checkpoint or partial file that is not
// one this program wrote for this export is an error, found before
// anything is sent, that loses nothing: the operator decides.
func resumePoint(ctx context.Context, svc *service, log *slog.Logger, id int64, partial, checkpoint string) (*state, *partialFile, error) {
	st, err := readState(checkpoint, id)
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Lstat(partial); err == nil {
			log.Warn("starting over: the partial file has no checkpoint beside it (the run that wrote it stopped before its first checkpoint)",
				"partial", partial, "checkpoint", checkpoint)
		}
		f, err := openPartial(partial, nil)
		return nil, f, err
	}
	if err != nil {
		return nil, nil, err
	}
	f, err := openPartial(partial, &st)
	if err != nil {
		return nil, nil, err
	}
	if svc.fake != nil {
		// The embedded fake lives as long as this process, so a run after
		// a kill starts a fresh one, without the view of the checkpoint.
		// Preparing the report in a fresh fake makes that view again (same
		// id, same rows). A deployment keeps its views for 24 hours, so
		// this is for the embedded fake only.
		if v, err := svc.Reports.PrepareExport(ctx, id); err == nil {
			svc.Reports.WaitView(ctx, v, reports.WaitOptions{})
		}
	}
	vs, err := svc.Reports.ViewStatus(ctx, st.Checkpoint.ViewID)
	switch {
	case partner.IsNotFound(err) || err == nil && vs.Status != reports.ViewSuccess:
		log.Warn("starting over: the view of the stopped export is gone (a view lasts 24 hours)",
			"view", st.Checkpoint.ViewID, "rows_dropped", st.Checkpoint.Rows)
		f.Close()
		f, err := openPartial(partial, nil)
		return nil, f, err
	case err != nil:
		f.Close()
		return nil, nil, fmt.Errorf("reading the view of %s: %w", checkpoint, err)
	}
	return &st, f, nil
}
