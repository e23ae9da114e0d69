package partner_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// backticked matches the code spans of a Markdown file.
var backticked = regexp.MustCompile("`([^`\\s]+)`")

// TestDocsNameFilesThatExist: every file or directory a doc names in a
// code span exists. A bare file name (`retry.go`) must exist in some
// directory of the module; a path (`internal/poll`, `cmd/partnerctl/`,
// `docs/reliability.md`) relative to the module root or to the doc's
// own directory. Import paths of other modules (`net/http`,
// `google/go-github`) are not paths of this module: a path counts when
// it ends in .go or .md or starts with a directory of the module root.
func TestDocsNameFilesThatExist(t *testing.T) {
	t.Parallel()
	names := map[string]bool{} // base names of the module's files
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != "." {
			return filepath.SkipDir
		}
		names[d.Name()] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob("docs/*.md")
	for _, doc := range append(docs, "README.md") {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range backticked.FindAllStringSubmatch(string(b), -1) {
			tok := strings.TrimRight(m[1], ":,.")
			if missing(tok, filepath.Dir(doc), names) {
				t.Errorf("%s names %s, which does not exist", doc, tok)
			}
		}
	}
}

// missing reports whether tok, a code span of a doc in dir, names a file
// or directory of the module that does not exist.
func missing(tok, dir string, names map[string]bool) bool {
	file := strings.HasSuffix(tok, ".go") || strings.HasSuffix(tok, ".md")
	if strings.ContainsAny(tok, "*?[{}()=<>$@'\"") || strings.HasPrefix(tok, "/") || strings.Contains(tok, "://") {
		return false // a pattern, a URL or an expression, not a path
	}
	first, _, isPath := strings.Cut(tok, "/")
	switch {
	case !isPath && file:
		return !names[tok]
	case !isPath:
		return false
	case !file:
		if fi, err := os.Stat(first); err != nil || !fi.IsDir() {
			return false // another module's import path
		}
	}
	for _, p := range []string{tok, filepath.Join(dir, tok)} {
		if _, err := os.Stat(p); err == nil {
			return false
		}
	}
	return true
}

// citedTest matches a code span naming a test, benchmark, fuzz target or
// example, perhaps after its package (`scim.ExampleNew`) or before a
// sub-benchmark (`BenchmarkExport/latency=100ms`).
var citedTest = regexp.MustCompile(`^(?:\w+\.)?((?:Test|Benchmark|Fuzz|Example)[A-Z_]\w*)(?:/.*)?$`)

// TestDocsNameTestsThatExist: every test, benchmark, fuzz target or
// example README.md, BENCHMARKS.md and docs/*.md cite as the proof of a
// claim is declared in a _test.go file of the module.
func TestDocsNameTestsThatExist(t *testing.T) {
	t.Parallel()
	declared := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz|Example)\w*)\(`)
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := os.ReadFile(p)
		for _, m := range decl.FindAllSubmatch(b, -1) {
			declared[string(m[1])] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob("docs/*.md")
	cited := 0
	for _, doc := range append(docs, "README.md", "BENCHMARKS.md") {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range backticked.FindAllStringSubmatch(string(b), -1) {
			if c := citedTest.FindStringSubmatch(strings.TrimRight(m[1], ":,.")); c != nil {
				cited++
				if !declared[c[1]] {
					t.Errorf("%s cites %s, which no _test.go declares", doc, c[1])
				}
			}
		}
	}
	if cited == 0 {
		t.Error("no doc cites a test: the pattern finds nothing")
	}
}
