package contract

import "testing"

// PendingCorrections lists the places where the code breaks the contract
// while a correction of it is under way, by Violation.Key (an
// operationId, or "METHOD /path" of a request that matches no
// operation), with what corrects it. A violation listed here is logged,
// not failed; the coverage and route tests skip the entries the same way.
// Empty it once the corrections are merged: the tests then hold every
// entry again.
var PendingCorrections = map[string]string{
	// Correction 1: attachment loads post to the published routes.
	"POST /bulk/v1/bulkload/file":             "correction 1: LoadAttachment posts multipart to /bulk/v1/bulkload; the fake answers the connector-only path 404",
	"POST /bulk/v1/bulkload_opportunity/file": "correction 1: LoadOpportunitiesAttachment posts multipart to /bulk/v1/bulkload_opportunity; the fake answers the connector-only path 404",
	// Correction 3: the integration read is the object event schema.
	"GetObjectEventSchema": "correction 3: Events.Integration becomes the object event schema read; the fake answers {\"schema\": {...}}",
	// The fake answers only what the service publishes (SCIM reads carry
	// RFC 7643's meta members; the SDK's update echoes what it read).
	"createUser":   "the fake answers the published members: SCIM meta's created, lastModified, location, version only with a fake option",
	"getUser":      "the fake answers the published members: SCIM meta's created, lastModified, location, version only with a fake option",
	"updateUser":   "the fake answers the published members: SCIM meta's created, lastModified, location, version only with a fake option",
	"searchViaGet": "the fake answers the published members: SCIM meta's members and itemsPerPage only with a fake option",
	// Correction 4: view status carries only viewStatus.
	"checkReportViewStatus": "correction 4: the fake's view status answers only viewStatus",
	// Correction 7: a signed upload may be sent with PUT.
	"fake-upload-put": "correction 7: the fake's stand-in storage takes PUT as a URL signed for it",
}

// Pending returns the correction under way for key, or "".
func Pending(key string) string { return PendingCorrections[key] }

// Fail returns a report function for Middleware that fails t on a
// violation, or only logs it when PendingCorrections lists its key.
func Fail(t testing.TB) func(*Violation) {
	return func(v *Violation) {
		if why := Pending(v.Key); why != "" {
			t.Logf("%v (pending: %s)", v, why)
			return
		}
		t.Errorf("%v", v)
	}
}
