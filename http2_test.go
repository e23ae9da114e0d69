package partner_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/internal/testkit/h2fault"
	"github.com/partnerapi/partner-go/reports"
)

// TestHTTP2ResetsReplayNothing is the case: against an HTTP/2
// server that resets every stream with PROTOCOL_ERROR after reading the
// request, one Bulk.Load is processed once and returns an error marked
// outcome unknown, and one Reports.List stops after the retry policy's
// attempts (HTTP/2 clients take such a reset as retryable and would
// otherwise send both again without end).
func TestHTTP2ResetsReplayNothing(t *testing.T) {
	s := h2fault.New(t, h2fault.Always(h2fault.ResetProtocol))
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: s.Roots}
	hc := &http.Client{Transport: tr}
	t.Cleanup(hc.CloseIdleConnections)
	c, err := partner.New(partner.WithBaseURL(s.URL), partner.WithHTTPClient(hc),
		partner.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "tok"})),
		partner.WithMaxRetries(2), partner.WithRetryWait(time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	_, err = c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: "int-1"}, strings.NewReader("id,name\n1,a\n"))
	if !partner.IsOutcomeUnknown(err) {
		t.Errorf("Bulk.Load: %v, want an error marked outcome unknown", err)
	}
	if n := s.Processed.Load(); n != 1 {
		t.Errorf("the load was processed %d times, want once", n)
	}

	s.Processed.Store(0)
	for _, err := range c.Reports.List(ctx, reports.ListParams{}) {
		if err == nil {
			t.Error("Reports.List gave a report from a server that resets every stream")
		}
		break
	}
	if n := s.Processed.Load(); n != 3 {
		t.Errorf("Reports.List sent %d requests, want 3 (the first attempt and 2 retries)", n)
	}
}
