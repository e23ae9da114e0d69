package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestQuickstart runs the whole walk-through against the embedded fake.
func TestQuickstart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out, func(string) string { return "" }); err != nil {
		t.Fatalf("quickstart failed: %v\noutput:\n%s", err, out.String())
	}
	for _, want := range []string{"auth: got a Bearer token", "auth: invalidated the access token",
		"scim: provisioned user quickstart-", "scim: suspended quickstart-", "scim: listed 1 user(s) with filter userName eq", "users: ada.lovelace@example.com holds role [partner_admin]",
		"bulk: execution completed, 4 records received", "bulk: 4 received, 3 loaded, 1 failed, 0 skipped", `bulk: error in record "": Missing value of key field`,
		"reports: exported report 102 through a view as CSV, 25 rows", "reports:   Partner ID,Partner,Region,Tier,Active", "reports: chart \"Partners by region\"",
		"events: received an update of \"Acme renewal\": partner_portal.integration_status = SCHEDULED", "events: unsubscribed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
