package main

import (
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)

// TestCommandLineIsContractChecked: the fake the command line's tests
// talk to checks every exchange against the contract (newFake), and the
// command's requests are recognised as the SDK's: a request outside the
// contract (here a base URL with a path the service does not publish) is
// a violation, while a published command is none.
func TestCommandLineIsContractChecked(t *testing.T) {
	t.Parallel()
	rec := &mocktest.Failures{TB: t}
	srv := newFake(rec, fake.WithDemoData())
	defer srv.Close()
	c := newCLI(srv)
	c.must(t, "reports", "list")
	if got := rec.Errors(); len(got) != 0 {
		t.Fatalf("reports list broke the contract: %q", got)
	}
	c.env["PARTNER_BASE_URL"] = srv.URL + "/unpublished"
	c.run(t, "reports", "list")
	got := rec.Errors()
	if len(got) == 0 || !strings.Contains(got[0], "/unpublished/") {
		t.Fatalf("a request outside the contract was not reported: %q", got)
	}
}
