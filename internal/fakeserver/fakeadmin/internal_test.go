package fakeadmin

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake"
)

// TestAdminOpenAPIMatchesRoutes checks that the published OpenAPI document
// describes exactly the admin routes that are served.
func TestAdminOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(adminOpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	var documented, served []string
	for p, ops := range doc.Paths {
		for m := range ops {
			documented = append(documented, strings.ToUpper(m)+" "+p)
		}
	}
	a := New(func() *fake.Fake { return fake.New() })
	defer a.Close()
	for _, rt := range a.routeTable() {
		served = append(served, rt.method+" "+rt.path)
	}
	slices.Sort(documented)
	slices.Sort(served)
	if !slices.Equal(documented, served) {
		t.Fatalf("OpenAPI document:\n%s\nserved:\n%s", strings.Join(documented, "\n"), strings.Join(served, "\n"))
	}
}
