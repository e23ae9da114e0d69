package partner_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRootAndSCIMLinkNoXNet: a program that imports the root package and
// one area (scim) links neither golang.org/x/net nor golang.org/x/text
// (go list -deps of the two is what such a program links besides the
// runtime and its own code). The copies that net/http vendors
// (vendor/golang.org/x/...) are the standard library's and do not count.
func TestRootAndSCIMLinkNoXNet(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", modulePath, modulePath+"/scim").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for p := range strings.FieldsSeq(string(out)) {
		if strings.HasPrefix(p, "golang.org/x/net/") || strings.HasPrefix(p, "golang.org/x/text/") {
			t.Errorf("a program importing the root package and scim links %s", p)
		}
	}
	if !strings.Contains(string(out), modulePath+"/scim\n") {
		t.Fatalf("go list did not list scim:\n%s", out)
	}
	if _, ok := listed(t)["golang.org/x/net/netutil"]; !ok {
		t.Error("no package of the module depends on golang.org/x/net/netutil: has the check gone stale?")
	}
}
