package repocheck

import (
	"os/exec"
	"strings"
	"testing"
)

// TestGoDocFindsTheSDK: the README's go doc command prints the SDK's New
// from a directory of the module other than the root, as in a user's
// module: no other package's import path ends in partner-go.
func TestGoDocFindsTheSDK(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs go doc")
	}
	// go test puts its own Go's bin first in PATH.
	cmd := exec.Command("go", "doc", "partner-go.New")
	cmd.Dir = "bulk"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go doc partner-go.New: %v\n%s", err, out)
	}
	for _, want := range []string{`package partner // import "github.com/partnerapi/partner-go"`, "func New(opts ...Option) (*Client, error)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("go doc partner-go.New printed\n%s\nwant a line %q", out, want)
		}
	}
}
