package mocktest

import (
	"testing"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/contract"
)

// FakeClient starts a fake.Server with opts, closed when the test ends,
// and returns a client of it with the fake's default client credentials
// and clientOpts, and the server.
//
// The fake is wrapped in ContractCheck: a request of the SDK or an
// answer of the fake that breaks api/openapi.yaml fails the test. A fake
// built without opts is checked in contract.Strict mode: its answers
// carry only the members the sources show.
func FakeClient(t testing.TB, opts []fake.Option, clientOpts ...partner.Option) (*partner.Client, *fake.Server) {
	t.Helper()
	mode := contract.Lenient
	if len(opts) == 0 {
		mode = contract.Strict
	}
	srv := fake.NewServer(append(opts, ContractCheck(t, mode))...)
	t.Cleanup(srv.Close)
	c, err := partner.New(append([]partner.Option{
		partner.WithBaseURL(srv.URL),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret),
	}, clientOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

// ContractCheck is a fake option that checks every exchange against the
// contract (contract.Checker.Middleware) in mode m (contract.Lenient
// unless given; contract.Strict for a fake built with no other option)
// and fails t on a violation, unless contract.PendingCorrections lists
// it, which is only logged (contract.Fail).
func ContractCheck(t testing.TB, m ...contract.Mode) fake.Option {
	t.Helper()
	return fake.WithMiddleware(contract.Check(t, m...))
}
