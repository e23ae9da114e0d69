package area

import (
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/core"
)

type registered struct{ t *core.Client }
type unregistered struct{}

func TestNew(t *testing.T) {
	Register(func(tc *core.Client) *registered { return &registered{t: tc} })
	tc := core.New(core.Config{})
	if got := New[registered](tc); got == nil || got.t != tc {
		t.Fatalf("New = %+v, want a service on the given transport", got)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "unregistered") {
			t.Fatalf("New of an unregistered type: recovered %v, want a panic naming it", r)
		}
	}()
	New[unregistered](tc)
}
