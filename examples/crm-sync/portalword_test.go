package main

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/objects"
)

// TestDeploymentWithoutPortalWord: toward a deployment that named no
// portal word, crm-sync does not write the interface's stand-in audit
// field, which a deployment refuses: it says to set PARTNER_PORTAL_WORD
// before anything is sent.
func TestDeploymentWithoutPortalWord(t *testing.T) {
	t.Parallel()
	srv := fake.NewServer(append(quick, fake.WithDemoData())...)
	defer srv.Close()
	env := map[string]string{"PARTNER_BASE_URL": srv.URL,
		"PARTNER_CLIENT_ID": fake.DefaultClientID, "PARTNER_CLIENT_SECRET": fake.DefaultClientSecret}
	cfg := config{getenv: func(k string) string { return env[k] }, log: slog.New(slog.DiscardHandler), out: &bytes.Buffer{},
		refused: filepath.Join(t.TempDir(), "refused.csv"), integration: demo.OpportunityIntegration, keyField: objects.DefaultOpportunityExternalIDField}
	err := run(t.Context(), cfg)
	if err == nil || !strings.Contains(err.Error(), "PARTNER_PORTAL_WORD is not set") {
		t.Fatalf("run = %v, want it to say to set PARTNER_PORTAL_WORD", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent before the refusal, want none", n)
	}
}
