package partner_test

import (
	"errors"
	"os"
	"testing"

	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/doctor"
	"github.com/partnerapi/partner-go/fake"
)

// TestStagingAnswersAsTheFake is README's test against a staging
// deployment, word for word (TestReadmeTestFunctionsRun); it skips
// without one. TestReadmeStagingTestAgainstTheFake runs it.
func TestStagingAnswersAsTheFake(t *testing.T) {
	conn, err := deployment.FromEnv(os.Getenv) // PARTNER_BASE_URL, PARTNER_PORTAL_WORD, ...
	if errors.Is(err, deployment.ErrNotSet) {
		t.Skip("no staging deployment configured")
	}
	if err != nil {
		t.Fatal(err)
	}
	r, err := doctor.Run(t.Context(), doctor.Config{Connection: conn})
	if err != nil {
		t.Fatal(err)
	}
	if r.Diverged() {
		t.Fatalf("staging answers otherwise than the fake our tests use:\n%s", r)
	}
}

// TestReadmeStagingTestAgainstTheFake runs README's staging test with a
// fake of the README's portal word as the deployment, where it passes.
// Not parallel: it sets the process's variables.
func TestReadmeStagingTestAgainstTheFake(t *testing.T) {
	srv := fake.NewServer(fake.WithDemoData(), fake.WithWords(deployment.Words{PortalWord: "acme_portal"}))
	defer srv.Close()
	t.Setenv("PARTNER_BASE_URL", srv.URL)
	t.Setenv("PARTNER_CLIENT_ID", fake.DefaultClientID)
	t.Setenv("PARTNER_CLIENT_SECRET", fake.DefaultClientSecret)
	t.Setenv("PARTNER_PORTAL_WORD", "acme_portal")
	TestStagingAnswersAsTheFake(t)
}
