package contract

import (
	"fmt"
	"github.com/partnerapi/partner-go/internal/contract"
	"net/http"
	"sync/atomic"
	"testing"
)

// Differential returns a wrapper of a handler that checks every
// exchange it serves with both the Checker and the Reference of the
// contract for a fake with the named options on (Agree), as Middleware
// sees it: the request's body when the handler read it whole, the
// answer as written. It fails t at the test's end when no exchange went
// through it, so that a wrapper in the wrong place cannot pass unseen.
func Differential(t testing.TB, options ...string) func(http.Handler) http.Handler {
	t.Helper()
	c, err := Load(options...)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := LoadReference(options...)
	if err != nil {
		t.Fatal(err)
	}
	var compared atomic.Int64
	t.Cleanup(func() {
		if compared.Load() == 0 {
			t.Error("no exchange went through the differential check")
		}
	})
	return contract.Capture(func(r *http.Request, body []byte, a contract.Answer) {
		compared.Add(1)
		Agree(t, c, ref, r, body, a.Whole, a.Status, a.Header, a.Body)
	})
}

// Agree checks one exchange with c and with ref, and fails t unless they
// agree: the same operation, and on each side a violation from both or
// from neither, of the same Key and Side. The answer is checked when
// answered is true. It returns the Checker's violations of the request
// and of the answer.
func Agree(t testing.TB, c *Checker, ref *Reference, req *http.Request, body []byte, answered bool, status int, header http.Header, answer []byte) (request, response *Violation) {
	t.Helper()
	x, v := c.CheckRequest(req, body)
	rx, rv := ref.CheckRequest(req, body)
	what := req.Method + " " + req.URL.String()
	if (x == nil) != (rx == nil) || x != nil && (x.Operation() != rx.Operation() || x.Template() != rx.Template()) {
		t.Errorf("%s: the checker's operation %v, the reference's %v", what, describe(x), describeRef(rx))
		return v, nil
	}
	disagree(t, what+" request", v, rv)
	if x == nil || !answered {
		return v, nil
	}
	w := x.CheckResponse(status, header, answer)
	disagree(t, fmt.Sprintf("%s answered %d", what, status), w, rx.CheckResponse(status, header, answer))
	return v, w
}

// disagree fails t unless v and rv are the same verdict.
func disagree(t testing.TB, what string, v, rv *Violation) {
	t.Helper()
	switch {
	case v == nil && rv == nil:
	case v == nil || rv == nil || v.Key != rv.Key || v.Side != rv.Side:
		t.Errorf("%s: the checker says %v; the reference (kin-openapi) says %v", what, v, rv)
	}
}

func describe(x *Exchange) string {
	if x == nil {
		return "none"
	}
	return x.Operation() + " " + x.Template()
}

func describeRef(x *RefExchange) string {
	if x == nil {
		return "none"
	}
	return x.Operation() + " " + x.Template()
}

// JSONForm is the embedded JSON form of api/openapi.yaml.
func JSONForm() []byte { return openapiJSON }
