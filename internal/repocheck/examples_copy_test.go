package repocheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/internal/testkit/gosrc"
)

// README says teams copy the programs under examples/ into their own
// module and run them as they are, tests included. The tests below hold
// that promise from outside: each directory is copied into a module of
// its own that requires this module through a replace to the checkout,
// offline, and must pass go vet and go test there.

// copyOutModule writes dir's files (recursively) into a new module
// example.com/<name> in the directory dst (made like dir, see syncTree),
// and returns dst. The module requires this one through a replace to the
// checkout root, and the modules of the other packages dir's files import
// at the checkout's versions (what go mod tidy would list as direct
// requirements), and has the checkout's go.sum. The copies are tested in
// a workspace (vetAndTest), whose module graph is then the SDK's: a copy
// builds offline from the module cache a build of the checkout filled,
// and one that imports a module outside the SDK's graph fails. (In a
// workspace the go command loads the go.mod of every module a workspace
// module requires: a copy that listed all the checkout's requirements
// would need those of modules the checkout's pruned graph never reads,
// such as a dependency's Windows-only one.)
func copyOutModule(t *testing.T, root, dir, name, dst string) string {
	t.Helper()
	modPath, goVersion, requires := checkoutModule(t, root)
	for _, f := range []string{"go.mod", "go.sum", "go.work"} {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			t.Fatalf("%s has a %s of its own: the check writes the one a team's module would have", dir, f)
		}
	}
	if err := syncTree(dir, dst, "go.mod", "go.sum"); err != nil {
		t.Fatal(err)
	}
	direct, err := directRequires(dir, modPath, requires)
	if err != nil {
		t.Fatal(err)
	}
	mod := "module example.com/" + name + "\n\ngo " + goVersion + "\n\n" +
		"require (\n\t" + strings.Join(append([]string{modPath + " v0.0.0"}, direct...), "\n\t") + "\n)\n\n" +
		"replace " + modPath + " => " + root + "\n"
	if err := writeChanged(filepath.Join(dst, "go.mod"), []byte(mod)); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := writeChanged(filepath.Join(dst, "go.sum"), sum); err != nil {
		t.Fatal(err)
	}
	return dst
}

// directRequires returns the requirements ("path version", of requires)
// of the modules that provide the packages the Go files under dir import,
// the standard library's and modPath's aside: each import's module is the
// requirement whose path is the longest prefix of it. An import no
// requirement provides is left to the go command, which refuses it.
func directRequires(dir, modPath string, requires []string) ([]string, error) {
	paths, err := gosrc.GoFiles(dir, nil)
	if err != nil {
		return nil, err
	}
	var direct []string
	for _, p := range paths {
		f, err := gosrc.Parse(p)
		if err != nil {
			return nil, err
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if !strings.Contains(first, ".") || path == modPath || strings.HasPrefix(path, modPath+"/") {
				continue
			}
			best, bestPath := "", ""
			for _, r := range requires {
				m, _, _ := strings.Cut(r, " ")
				if (path == m || strings.HasPrefix(path, m+"/")) && len(m) > len(bestPath) {
					best, bestPath = r, m
				}
			}
			if best != "" && !slices.Contains(direct, best) {
				direct = append(direct, best)
			}
		}
	}
	slices.Sort(direct)
	return direct, nil
}

// checkoutModule reads the checkout's go.mod: its module path, its go
// version and its requirements ("path version" each). A replace or an
// exclude directive fails the test: the copy would have to repeat it.
func checkoutModule(t *testing.T, root string) (modPath, goVersion string, requires []string) {
	t.Helper()
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	inRequire := false
	for line := range strings.Lines(string(gomod)) {
		f := strings.Fields(strings.SplitN(line, "//", 2)[0])
		if inRequire {
			inRequire = len(f) != 1 || f[0] != ")"
			if len(f) == 2 {
				requires = append(requires, f[0]+" "+f[1])
			}
			continue
		}
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "require":
			inRequire = f[1] == "("
			if len(f) == 3 {
				requires = append(requires, f[1]+" "+f[2])
			}
		case "module":
			modPath = f[1]
		case "go":
			goVersion = f[1]
		case "replace", "exclude":
			t.Fatalf("the checkout's go.mod has a %s directive: copy it into the example's module too", f[0])
		}
	}
	if modPath == "" || goVersion == "" {
		t.Fatalf("the checkout's go.mod has no module or go line:\n%s", gomod)
	}
	return modPath, goVersion, requires
}

// syncTree makes dst hold what dir holds, files and directories,
// besides the top-level files named in keep: it writes a file only when
// its bytes differ and removes what dir does not have. A file left alone
// keeps its modification time, which the go command's test cache keys a
// result on when a test opens the file or lists its directory; a copy
// written anew on every run would run its tests every time.
func syncTree(dir, dst string, keep ...string) error {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return writeChanged(to, b)
	})
	if err != nil {
		return err
	}
	// What dst has and dir does not: removed, a directory whole.
	return filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dst, p)
		if err != nil || rel == "." || slices.Contains(keep, rel) {
			return err
		}
		if _, err := os.Lstat(filepath.Join(dir, rel)); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.RemoveAll(p); err != nil {
			return err
		}
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
}

// writeChanged writes b to the file name unless it holds b already.
func writeChanged(name string, b []byte) error {
	if old, err := os.ReadFile(name); err == nil && bytes.Equal(old, b) {
		return nil
	}
	return os.WriteFile(name, b, 0o644)
}

// vetAndTest runs go vet's full set of checks and the tests of the
// modules mods, directories directly under base whose go line says
// goVersion, with one go command (go
// test -vet=all ./<mod>/... for each), offline: no proxy, no checksum
// database. The modules are the workspace of base/go.work, written here:
// each keeps its own go.mod and replace, and one go command loads the
// module graph, which the copies share, and hashes their common
// dependencies once instead of once per copy (a cached run of four
// copies costs the CPU of one). The go.mod of a copy is read-only, as in
// a workspace it must be: it requires what the checkout requires, so a
// copy that imports a module the SDK does not need fails. The copies'
// tests make their temporary directories in base/tmp and the go command
// its work in base/gotmp, directories of their own: the go command's
// test cache keys a result on the directories a test opened, and
// removing a t.TempDir opens its parent, so under a shared one, which
// other programs change all the time, unchanged tests would run again on
// every run. It returns the command's output and error.
func vetAndTest(base, goVersion string, mods ...string) ([]byte, error) {
	work := "go " + goVersion + "\n\nuse (\n"
	args := []string{"test", "-vet=all"}
	for _, m := range mods {
		rel, err := filepath.Rel(base, m)
		if err != nil || strings.ContainsRune(rel, filepath.Separator) || rel == ".." {
			return nil, fmt.Errorf("the copy %s is not directly under %s", m, base)
		}
		work += "\t./" + rel + "\n"
		args = append(args, "./"+rel+"/...")
	}
	if err := writeChanged(filepath.Join(base, "go.work"), []byte(work+")\n")); err != nil {
		return nil, err
	}
	tmp, gotmp := filepath.Join(base, "tmp"), filepath.Join(base, "gotmp")
	for _, d := range []string{tmp, gotmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	var flags []string // the caller's, but -mod=, which a workspace refuses
	for f := range strings.FieldsSeq(os.Getenv("GOFLAGS")) {
		if !strings.HasPrefix(f, "-mod=") {
			flags = append(flags, f)
		}
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = base
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOSUMDB=off", "GOWORK="+filepath.Join(base, "go.work"),
		"TMPDIR="+tmp, "GOTMPDIR="+gotmp, "GOFLAGS="+strings.Join(flags, " "))
	return cmd.CombinedOutput()
}

// copyOutBase returns the directory the examples' copies go to, each in
// a directory of its name: a fixed one per checkout and Go version under
// the user's cache directory, so that the go command's test cache
// answers for copies that have not changed (a run with -count=1 costs
// well under a second for them all, not a build and a test run of
// each), or a temporary one when there is no cache directory to write
// to. What else the fixed one holds is removed. Two runs of this test
// from one checkout at once would share it: run them one after the
// other.
func copyOutBase(t *testing.T, root string, names []string) string {
	cache, err := os.UserCacheDir()
	if err != nil {
		return t.TempDir()
	}
	key := sha256.Sum256([]byte(root + "\x00" + runtime.Version()))
	base := filepath.Join(cache, "partner-go", "examples-copy", hex.EncodeToString(key[:8]))
	if os.MkdirAll(base, 0o755) != nil { // a cache directory this user cannot write
		return t.TempDir()
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if n := e.Name(); !slices.Contains(names, n) && n != "go.work" && n != "tmp" && n != "gotmp" {
			if err := os.RemoveAll(filepath.Join(base, n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return base
}

// checkoutRoot returns the checkout's root (TestMain runs the checks
// from it).
func checkoutRoot(t *testing.T) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// exampleDirs returns the directories directly under root's examples/.
func exampleDirs(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(root, "examples", e.Name()))
		}
	}
	if len(dirs) < 4 {
		t.Fatalf("found %v under examples/: too few to mean anything", dirs)
	}
	return dirs
}

// TestExamplesCopyOut: each directory under examples/, copied into a
// module of its own with a replace to this checkout, passes go vet and go
// test offline: it imports no internal package (a test neither), reads no
// file outside itself, and needs no module the SDK does not.
func TestExamplesCopyOut(t *testing.T) {
	t.Parallel()
	root := checkoutRoot(t)
	dirs := exampleDirs(t, root)
	var names, mods []string
	for _, dir := range dirs {
		names = append(names, filepath.Base(dir))
	}
	base := copyOutBase(t, root, names)
	for i, dir := range dirs {
		mods = append(mods, copyOutModule(t, root, dir, names[i], filepath.Join(base, names[i])))
	}
	_, goVersion, _ := checkoutModule(t, root)
	out, err := vetAndTest(base, goVersion, mods...)
	var failed []string
	for _, name := range names {
		if !regexp.MustCompile(`(?m)^ok\s+example\.com/` + regexp.QuoteMeta(name) + `\s`).Match(out) {
			failed = append(failed, "examples/"+name)
		}
	}
	if err != nil || len(failed) > 0 {
		t.Errorf("%s, each copied into a module of its own, did not pass go test -vet=all (%v):\n%s", strings.Join(failed, ", "), err, out)
	}
}

// TestExamplesCopyOutCatchesInternalImport: the copy-out check fails a
// directory that imports one of the module's internal packages, as a
// team's module would.
func TestExamplesCopyOutCatchesInternalImport(t *testing.T) {
	t.Parallel()
	root := checkoutRoot(t)
	src := filepath.Join(t.TempDir(), "bad")
	os.Mkdir(src, 0o755)
	main := "package main\n\nimport (\n\t\"strings\"\n\n\t\"github.com/partnerapi/partner-go/internal/text\"\n)\n\n" +
		"func main() {\n\tvar b strings.Builder\n\tquote.Write(&b, \"x\")\n\tprintln(b.String())\n}\n"
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	_, goVersion, _ := checkoutModule(t, root)
	out, err := vetAndTest(base, goVersion, copyOutModule(t, root, src, "bad", filepath.Join(base, "bad")))
	if err == nil || !bytes.Contains(out, []byte("use of internal package")) {
		t.Errorf("a copy importing an internal package: %v\n%s\nwant a failure naming the internal import", err, out)
	}
}

// TestExampleFilesDiffer: no two files under examples/ are identical: a
// file copied between programs drifts, and a team that copies one
// program gets a copy unlike the one beside it. What programs share
// belongs in the library.
func TestExampleFilesDiffer(t *testing.T) {
	t.Parallel()
	seen := map[[sha256.Size]byte]string{}
	n := 0
	root := checkoutRoot(t)
	err := filepath.WalkDir(filepath.Join(root, "examples"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		if rel, err := filepath.Rel(root, p); err == nil {
			p = filepath.ToSlash(rel)
		}
		sum := sha256.Sum256(b)
		if first, ok := seen[sum]; ok {
			t.Errorf("%s is identical to %s: no file is copied between examples (put what they share in the library)", p, first)
		}
		seen[sum] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("found %d files under examples/: too few to mean anything", n)
	}
}
