package mocktest

import (
	"testing"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
)

// FakeClient starts a fake.Server with opts, closed when the test ends,
// and returns a client of it with the fake's default client credentials
// and clientOpts, and the server.
func FakeClient(t testing.TB, opts []fake.Option, clientOpts ...partner.Option) (*partner.Client, *fake.Server) {
	t.Helper()
	srv := fake.NewServer(opts...)
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
