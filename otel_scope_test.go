package partner_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	partner "github.com/partnerapi/partner-go"
)

// TestTelemetryScope: the SDK's spans and metrics carry its
// instrumentation scope, with the SDK's version and the schema URL of
// the semantic conventions their HTTP attributes follow.
func TestTelemetryScope(t *testing.T) {
	te := newTelemetry(t)
	c, _, id := fakeWithUser(t, te)
	if _, err := c.SCIM.Get(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	const name = "github.com/partnerapi/partner-go"
	spans := te.sr.Ended()
	if len(spans) == 0 {
		t.Fatal("no span")
	}
	for _, s := range spans {
		if sc := s.InstrumentationScope(); sc.Name != name || sc.Version != partner.Version || sc.SchemaURL != semconv.SchemaURL {
			t.Errorf("span %s: scope %+v, want %s %s %s", s.Name(), sc, name, partner.Version, semconv.SchemaURL)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := te.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if len(rm.ScopeMetrics) == 0 {
		t.Fatal("no metrics")
	}
	for _, sm := range rm.ScopeMetrics {
		if sc := sm.Scope; sc.Name != name || sc.Version != partner.Version || sc.SchemaURL != semconv.SchemaURL {
			t.Errorf("metrics scope %+v, want %s %s %s", sc, name, partner.Version, semconv.SchemaURL)
		}
	}
}
