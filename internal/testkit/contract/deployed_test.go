package contract_test

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/partnerapi/partner-go/internal/testkit/contract"
)

// opByID finds an operation of the contract by its operationId.
func opByID(t *testing.T, c *contract.Reference, id string) *openapi3.Operation {
	t.Helper()
	for _, item := range c.Doc().Paths.Map() {
		for _, op := range item.Operations() {
			if op.OperationID == id {
				return op
			}
		}
	}
	t.Fatalf("no operation %s", id)
	return nil
}

// TestEnvironmentHeaderWhereTheExportListsIt: the gateway export lists the
// environment header on the token request (authentication: post-token)
// and on the event schema (events: GetEventSchema); the contract lists it
// (in the interface's word) on both.
func TestEnvironmentHeaderWhereTheExportListsIt(t *testing.T) {
	c, err := contract.LoadReference()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"post-token", "GetEventSchema"} {
		op := opByID(t, c, id)
		if op.Parameters.GetByInAndName("header", "x-svc-env") == nil {
			t.Errorf("%s: no x-svc-env header parameter", id)
		}
	}
}

// TestUnpublishedAnswersAreMarked: the four answers the gateway export
// gives no body for (report: getChartMetaData, getReportMetadata,
// getReportDataSchema, getReportViewMetadata) are the fake's own shapes:
// their 200 and its schema are marked x-fake-extension.
func TestUnpublishedAnswersAreMarked(t *testing.T) {
	c, err := contract.LoadReference()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"getChartMetaData", "getReportMetadata", "getReportDataSchema", "getReportViewMetadata"} {
		ok := opByID(t, c, id).Responses.Status(200)
		if ok == nil || ok.Value.Extensions["x-fake-extension"] != true {
			t.Errorf("%s: 200 not marked x-fake-extension", id)
			continue
		}
		mt := ok.Value.Content.Get("application/json")
		if mt == nil || mt.Schema == nil || mt.Schema.Value.Extensions["x-fake-extension"] != true {
			t.Errorf("%s: the 200's schema is not marked x-fake-extension", id)
		}
	}
}
