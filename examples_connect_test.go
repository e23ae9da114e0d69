package partner_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestExampleConnectCopiesAlike: each example program carries its own
// connect.go, so that a team copies one program alone and it runs; the
// copies are one file, and a change to one is made to all (they drift
// otherwise, and a copied program behaves unlike the one beside it).
func TestExampleConnectCopiesAlike(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("examples", "*", "connect.go"))
	if err != nil || len(paths) < 3 {
		t.Fatalf("found %v (%v): want the connect.go of each example program", paths, err)
	}
	first, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths[1:] {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, first) {
			t.Errorf("%s differs from %s: make the same change to every example's connect.go", p, paths[0])
		}
	}
}
