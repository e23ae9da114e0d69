package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/partnerapi/partner-go/fake"
)

// violations is a testing.TB that records the errors reported to it
// instead of failing the test.
type violations struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (v *violations) Errorf(format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.errs = append(v.errs, fmt.Sprintf(format, args...))
}

func (v *violations) all() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.errs...)
}

// TestCommandLineIsContractChecked: the fake the command line's tests
// talk to checks every exchange against the contract (newFake), and the
// command's requests are recognised as the SDK's: a request outside the
// contract (here a base URL with a path the service does not publish) is
// a violation, while a published command is none.
func TestCommandLineIsContractChecked(t *testing.T) {
	t.Parallel()
	rec := &violations{TB: t}
	srv := newFake(rec, fake.WithDemoData())
	defer srv.Close()
	c := newCLI(srv)
	c.must(t, "reports", "list")
	if got := rec.all(); len(got) != 0 {
		t.Fatalf("reports list broke the contract: %q", got)
	}
	c.env["PARTNER_BASE_URL"] = srv.URL + "/unpublished"
	c.run(t, "reports", "list")
	got := rec.all()
	if len(got) == 0 || !strings.Contains(got[0], "/unpublished/") {
		t.Fatalf("a request outside the contract was not reported: %q", got)
	}
}
