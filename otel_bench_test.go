package partner_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)

// BenchmarkGetTraced: SCIM.Get as scim's BenchmarkGet (the same canned
// server and answer), with the default (global, no-op) providers beside
// recording ones: an SDK tracer provider that samples every span into a
// batch processor with an exporter that drops them, and an SDK meter
// provider with a manual reader. It lives here, where the test binary
// links the OpenTelemetry SDK anyway, rather than in scim's.
func BenchmarkGetTraced(b *testing.B) {
	user := []byte(strings.ReplaceAll(mocktest.SpecUser, "\n", ""))
	srv := mocktest.CannedServer(func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasPrefix(r.URL.Path, "/api/scim/v2/Users/") || r.Header.Get("Authorization") != "Bearer "+mocktest.AccessToken {
			return false
		}
		w.Header().Set("Content-Type", "application/scim+json")
		w.Write(user)
		return true
	})
	defer srv.Close()
	ctx := context.Background()
	const id = "2819c223-7f76-453a-919d-413861904646"
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	defer tp.Shutdown(ctx)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	for _, v := range []struct {
		name string
		opts []partner.Option
	}{
		{"noop", nil},
		{"recording", []partner.Option{partner.WithTracerProvider(tp), partner.WithMeterProvider(mp)}},
	} {
		c := mocktest.LoopbackClient(b, srv, v.opts...)
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.SCIM.Get(ctx, id); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
