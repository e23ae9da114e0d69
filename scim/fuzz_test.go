package scim_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/partnerapi/partner-go/scim"
)

// FuzzUserJSON checks that any user the SDK decodes encodes again, and
// that encoding is stable: decode(encode(u)) encodes to the same bytes.
func FuzzUserJSON(f *testing.F) {
	for _, s := range []string{
		specUser,
		`{"userName":"a","title":"x","urn:example:ext":{"k":[1,2]}}`,
		`{"USERNAME":"a","Active":false,"meta":{"created":"2026-01-02T03:04:05+01:00"}}`,
		`{"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"d","manager":{"value":"m"}}}`,
		`null`, `{}`, `[]`, `{"userName":5}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var u scim.User
		if json.Unmarshal(in, &u) != nil {
			return
		}
		b1, err := json.Marshal(u)
		if err != nil {
			t.Fatalf("decoded %q but cannot encode it: %v", in, err)
		}
		var again scim.User
		if err := json.Unmarshal(b1, &again); err != nil {
			t.Fatalf("cannot decode our own encoding %s: %v", b1, err)
		}
		b2, err := json.Marshal(again)
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("unstable encoding:\n%s\n%s (%v)", b1, b2, err)
		}
	})
}
