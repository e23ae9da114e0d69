package repocheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// modulePath is the import path of the module under test.
const modulePath = "github.com/partnerapi/partner-go"

// TestMain runs the checks from the module's root, where the paths they
// name (README.md, api/v1.txt, ./...) are.
func TestMain(m *testing.M) {
	root, err := moduleRoot()
	if err == nil {
		err = os.Chdir(root)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "repocheck:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// moduleRoot is the nearest directory up from the working directory whose
// go.mod declares modulePath.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module "+modulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of " + modulePath + " above the working directory")
		}
		dir = parent
	}
}

// listedPackage is what go list says of a package.
type listedPackage struct {
	ImportPath string
	Name       string
	Export     string   // the file of its export data
	Imports    []string // the packages its non-test files import
	Deps       []string // every package it depends on, transitively
	DepOnly    bool     // listed only as a dependency of the packages asked for
}

// listing is every package the module's packages (./..., tests aside)
// depend on, and the standard packages the README's snippets import, as
// `go list -export -deps` says, once per test binary: every check of this
// package reads it. It builds the export data (from the build cache when
// warm) with the go command of the toolchain running the test: go test
// puts that toolchain's bin directory first on the test's PATH.
var listing = sync.OnceValues(func() (map[string]*listedPackage, error) {
	args := []string{"list", "-export", "-deps", "-json=ImportPath,Name,Export,Imports,Deps,DepOnly", "./..."}
	for _, p := range slices.Sorted(maps.Values(snippetPackages)) {
		if !strings.HasPrefix(p, modulePath) {
			args = append(args, p)
		}
	}
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %v\n%s", err, stderr.Bytes())
	}
	pkgs := map[string]*listedPackage{}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		p := new(listedPackage)
		if err := dec.Decode(p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list -json: %v", err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs, nil
})

// listed returns the listing, failing t when go list did.
func listed(t *testing.T) map[string]*listedPackage {
	t.Helper()
	pkgs, err := listing()
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// deps is the packages a program importing paths links (besides the
// runtime): paths and their dependencies, as `go list -deps paths` says.
func deps(t *testing.T, paths ...string) map[string]bool {
	t.Helper()
	pkgs := listed(t)
	out := map[string]bool{}
	for _, p := range paths {
		lp, ok := pkgs[p]
		if !ok {
			t.Fatalf("go list did not list %s", p)
		}
		out[p] = true
		for _, d := range lp.Deps {
			out[d] = true
		}
	}
	return out
}

// exportImporter imports the packages of pkgs from their export data.
func exportImporter(fset *token.FileSet, pkgs map[string]*listedPackage) types.Importer {
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		p, ok := pkgs[path]
		if !ok || p.Export == "" {
			return nil, fmt.Errorf("package %s is neither a dependency of the module nor a standard package the README imports", path)
		}
		return os.Open(p.Export)
	})
}
