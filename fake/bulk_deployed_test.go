package fake

import (
	"net/http"
	"net/url"
	"testing"
)

// TestBulkStatusMisspelledAndDefaults checks the status options of the
// fake: the deployed spelling succcess_count instead of success_count, and
// defaults other than the fake's own.
func TestBulkStatusMisspelledAndDefaults(t *testing.T) {
	e := newBulkEnv(t, WithMisspelledSuccessCount(), WithBulkStatusDefaults(true, 5))
	st, ack := e.load(opps(), "text/csv", oppCSV)
	if st != http.StatusOK {
		t.Fatalf("load: %d %v", st, ack)
	}
	exID := ack["execution_id"].(string)
	e.clock.Advance(DefaultBulkDelay)
	st, body := e.status(DemoOpportunityIntegration, exID, nil)
	if st != http.StatusOK {
		t.Fatalf("status: %d %v", st, body)
	}
	if _, ok := body["success_count"]; ok || body["succcess_count"] != 2.0 {
		t.Errorf("counts = success_count %v, succcess_count %v", body["success_count"], body["succcess_count"])
	}
	if body["include_errors"] != true || body["max_errors"] != 5.0 || len(body["errors"].([]any)) != 2 {
		t.Errorf("defaults: include_errors %v, max_errors %v, errors %v", body["include_errors"], body["max_errors"], body["errors"])
	}
	_, body = e.status(DemoOpportunityIntegration, exID, url.Values{"include_errors": {"false"}})
	if body["include_errors"] != false || body["errors"] != nil {
		t.Errorf("explicit false: %v", body)
	}

	plain := newBulkEnv(t)
	_, ack = plain.load(opps(), "text/csv", oppCSV)
	plain.clock.Advance(DefaultBulkDelay)
	_, body = plain.status(DemoOpportunityIntegration, ack["execution_id"].(string), nil)
	if _, ok := body["succcess_count"]; ok || body["success_count"] != 2.0 || body["include_errors"] != false || body["max_errors"] != 10.0 {
		t.Errorf("default fake: %v", body)
	}
}
