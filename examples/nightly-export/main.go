// Command nightly-export exports a report to a CSV file, for a scheduler
// to run every night. It writes the rows to FILE.partial and keeps beside
// it, in FILE.checkpoint, where the export stands (the SDK's
// reports.Checkpoint and the length of the partial file). A run that stops
// (a crash, a kill, SIGTERM) leaves both, and the next run goes on from the
// checkpoint: the file ends with every row once. A run that completes
// renames FILE.partial to FILE, so FILE is never half written.
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
// failure, 2 on bad flags, each with a message on standard error.
package main

import (
	"context"
	"encoding/json"
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
	flag.Int64Var(&cfg.reportID, "report", 0, "id of the report to export (default: the embedded fake's demo report)")
	flag.StringVar(&cfg.out, "out", "", "CSV file to write (default report-<id>.csv)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "nightly-export: unexpected argument %q\n", flag.Arg(0))
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

// state is the content of the checkpoint file.
type state struct {
	ReportID   int64              `json:"report_id"`
	Bytes      int64              `json:"bytes"` // of the partial file: the rows before Checkpoint
	Checkpoint reports.Checkpoint `json:"checkpoint"`
}

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

	from, err := resumePoint(ctx, svc, cfg.log, id, checkpoint)
	if err != nil {
		return err
	}
	f, err := openPartial(partial, from)
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
	// it with f's length, so that a next run cuts f to what it covers.
	opts.Checkpoint = func(cp reports.Checkpoint) {
		if cp.Rows == 0 {
			return
		}
		st := state{ReportID: id, Checkpoint: cp}
		var err error
		if st.Bytes, err = f.Seek(0, io.SeekCurrent); err == nil {
			err = saveState(checkpoint, f, st)
		}
		if err != nil {
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
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(partial, out); err != nil {
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

// resumePoint reads the checkpoint file of a stopped export of report id,
// or returns nil to start over: when there is none, or when its view is
// gone (a view lasts 24 hours).
func resumePoint(ctx context.Context, svc *service, log *slog.Logger, id int64, checkpoint string) (*state, error) {
	b, err := os.ReadFile(checkpoint)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s: %w (remove it to start over)", checkpoint, err)
	}
	if st.ReportID != id {
		return nil, fmt.Errorf("%s is a checkpoint of report %d, not %d: remove it, or export to another -out", checkpoint, st.ReportID, id)
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
		log.Warn("the view of the stopped export is gone; starting over", "view", st.Checkpoint.ViewID)
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading the view of %s: %w", checkpoint, err)
	}
	return &st, nil
}

// openPartial opens the partial file: a new one, or, to go on from st,
// the one of the stopped export cut to the length st covers.
func openPartial(name string, st *state) (*os.File, error) {
	if st == nil {
		return os.Create(name)
	}
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: remove the checkpoint to start over", err)
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() < st.Bytes {
		err = fmt.Errorf("%s is shorter than its checkpoint says: remove the checkpoint to start over", name)
	}
	if err == nil {
		err = f.Truncate(st.Bytes)
	}
	if err == nil {
		_, err = f.Seek(st.Bytes, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// saveState makes f's rows durable, then replaces the checkpoint file
// whole (written beside it, then renamed), so that a crash leaves the old
// checkpoint or the new one, never half of one.
func saveState(name string, f *os.File, st state) error {
	if err := f.Sync(); err != nil {
		return err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}
