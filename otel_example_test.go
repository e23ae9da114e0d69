package partner_test

import (
	"context"
	"fmt"
	"log"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
)

// A client sends its spans and metrics to the providers it is given (a
// real program passes providers with exporters, or sets the global ones).
func ExampleWithTracerProvider() {
	srv := fake.NewServer()
	defer srv.Close()
	id, err := srv.AddUser(fake.User{UserName: "ada@example.com"})
	if err != nil {
		log.Fatal(err)
	}
	spans := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader()
	c, err := partner.New(
		partner.WithBaseURL(srv.URL),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret),
		partner.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))),
		partner.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))),
	)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.SCIM.Get(ctx, id); err != nil {
		log.Fatal(err)
	}
	for _, s := range spans.Ended() {
		fmt.Println(s.Name())
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == "http.client.request.duration" {
			fmt.Println(m.Name, m.Unit)
		}
	}
	// Output:
	// POST /oauth/token
	// partner.oauth.Request
	// partner.oauth.Token
	// GET /api/scim/v2/Users/{user_id}
	// partner.scim.Get
	// http.client.request.duration s
}
