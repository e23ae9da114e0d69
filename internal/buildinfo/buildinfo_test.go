package buildinfo

import (
	"runtime"
	"strings"
	"testing"
)

func TestLine(t *testing.T) {
	t.Parallel()
	// A test binary's main module is the test's, not stamped with a
	// version: the SDK's version stands in.
	want := "partnerfake v" + SDK + " (" + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"
	if got := Line("partnerfake"); got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
	if !strings.HasPrefix(Module(), "v") {
		t.Errorf("Module = %q, want a v-prefixed version", Module())
	}
}
