// Command crm-sync loads a CSV of CRM opportunities into the Partner
// Integration Service in bulk:
//
//	go run ./examples/crm-sync                         # the sample opportunities.csv, three rows of which are refused
//	go run ./examples/crm-sync -in fixed.csv -integration int-42
//	go run ./examples/crm-sync -h                      # its flags and settings
//
// It
//
//  1. reads the CSV: a header row naming the fields (dotted names, the
//     integration's key field sales_details.crm_opportunity_id among
//     them), and optionally a partner_object_id column, the service's id
//     of an opportunity the CRM already knows (one that came from the
//     partner platform); that column is not loaded;
//  2. maps those opportunities to their CRM ids (external ids), so that the
//     load updates them rather than creating others;
//  3. loads the rows in bulk and waits for the execution;
//  4. writes the refused rows, with the service's reason in a last column
//     refused_reason, to a file that a person fixes and loads again as it
//     is (crm-sync -in crm-sync-refused.csv); the file is written
//     through package ownfile, whole or not at all, and a link planted at
//     its name is replaced, never written through;
//  5. writes the audit status onto the opportunities it knows by id:
//     LINKED when loaded, UPDATE_FAILED with the reason when refused.
//
// With no PARTNER_* variables it runs against the embedded fake service;
// with PARTNER_BASE_URL, PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET
// against that deployment (the variables deployment.FromEnv reads), whose
// portal word PARTNER_PORTAL_WORD names the audit field. It exits 0 when the load completed
// (refused rows included: the file says which), 1 with a message otherwise.
package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/objects"
	"github.com/partnerapi/partner-go/ownfile"
)

// sample is the CSV loaded when no -in is given.
//
//go:embed opportunities.csv
var sample []byte

// Columns of the CSV that are not loaded.
const (
	objectIDColumn = "partner_object_id"
	reasonColumn   = "refused_reason"
)

// config is what a run needs; main fills it from flags and the
// environment, tests directly.
type config struct {
	getenv      func(string) string
	log         *slog.Logger
	out         io.Writer // the summary
	in          string    // "": the sample
	refused     string    // the file of refused rows
	integration string    // "": the demo integration, against the embedded fake only
	keyField    string
	fakeOpts    []fake.Option
}

func main() {
	cfg := config{getenv: os.Getenv, log: slog.New(slog.NewTextHandler(os.Stderr, nil)), out: os.Stdout}
	if err := parseFlags(&cfg, os.Args[1:], os.Stderr); errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	} else if err != nil {
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "crm-sync: %v\n", err)
		os.Exit(1)
	}
}

// parseFlags reads the command line args into cfg. -h prints the usage to
// stderr (flag.ErrHelp); a bad flag or argument is said there too.
func parseFlags(cfg *config, args []string, stderr io.Writer) error {
	fl := flag.NewFlagSet("crm-sync", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.StringVar(&cfg.in, "in", "", "CSV of opportunities to load (default: the sample)")
	fl.StringVar(&cfg.refused, "refused", "crm-sync-refused.csv", "file to write the refused rows to")
	fl.StringVar(&cfg.integration, "integration", "", "integration to load (default: the embedded fake's demo integration)")
	fl.StringVar(&cfg.keyField, "key", objects.DefaultOpportunityExternalIDField, "the integration's key field, the CRM id")
	fl.Usage = func() {
		fmt.Fprint(stderr, "Usage: crm-sync [-in FILE] [-refused FILE] [-integration ID] [-key FIELD]\n\n"+
			"Loads a CSV of CRM opportunities in bulk and writes the refused rows to a file to fix.\n\nFlags:\n")
		fl.PrintDefaults()
		fmt.Fprint(stderr, settings)
	}
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		err := fmt.Errorf("unexpected argument %q", fl.Arg(0))
		fmt.Fprintf(stderr, "crm-sync: %v\n", err)
		return err
	}
	return nil
}

// settings is the part of the usage that names the environment
// variables the program reads.
const settings = `
Settings (environment variables):
  PARTNER_BASE_URL, PARTNER_CLIENT_ID, PARTNER_CLIENT_SECRET
        the deployment to load into: all three, or none to run against the
        embedded fake service and its demo integration
  PARTNER_ENV
        the environment's host name, sent in the environment header; toward
        a deployment it needs PARTNER_ENV_HEADER
  PARTNER_ENV_HEADER
        the deployment's name of the environment header
  PARTNER_PORTAL_WORD
        the deployment's portal word, as in <word>.integration_status, the
        audit field crm-sync writes (required with a deployment)
  PARTNER_SUBSCRIPTION_KEY
        the API gateway's subscription key, when a gateway fronts the service
  PARTNER_SUBSCRIPTION_KEY_HEADER
        the header the gateway reads that key from, when not the default

Exit status: 0 when the load completed (refused rows included: the file
says which), 1 on a failure, 2 on bad flags.
`

// opportunity is one row of the CSV.
type opportunity struct {
	line     int      // in the file, for messages
	values   []string // by column of the file
	objectID string   // partner_object_id, when known
	key      string   // the CRM id
	refused  string   // the service's reason, once refused
}

func run(ctx context.Context, cfg config) (err error) {
	header, rows, err := readCSV(cfg)
	if err != nil {
		return err
	}
	keyCol, idCol := slices.Index(header, cfg.keyField), slices.Index(header, objectIDColumn)
	if keyCol < 0 {
		return fmt.Errorf("the CSV has no column %s, the integration's key field", cfg.keyField)
	}
	for _, r := range rows {
		r.key = strings.TrimSpace(r.values[keyCol])
		if idCol >= 0 {
			r.objectID = strings.TrimSpace(r.values[idCol])
		}
	}
	// The deployment the PARTNER_* variables name, or else the embedded
	// fake with its demo data, speaking the words they give.
	conn, err := deployment.FromEnv(cfg.getenv)
	onFake := errors.Is(err, deployment.ErrNotSet)
	if onFake {
		srv := fake.NewServer(append([]fake.Option{fake.WithDemoData(), fake.WithWords(conn.Words),
			fake.WithDeployment(fake.Deployment{SubscriptionKey: conn.SubscriptionKey})}, cfg.fakeOpts...)...)
		defer srv.Close()
		env := conn.Environment
		conn, err = srv.Connection(), nil
		conn.Environment = env
	} else if err == nil && conn.Words.PortalWord == "" {
		return errors.New("PARTNER_PORTAL_WORD is not set: crm-sync writes the audit status to the deployment's <word>.integration_status; set it to the deployment's portal word")
	}
	if err != nil {
		return err
	}
	svc, err := partner.New(partner.WithConnection(conn), partner.WithUserAgent("crm-sync"), partner.WithLogger(cfg.log))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, svc.Close(context.WithoutCancel(ctx))) }()
	integration := cfg.integration
	if integration == "" {
		if !onFake {
			return errors.New("-integration is required against a deployment")
		}
		integration = demo.OpportunityIntegration
	}

	// 2. Map the opportunities the service knows to their CRM ids first:
	// the load finds them by their key field then, and updates them.
	// (Opportunities the load creates hold their CRM id in that field.)
	mapped := 0
	for _, r := range rows {
		if r.objectID == "" || r.key == "" {
			continue
		}
		if _, err := svc.Objects.ConnectExternalID(ctx, r.objectID, objects.ConnectExternalIDParams{
			ExternalID: r.key, FieldName: cfg.keyField,
		}); err != nil {
			return fmt.Errorf("line %d: mapping %s to %s: %w", r.line, r.objectID, r.key, err)
		}
		mapped++
	}

	// 3. Load the rows, without the columns that are not fields.
	ex, err := load(ctx, cfg, svc, integration, header, rows)
	if err != nil {
		return err
	}

	// 4. The refused rows, with their reasons, to a file to fix.
	for _, e := range matchRefused(ex.Errors, header, rows) {
		cfg.log.Warn("a refused row that is not in the CSV", "id", e.ID, "reason", e.Message)
	}
	nRefused, err := writeRefused(cfg.refused, header, rows)
	if err != nil {
		return err
	}
	if int64(len(ex.Errors)) < ex.ErrorCount {
		cfg.log.Warn("the service listed fewer refused rows than it counted", "listed", len(ex.Errors), "refused", ex.ErrorCount)
	}

	// 5. The audit status of the opportunities known by id.
	audits := 0
	for _, r := range rows {
		if r.objectID == "" {
			continue
		}
		// No FieldName: the client's audit field, <PARTNER_PORTAL_WORD>.integration_status.
		p := objects.AuditParams{IntegrationID: integration, ExternalID: r.key,
			StatusCode: objects.StatusLinked, Message: "loaded from the CRM"}
		if r.refused != "" {
			p.StatusCode, p.Message = objects.StatusUpdateFailed, "refused: "+r.refused
		}
		if _, err := svc.Objects.Audit(ctx, r.objectID, p); err != nil {
			return fmt.Errorf("line %d: writing the audit status of %s: %w", r.line, r.objectID, err)
		}
		cfg.log.Info("audit", "object", r.objectID, "crm_id", r.key, "status", p.StatusCode)
		audits++
	}

	fmt.Fprintf(cfg.out, "crm-sync: %d rows read; %d loaded, %d skipped (unchanged), %d refused; %d opportunities mapped to their CRM ids, %d audit statuses written\n",
		len(rows), ex.SuccessCount, ex.SkipCount, ex.ErrorCount, mapped, audits)
	if nRefused > 0 {
		fmt.Fprintf(cfg.out, "crm-sync: the refused rows are in %s with their reasons: fix them and load that file with -in %s\n", cfg.refused, cfg.refused)
	}
	return nil
}

// readCSV reads the input: a header row, then rows of as many fields. A
// refused_reason column (a file of refused rows, fixed) is dropped.
func readCSV(cfg config) ([]string, []*opportunity, error) {
	name, data := cfg.in, sample
	if name == "" {
		name = "the sample opportunities.csv"
	} else {
		var err error
		if data, err = os.ReadFile(name); err != nil {
			return nil, nil, err
		}
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(recs) < 2 {
		return nil, nil, fmt.Errorf("%s: no rows under the header", name)
	}
	drop := slices.Index(recs[0], reasonColumn)
	var header []string
	var rows []*opportunity
	for i, rec := range recs {
		if drop >= 0 {
			rec = slices.Delete(rec, drop, drop+1)
		}
		if i == 0 {
			header = rec
		} else {
			rows = append(rows, &opportunity{line: i + 1, values: rec})
		}
	}
	return header, rows, nil
}

// load sends the rows' loaded columns as one CSV load and waits for its
// execution, with every refused row.
func load(ctx context.Context, cfg config, svc *partner.Client, integration string, header []string, rows []*opportunity) (*bulk.Execution, error) {
	loaded := func(rec []string) []string {
		if i := slices.Index(header, objectIDColumn); i >= 0 {
			return slices.Delete(slices.Clone(rec), i, i+1)
		}
		return rec
	}
	var body bytes.Buffer
	w := csv.NewWriter(&body)
	w.Write(loaded(header))
	for _, r := range rows {
		w.Write(loaded(r.values))
	}
	if w.Flush(); w.Error() != nil {
		return nil, w.Error()
	}
	// A bytes.Reader seeks, so the client can send it again after a 429.
	ack, err := svc.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: integration, Format: bulk.CSV}, bytes.NewReader(body.Bytes()))
	if err != nil {
		// With partner.IsOutcomeUnknown(err) the service may have the
		// load: the error says so. Loading again is safe here, since a
		// load upserts by the key field.
		return nil, fmt.Errorf("loading: %w", err)
	}
	cfg.log.Info("loading", "integration", integration, "execution", ack.ExecutionID, "rows", len(rows))
	var last bulk.State
	ex, err := svc.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{
		Status:   bulk.StatusParams{IncludeErrors: new(true), MaxErrors: new(len(rows))},
		Interval: time.Second,
		Progress: func(ex *bulk.Execution) {
			if ex.Status != last { // a record per state, not per read
				last = ex.Status
				cfg.log.Info("execution", "status", ex.Status, "received", ex.InputCount)
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for execution %s: %w", ack.ExecutionID, err)
	}
	return ex, nil
}

// matchRefused marks the rows the service refused with its reason, and
// returns the refusals it found no row for. A refused row is found by its
// key, or, when it has none, by its values.
func matchRefused(errs []bulk.RowError, header []string, rows []*opportunity) (unmatched []bulk.RowError) {
	for _, e := range errs {
		i := slices.IndexFunc(rows, func(r *opportunity) bool {
			return r.refused == "" && (e.ID != "" && r.key == e.ID || e.ID == "" && r.key == "" && sameValues(e.Row, header, r.values))
		})
		if i < 0 {
			unmatched = append(unmatched, e)
			continue
		}
		rows[i].refused = e.Message
	}
	return unmatched
}

// sameValues reports whether the service's copy of a row holds values.
func sameValues(row map[string]any, header, values []string) bool {
	for col, v := range row {
		if i := slices.Index(header, col); i < 0 || fmt.Sprint(v) != values[i] {
			return false
		}
	}
	return len(row) > 0
}

// writeRefused writes the refused rows, in the order of the input, with
// their reasons in a last column, to name, and returns how many; with none
// it removes a file left by an earlier run. The file is written whole or
// not at all, never through a link at name (ownfile.CreateOutput).
func writeRefused(name string, header []string, rows []*opportunity) (int, error) {
	var refused [][]string
	for _, r := range rows {
		if r.refused != "" {
			refused = append(refused, append(slices.Clone(r.values), r.refused))
		}
	}
	if len(refused) == 0 {
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, err
		}
		return 0, nil
	}
	f, err := ownfile.CreateOutput(name, true)
	if err != nil {
		return 0, err
	}
	defer f.Abort()
	w := csv.NewWriter(f)
	w.Write(append(slices.Clone(header), reasonColumn))
	w.WriteAll(refused)
	if err := w.Error(); err != nil {
		return 0, err
	}
	return len(refused), f.Commit()
}
