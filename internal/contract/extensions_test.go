package contract_test

import (
	"regexp"
	"slices"
	"testing"

	"github.com/partnerapi/partner-go/api"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/contract"
)

// TestFakeExtensionsNameWhatTheContractMarks: Fake.Extensions names none
// by default, and with every option that adds members on names exactly
// the options api/openapi.yaml marks with x-fake-extension, each of which
// Load accepts; so a member a new option adds cannot be marked in the
// contract without the fake saying when it is on.
func TestFakeExtensionsNameWhatTheContractMarks(t *testing.T) {
	plain := fake.New()
	defer plain.Close()
	if got := plain.Extensions(); len(got) != 0 {
		t.Errorf("default fake: Extensions() = %v, want none", got)
	}
	var marked []string
	for _, m := range regexp.MustCompile(`x-fake-extension: *(\w+)`).FindAllSubmatch(api.OpenAPI, -1) {
		if name := string(m[1]); name != "true" && !slices.Contains(marked, name) {
			marked = append(marked, name)
		}
	}
	all := fake.New(fake.WithSCIMFullResources(), fake.WithViewStatusDetail())
	defer all.Close()
	on := all.Extensions()
	if slices.Sort(marked); !slices.Equal(slices.Sorted(slices.Values(on)), marked) {
		t.Errorf("Extensions() = %v, the contract marks %v", on, marked)
	}
	if _, err := contract.Load(on...); err != nil {
		t.Error(err)
	}
}
