package scim_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	partner "github.com/partnerapi/partner-go"
)

// cannedTransport answers every request in memory: the token endpoint
// with a token, anything else with body.
type cannedTransport struct{ token, body []byte }

func (c cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	b := c.body
	if strings.HasSuffix(r.URL.Path, "/oauth/token") {
		b = c.token
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(b)), ContentLength: int64(len(b)), Request: r}, nil
}

// BenchmarkGetInMemory: SCIM.Get over an in-memory transport, without
// network or server: the SDK's own per-call cost (pipeline, retry hooks,
// telemetry with the default providers, decoding), which a loopback
// benchmark hides in its noise.
func BenchmarkGetInMemory(b *testing.B) {
	hc := &http.Client{Transport: cannedTransport{
		token: []byte(`{"access_token":"at-1","token_type":"Bearer","expires_in":3600}`),
		body:  []byte(strings.ReplaceAll(specUser, "\n", "")),
	}}
	c, err := partner.New(partner.WithBaseURL("https://api.example.com"), partner.WithClientCredentials("id", "secret"),
		partner.WithHTTPClient(hc))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.SCIM.Get(ctx, "2819c223-7f76-453a-919d-413861904646"); err != nil {
			b.Fatal(err)
		}
	}
}
