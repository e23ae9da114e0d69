package main

import (
	"bytes"
	"errors"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/objects"
)

// quick makes the fake's bulk executions complete at once.
var quick = []fake.Option{fake.WithBulkDelay(0)}

// TestSyncFixAndReload loads the sample into a deployment (a fake named by
// PARTNER_BASE_URL), fixes the refused rows in the file it wrote, as a
// person would, and loads that file: every opportunity is then loaded
// once, onto the objects it names, with its audit status.
func TestSyncFixAndReload(t *testing.T) {
	t.Parallel()
	srv := fake.NewServer(append(quick, fake.WithDemoData())...)
	defer srv.Close()
	env := map[string]string{"PARTNER_BASE_URL": srv.URL,
		"PARTNER_CLIENT_ID": fake.DefaultClientID, "PARTNER_CLIENT_SECRET": fake.DefaultClientSecret,
		"PARTNER_PORTAL_WORD": srv.Connection().Words.PortalWord}
	refused := filepath.Join(t.TempDir(), "refused.csv")
	var out bytes.Buffer
	cfg := config{getenv: func(k string) string { return env[k] }, log: slog.New(slog.DiscardHandler), out: &out,
		refused: refused, integration: demo.OpportunityIntegration, keyField: objects.DefaultOpportunityExternalIDField}
	if err := run(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	if want := "7 rows read; 4 loaded, 0 skipped (unchanged), 3 refused; 2 opportunities mapped to their CRM ids, 3 audit statuses written"; !strings.Contains(out.String(), want) {
		t.Errorf("summary:\n%s\nwant %q", out.String(), want)
	}
	b, err := os.ReadFile(refused)
	if err != nil {
		t.Fatal(err)
	}
	want := `partner_object_id,sales_details.crm_opportunity_id,name,stage,amount,close_date,refused_reason
,CRM-1004,Hooli migration,qualification,lots,2026-07-15,"invalid value for field ""amount"": ""lots"" is not a number"
opp-demo-0003,,Initech pilot,closed,7500,2026-01-15,"Missing value of key field ""sales_details.crm_opportunity_id"""
,CRM-1006,Blue Harbor upgrade,proposal,15000,next quarter,"invalid value for field ""close_date"": ""next quarter"" is not a date (YYYY-MM-DD)"
`
	if string(b) != want {
		t.Errorf("refused rows:\n%s\nwant\n%s", b, want)
	}
	checkAudit(t, srv, demo.Opportunity1, objects.StatusLinked)
	checkAudit(t, srv, demo.Opportunity3, objects.StatusUpdateFailed)

	// A person fixes the three rows and loads the file as it is.
	fixed := strings.NewReplacer("lots", "31000", "opp-demo-0003,,", "opp-demo-0003,CRM-1005,", "next quarter", "2026-10-01").Replace(string(b))
	os.WriteFile(refused, []byte(fixed), 0o644)
	out.Reset()
	cfg.in = refused
	if err := run(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	if want := "3 rows read; 3 loaded, 0 skipped (unchanged), 0 refused; 1 opportunities mapped to their CRM ids, 1 audit statuses written"; !strings.Contains(out.String(), want) {
		t.Errorf("summary of the reload:\n%s\nwant %q", out.String(), want)
	}
	if _, err := os.Stat(refused); err == nil {
		t.Error("the file of refused rows is left though none was refused")
	}
	checkAudit(t, srv, demo.Opportunity3, objects.StatusLinked)

	// Each CRM id is on one opportunity; those the CSV named by id were
	// updated, not made again.
	byKey := map[string][]string{}
	for _, o := range srv.Objects("opportunity") {
		if k, ok := o.Field(objects.DefaultOpportunityExternalIDField); ok {
			byKey[k.(string)] = append(byKey[k.(string)], o.ID)
		}
	}
	for _, k := range []string{"CRM-1001", "CRM-1002", "CRM-1003", "CRM-1004", "CRM-1005", "CRM-1006", "CRM-1007"} {
		if len(byKey[k]) != 1 {
			t.Errorf("%s is on %v, want one opportunity", k, byKey[k])
		}
	}
	if got := byKey["CRM-1005"]; len(got) != 1 || got[0] != demo.Opportunity3 {
		t.Errorf("CRM-1005 is on %v, want %s", got, demo.Opportunity3)
	}
	if o, _ := srv.Object(demo.Opportunity1); o.Fields["stage"] != "negotiation" {
		t.Errorf("%s has stage %v, want the CRM's negotiation", demo.Opportunity1, o.Fields["stage"])
	}
}

func checkAudit(t *testing.T, srv *fake.Server, id string, want objects.AuditStatus) {
	t.Helper()
	o, _ := srv.Object(id)
	if v, _ := o.Field(string(objects.FieldIntegrationStatus)); v != string(want) {
		t.Errorf("%s: audit status %v, want %s", id, v, want)
	}
}

// TestEmbeddedFake: with no PARTNER_* variables it loads the sample into
// the embedded fake.
func TestEmbeddedFake(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	cfg := config{getenv: func(string) string { return "" }, log: slog.New(slog.DiscardHandler), out: &out, fakeOpts: quick,
		refused: filepath.Join(t.TempDir(), "refused.csv"), keyField: objects.DefaultOpportunityExternalIDField}
	if err := run(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "7 rows read; 4 loaded") || !strings.Contains(out.String(), "fix them and load that file") {
		t.Errorf("output:\n%s", out.String())
	}
}

// TestBadInput: a CSV that cannot be loaded is refused before anything is
// sent.
func TestBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for content, want := range map[string]string{
		"name,stage\nAcme,won\n":                         "the CSV has no column sales_details.crm_opportunity_id",
		"sales_details.crm_opportunity_id,name\n":        "no rows under the header",
		"sales_details.crm_opportunity_id,name\nX,a,b\n": "wrong number of fields",
	} {
		in := filepath.Join(dir, "in.csv")
		os.WriteFile(in, []byte(content), 0o644)
		cfg := config{getenv: func(k string) string { return map[string]string{"PARTNER_BASE_URL": "https://api.example.com"}[k] },
			log: slog.New(slog.DiscardHandler), out: &bytes.Buffer{}, in: in, keyField: objects.DefaultOpportunityExternalIDField}
		if err := run(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want it to say %q", content, err, want)
		}
	}
}

// TestRefusedFileNotThroughALink: a link planted at the refused-rows
// file's name is replaced by the file, never written through: the file it
// pointed to is untouched, and nothing else is left in the directory.
func TestRefusedFileNotThroughALink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "precious")
	os.WriteFile(victim, []byte("keep me\n"), 0o644)
	refused := filepath.Join(dir, "refused.csv")
	if err := os.Symlink(victim, refused); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	cfg := config{getenv: func(string) string { return "" }, log: slog.New(slog.DiscardHandler), out: &bytes.Buffer{}, fakeOpts: quick,
		refused: refused, keyField: objects.DefaultOpportunityExternalIDField}
	if err := run(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me\n" {
		t.Errorf("the file the planted link pointed to now holds %q", b)
	}
	if fi, err := os.Lstat(refused); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("%s is not a regular file: %v", refused, err)
	}
	if b, _ := os.ReadFile(refused); !strings.HasPrefix(string(b), "partner_object_id,") || strings.Count(string(b), "\n") != 4 {
		t.Errorf("refused rows:\n%s", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left in the directory: %v", entries)
	}
}

// TestUsage: -h prints the flags and the settings the program reads, and
// is not an error of the command line (main exits 0 on flag.ErrHelp).
func TestUsage(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	var cfg config
	if err := parseFlags(&cfg, []string{"-h"}, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("parseFlags(-h) = %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"Usage: crm-sync", "-in", "-refused", "-integration", "-key", "PARTNER_BASE_URL",
		"PARTNER_CLIENT_SECRET", "PARTNER_PORTAL_WORD", "PARTNER_SUBSCRIPTION_KEY", "Exit status"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, stderr.String())
		}
	}
	stderr.Reset()
	if err := parseFlags(&cfg, []string{"extra"}, &stderr); err == nil || !strings.Contains(stderr.String(), `unexpected argument "extra"`) {
		t.Errorf("an extra argument: %v, stderr %q", err, stderr.String())
	}
}
