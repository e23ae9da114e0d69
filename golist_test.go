package partner_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
)

// modulePath is the import path of the module under test.
const modulePath = "github.com/partnerapi/partner-go"

// listedPackage is what go list says of a package: its name and the file
// of its export data.
type listedPackage struct{ name, export string }

// listing is every package the module's packages (./..., tests aside)
// depend on, and the standard packages the README's snippets import,
// as `go list -export -deps` says, once per test binary. It builds the
// export data (from the build cache when warm) with the go command of the
// toolchain running the test: go test puts that toolchain's bin
// directory first on the test's PATH.
var listing = sync.OnceValues(func() (map[string]listedPackage, error) {
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{.Name}}", "./..."}
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
	pkgs := map[string]listedPackage{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if f := strings.Split(sc.Text(), "\t"); len(f) == 3 {
			pkgs[f[0]] = listedPackage{name: f[2], export: f[1]}
		}
	}
	return pkgs, sc.Err()
})

// listed returns the listing, failing t when go list did.
func listed(t *testing.T) map[string]listedPackage {
	t.Helper()
	pkgs, err := listing()
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// exportImporter imports the packages of pkgs from their export data.
func exportImporter(fset *token.FileSet, pkgs map[string]listedPackage) types.Importer {
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		p, ok := pkgs[path]
		if !ok || p.export == "" {
			return nil, fmt.Errorf("package %s is neither a dependency of the module nor a standard package the README imports", path)
		}
		return os.Open(p.export)
	})
}
