package contract_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/api"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/contract"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
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

// TestContractCheckFollowsTheFakesOptions: ContractCheck learns from the
// fake it wraps which options that add members are on. A view status
// answer carrying viewId, a member only WithViewStatusDetail adds, breaks
// the contract for a fake with WithDemoData only or with another such
// option, and keeps it for a fake with WithViewStatusDetail on.
func TestContractCheckFollowsTheFakesOptions(t *testing.T) {
	// answer stands for a fake that answers the member whatever its
	// options.
	answer := func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"viewStatus": "RUNNING", "viewId": 453}`)
		})
	}
	for _, tc := range []struct {
		name  string
		opts  []fake.Option
		fails bool
	}{
		{"demo data only", []fake.Option{fake.WithDemoData()}, true},
		{"another option", []fake.Option{fake.WithDemoData(), fake.WithSCIMFullResources()}, true},
		{"its option", []fake.Option{fake.WithDemoData(), fake.WithViewStatusDetail()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &mocktest.Failures{TB: t}
			f := fake.New(append(tc.opts, mocktest.ContractCheck(rec), fake.WithMiddleware(answer))...)
			defer f.Close()
			req := httptest.NewRequest("GET", "/report/v1/view/453/status", nil)
			req.Header.Set("Authorization", "Bearer t")
			f.ServeHTTP(httptest.NewRecorder(), req)
			switch errs := rec.Errors(); {
			case tc.fails && (len(errs) != 1 || !strings.Contains(errs[0], "viewId")):
				t.Errorf("failures %q, want one naming viewId", errs)
			case !tc.fails && len(errs) > 0:
				t.Errorf("failures %q, want none", errs)
			}
		})
	}
}
