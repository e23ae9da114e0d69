package repocheck

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

var updateRecord = flag.Bool("update", false, "rewrite api/v1.txt with the module's current exported API")

// apiRecord is the module's API as it builds, computed once for the tests
// of this file.
var apiRecord = sync.OnceValues(func() ([]string, error) {
	pkgs, err := listing()
	if err != nil {
		return nil, err
	}
	return apiRecordLines(pkgs)
})

// recordFile is the checked-in record.
var recordFile = filepath.Join("api", "v1.txt")

const recordHeader = `# The exported API of github.com/partnerapi/partner-go v1, one line per
# identifier. Checked by TestAPIRecord (internal/repocheck); after a
# deliberate change, rewrite it with:
# go test ./internal/repocheck -run TestAPIRecord -update
`

// updateCommand rewrites the record, from the module's root.
const updateCommand = "go test ./internal/repocheck -run TestAPIRecord -update"

// TestAPIRecord fails when an exported identifier of a public package was
// added, removed or changed without the record being updated.
func TestAPIRecord(t *testing.T) {
	t.Parallel()
	current, err := apiRecord()
	if err != nil {
		t.Fatal(err)
	}
	if *updateRecord {
		text := recordHeader + strings.Join(current, "\n") + "\n"
		if err := os.WriteFile(recordFile, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d lines", recordFile, len(current))
		return
	}
	data, err := os.ReadFile(recordFile)
	if err != nil {
		t.Fatalf("%v (create it with: %s)", err, updateCommand)
	}
	var recorded []string
	for l := range strings.SplitSeq(string(data), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			recorded = append(recorded, l)
		}
	}
	if diff := apiDiff(recorded, current); len(diff) > 0 {
		t.Errorf("the exported API differs from %s:\n%s\n\nIf the change is deliberate (see the compatibility promise in README.md), rewrite the record with:\n\t%s",
			recordFile, strings.Join(diff, "\n"), updateCommand)
	}
}

// TestAPIRecordCoversPublicPackagesOnly: the record has lines for the
// public packages, and for no other.
func TestAPIRecordCoversPublicPackagesOnly(t *testing.T) {
	t.Parallel()
	current, err := apiRecord()
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]bool{}
	for _, l := range current {
		p, _, _ := strings.Cut(strings.TrimPrefix(l, "pkg "), ", ")
		pkgs[p] = true
	}
	for _, want := range []string{modulePath, modulePath + "/scim", modulePath + "/fake", modulePath + "/core", modulePath + "/api"} {
		if !pkgs[want] {
			t.Errorf("no line for package %s", want)
		}
	}
	for p := range pkgs {
		if !apiPublic(p) {
			t.Errorf("lines for %s, which is not public", p)
		}
	}
	for _, want := range []string{
		"pkg " + modulePath + "/scim, func (*Service) Get(context.Context, string) (*User, error)",
		"pkg " + modulePath + ", func New(...Option) (*Client, error)",
	} {
		if !slices.Contains(current, want) {
			t.Errorf("no line %q", want)
		}
	}
}

// TestAPIDiffNamesEachIdentifier: a difference from the record names each
// identifier added, removed or changed.
func TestAPIDiffNamesEachIdentifier(t *testing.T) {
	const p = "pkg example.com/m, "
	recorded := []string{
		p + "func Old(string) error",
		p + "func Same(int)",
		p + "func (*T) Get(context.Context, string) (*User, error)",
		p + "type T struct",
		p + "type T struct, Name string",
		p + "const Version = \"1.0.0\"",
	}
	current := []string{
		p + "func New(string) error",
		p + "func Same(int)",
		p + "func (T) Get(context.Context, string, int) (*User, error)",
		p + "type T struct",
		p + "type T struct, Name []string",
		p + "type T struct, embedded Base",
		p + "const Version = \"1.0.1\"",
	}
	want := []string{
		"added:   " + p + "func New(string) error",
		"added:   " + p + "type T struct, embedded Base",
		"changed: " + p + "const Version = \"1.0.0\"\n      to: " + p + "const Version = \"1.0.1\"",
		"changed: " + p + "func (*T) Get(context.Context, string) (*User, error)\n      to: " + p + "func (T) Get(context.Context, string, int) (*User, error)",
		"changed: " + p + "type T struct, Name string\n      to: " + p + "type T struct, Name []string",
		"removed: " + p + "func Old(string) error",
	}
	if got := apiDiff(recorded, current); !slices.Equal(got, want) {
		t.Errorf("Diff =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
