//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReportsExportHonoursUmask: under umask 077 a new export is 0600, as
// any file the operator creates would be, not world-readable. It does not
// call t.Parallel: the umask is the process's, and the package's parallel
// tests start only once the tests that are not parallel have ended.
func TestReportsExportHonoursUmask(t *testing.T) {
	srv, _ := reportServer(t)
	c := newCLI(srv)
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	out := filepath.Join(t.TempDir(), "deals.csv")
	c.must(t, "reports", "export", "7", "-o", out)
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode under umask 077: %v %v, want 0600", fi.Mode(), err)
	}
}
