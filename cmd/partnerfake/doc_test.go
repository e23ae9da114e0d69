package main

import (
	"flag"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDocNamesEveryFlag: the command's doc comment names every flag and
// no flag that does not exist, and a default it states is the flag's.
func TestDocNamesEveryFlag(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	// A flag's entry: its line in an indented block, and the lines
	// indented under it.
	entries := map[string]string{}
	name := ""
	flagLine := regexp.MustCompile(`^\t-([a-z-]+)`)
	for line := range strings.SplitSeq(f.Doc.Text(), "\n") {
		if m := flagLine.FindStringSubmatch(line); m != nil {
			name = m[1]
			entries[name] = line
		} else if name != "" && strings.HasPrefix(line, "\t ") {
			entries[name] += " " + strings.TrimSpace(line)
		} else {
			name = ""
		}
	}
	stated := regexp.MustCompile(`\(default ([^)]+)\)`)
	fs, _ := newFlags()
	fs.VisitAll(func(fl *flag.Flag) {
		entry, ok := entries[fl.Name]
		if !ok {
			t.Errorf("the doc comment does not name -%s", fl.Name)
			return
		}
		delete(entries, fl.Name)
		m := stated.FindStringSubmatch(entry)
		if m == nil {
			return
		}
		said, has := m[1], fl.DefValue
		if d, err := time.ParseDuration(said); err == nil {
			if h, err := time.ParseDuration(has); err == nil && d == h {
				return
			}
		}
		if said != has {
			t.Errorf("the doc comment says -%s defaults to %s; it is %s", fl.Name, said, has)
		}
	})
	for name := range entries {
		t.Errorf("the doc comment names -%s, which is not a flag", name)
	}
}
