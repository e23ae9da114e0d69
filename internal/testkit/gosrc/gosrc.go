// Package gosrc reads the module's Go sources for the repository's own
// checks (the API record, doc comments, imports, the names of exported
// types). Parse parses each file once per test binary, with its
// comments, however many checks read it: the checks of one binary share
// the parse, and do not change it. PackageFiles parses anew, for go/doc,
// which changes the files it reads.
package gosrc

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

var (
	fset   = token.NewFileSet()
	mu     sync.Mutex
	parsed = map[string]*file{}
)

// file is one parse of a file, done once.
type file struct {
	once sync.Once
	f    *ast.File
	err  error
}

// FileSet is the file set of every file Parse and PackageFiles return:
// positions of their nodes are read from it.
func FileSet() *token.FileSet { return fset }

// Parse returns the Go file at path, parsed with its comments (objects
// unresolved). Every caller gets the same *ast.File, from one parse per
// test binary, and must not change it (go/doc does not with
// doc.PreserveAST).
func Parse(path string) (*ast.File, error) {
	path = filepath.Clean(path)
	mu.Lock()
	p := parsed[path]
	if p == nil {
		p = &file{}
		parsed[path] = p
	}
	mu.Unlock()
	p.once.Do(func() {
		p.f, p.err = parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	})
	return p.f, p.err
}

// GoFiles returns the paths of the Go files under root, test files
// included, in lexical order, directories whose name starts with a dot
// and testdata directories left out; skip, when not nil, leaves out each
// directory (a path under root, slash-separated) it reports true for.
func GoFiles(root string, skip func(dir string) bool) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || skip != nil && skip(filepath.ToSlash(p))) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") {
			paths = append(paths, p)
		}
		return nil
	})
	return paths, err
}

// PackageFiles parses into fset, with mode, the Go files of the package
// in dir that the default build context builds, its test files left
// out. They are parsed anew for the caller, who may change them, as
// go/doc does: Parse's files are shared.
func PackageFiles(fset *token.FileSet, dir string, mode parser.Mode) ([]*ast.File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		ok, err := build.Default.MatchFile(dir, name)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, mode)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}
