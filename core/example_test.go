package core_test

import (
	"fmt"

	"github.com/partnerapi/partner-go/core"
)

// A Route states a request's path once: the template, which names the
// operation in spans and metrics, and its values, each escaped as one
// path segment.
func ExamplePathOf() {
	rt := core.PathOf("/app/v1/object/{object_id}/audit", "a/b")
	fmt.Println(rt.Template())
	fmt.Println(rt)
	fmt.Println(core.PathOf("/report/v1/{reportId}/data", int64(42)))
	// Output:
	// /app/v1/object/{object_id}/audit
	// /app/v1/object/a%2Fb/audit
	// /report/v1/42/data
}
