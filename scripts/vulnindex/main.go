// Command vulnindex makes a vulnerability database that govulncheck reads
// with -db file://DIR from a folder of OSV entries, such as the data/osv
// folder of the module golang.org/x/vulndb, which the module proxy serves.
// It does what that module's cmd/indexdb does, with the standard library
// only, so that scripts/vulncheck builds it in seconds:
//
//	go -C scripts/vulnindex run . -osv DIR/data/osv -out DB
//
// It is a module of its own, so that go build ./... and go test ./... of
// the SDK leave it out.
//
// DB gets index/db.json, index/modules.json, index/vulns.json and a copy
// of each entry as ID/<id>.json. The module index names no fixed version,
// so govulncheck reads the entries of every module it scans and decides
// from their ranges.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// entry is the part of an OSV entry the index is made of.
type entry struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases,omitempty"`
	Affected []struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
	} `json:"affected"`
}

type moduleVuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
}

type module struct {
	Path  string       `json:"path"`
	Vulns []moduleVuln `json:"vulns"`
}

type vuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases,omitempty"`
}

func main() {
	osvDir := flag.String("osv", "", "folder of OSV entries (GO-*.json)")
	out := flag.String("out", "", "folder to write the database to")
	flag.Parse()
	if *osvDir == "" || *out == "" {
		log.Fatal("vulnindex: -osv and -out are required")
	}
	if err := index(*osvDir, *out); err != nil {
		log.Fatalf("vulnindex: %v", err)
	}
}

func index(osvDir, out string) error {
	names, err := filepath.Glob(filepath.Join(osvDir, "GO-*.json"))
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("no OSV entry in %s", osvDir)
	}
	for _, dir := range []string{"index", "ID"} {
		if err := os.MkdirAll(filepath.Join(out, dir), 0o755); err != nil {
			return err
		}
	}
	var (
		latest  time.Time
		modules = map[string]*module{}
		vulns   []vuln
	)
	for _, name := range names {
		e, err := copyEntry(name, out)
		if err != nil {
			return err
		}
		if e.Modified.After(latest) {
			latest = e.Modified
		}
		vulns = append(vulns, vuln{ID: e.ID, Modified: e.Modified, Aliases: e.Aliases})
		for _, a := range e.Affected {
			m := modules[a.Package.Name]
			if m == nil {
				m = &module{Path: a.Package.Name}
				modules[a.Package.Name] = m
			}
			if !slices.ContainsFunc(m.Vulns, func(v moduleVuln) bool { return v.ID == e.ID }) {
				m.Vulns = append(m.Vulns, moduleVuln{ID: e.ID, Modified: e.Modified})
			}
		}
	}
	mods := make([]*module, 0, len(modules))
	for _, m := range modules {
		mods = append(mods, m)
	}
	slices.SortFunc(mods, func(a, b *module) int { return strings.Compare(a.Path, b.Path) })
	if err := writeJSON(filepath.Join(out, "index", "db.json"), map[string]time.Time{"modified": latest}); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(out, "index", "modules.json"), mods); err != nil {
		return err
	}
	return writeJSON(filepath.Join(out, "index", "vulns.json"), vulns)
}

// copyEntry reads the OSV entry in file name, checks that its id names
// the file, and copies it to out/ID.
func copyEntry(name, out string) (entry, error) {
	var e entry
	data, err := os.ReadFile(name)
	if err != nil {
		return e, err
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return e, fmt.Errorf("%s: %w", name, err)
	}
	if e.ID+".json" != filepath.Base(name) {
		return e, fmt.Errorf("%s: the entry's id is %q", name, e.ID)
	}
	return e, os.WriteFile(filepath.Join(out, "ID", e.ID+".json"), data, 0o644)
}

func writeJSON(name string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(name, data, 0o644)
}
