package ownfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/ownfile"
)

// victim is a file of someone else's work that a planted link points
// to: a test checks at its end that it is untouched.
type victim struct {
	t    *testing.T
	path string
}

const victimText = "keep me\n"

func newVictim(t *testing.T) victim {
	t.Helper()
	v := victim{t, filepath.Join(t.TempDir(), "precious")}
	if err := os.WriteFile(v.path, []byte(victimText), 0o644); err != nil {
		t.Fatal(err)
	}
	return v
}

// plant makes link a symbolic link to the victim (skipping the test where
// there are none).
func (v victim) plant(link string) {
	v.t.Helper()
	if err := os.Symlink(v.path, link); err != nil {
		v.t.Skip("no symbolic links here:", err)
	}
}

func (v victim) check() {
	v.t.Helper()
	if b, err := os.ReadFile(v.path); err != nil || string(b) != victimText {
		v.t.Errorf("the file a planted link points to was changed: %q, %v", b, err)
	}
}

// isLink reports whether path is still a symbolic link.
func isLink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// leftovers returns the names in dir other than keep.
func leftovers(t *testing.T, dir string, keep ...string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
outer:
	for _, e := range entries {
		for _, k := range keep {
			if e.Name() == k {
				continue outer
			}
		}
		names = append(names, e.Name())
	}
	return names
}

// TestCreateReplacesAPlantedLink: Create at a planted link writes a new
// file in the link's place, never to what it points to.
func TestCreateReplacesAPlantedLink(t *testing.T) {
	t.Parallel()
	v := newVictim(t)
	path := filepath.Join(t.TempDir(), "report.csv.partial")
	v.plant(path)
	f, err := ownfile.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("rows\n")
	f.Close()
	v.check()
	if isLink(path) || read(t, path) != "rows\n" {
		t.Errorf("%s is a link or does not hold what was written", path)
	}
}

// TestOutputAtPlantedLinks: an output whose destination is a planted link
// (to a file, or dangling) is refused without replace, leaving the link,
// its target and no temporary file; with replace the output replaces the
// link itself.
func TestOutputAtPlantedLinks(t *testing.T) {
	t.Parallel()
	v := newVictim(t)
	dir := t.TempDir()
	link, dangling := filepath.Join(dir, "out.csv"), filepath.Join(dir, "dangling.csv")
	v.plant(link)
	os.Symlink(filepath.Join(dir, "created-by-link"), dangling)
	for _, dest := range []string{link, dangling} {
		o, err := ownfile.CreateOutput(dest, false)
		if err != nil {
			t.Fatal(err)
		}
		o.WriteString("new\n")
		if err := o.Commit(); !errors.Is(err, fs.ErrExist) {
			t.Errorf("Commit at the link %s without replace: %v, want an error wrapping fs.ErrExist", filepath.Base(dest), err)
		}
		o.Abort()
		if !isLink(dest) {
			t.Errorf("%s is no longer the link", dest)
		}
	}
	if names := leftovers(t, dir, "out.csv", "dangling.csv"); len(names) != 0 {
		t.Errorf("left in the directory: %v", names)
	}
	for _, dest := range []string{link, dangling} {
		o, err := ownfile.CreateOutput(dest, true)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Abort()
		o.WriteString("new\n")
		if err := o.Commit(); err != nil {
			t.Fatalf("Commit with replace: %v", err)
		}
		if isLink(dest) || read(t, dest) != "new\n" {
			t.Errorf("%s: not the file written", dest)
		}
	}
	v.check()
	if names := leftovers(t, dir, "out.csv", "dangling.csv"); len(names) != 0 {
		t.Errorf("left in the directory: %v", names)
	}
}

// TestOutputReplacesAFileKeepingItsMode: with replace, a regular file at
// the destination is replaced whole and passes on its mode; until Commit
// it is untouched.
func TestOutputReplacesAFileKeepingItsMode(t *testing.T) {
	t.Parallel()
	dest := filepath.Join(t.TempDir(), "out.csv")
	if err := os.WriteFile(dest, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := ownfile.CreateOutput(dest, true)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Abort()
	o.WriteString("new\n")
	if got := read(t, dest); got != "old\n" {
		t.Errorf("before Commit the destination holds %q", got)
	}
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dest)
	if err != nil || read(t, dest) != "new\n" || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Errorf("after Commit: %v, %v; want the new content, mode 0600", fi.Mode(), err)
	}
}

// TestOpenRefuses: Open and ReadFile refuse a link (to a file, or to
// /dev/zero, which would be read until memory runs out), a directory, a
// FIFO (without blocking), a file larger than the bound, and, on Unix, a
// file of another user's.
func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	v := newVictim(t)
	dir := t.TempDir()
	link, zero, sub, big := filepath.Join(dir, "link"), filepath.Join(dir, "zero"), filepath.Join(dir, "sub"), filepath.Join(dir, "big")
	v.plant(link)
	os.Symlink("/dev/zero", zero)
	os.Mkdir(sub, 0o700)
	os.WriteFile(big, make([]byte, 1025), 0o600)
	cases := map[string]string{link: "is a symbolic link", zero: "is a symbolic link", sub: "is not a regular file", big: "is larger than 1024 bytes"}
	if fifo := filepath.Join(dir, "fifo"); mkfifo(fifo) == nil {
		cases[fifo] = "is not a regular file"
	}
	if os.Geteuid() == 0 {
		other := filepath.Join(dir, "other")
		os.WriteFile(other, []byte("{}"), 0o644)
		if err := os.Chown(other, 65534, 65534); err == nil {
			cases[other] = "belongs to another user"
		}
	}
	for path, want := range cases {
		if _, err := ownfile.ReadFile(path, 1024); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadFile(%s): %v, want an error saying %q", filepath.Base(path), err, want)
		}
		if want == "is larger than 1024 bytes" {
			continue
		}
		if f, err := ownfile.Open(path, os.O_RDONLY); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%s): %v, want an error saying %q", filepath.Base(path), err, want)
			if f != nil {
				f.Close()
			}
		}
	}
	v.check()
	ok := filepath.Join(dir, "ok")
	os.WriteFile(ok, make([]byte, 1024), 0o600)
	if b, err := ownfile.ReadFile(ok, 1024); err != nil || len(b) != 1024 {
		t.Errorf("ReadFile of a file of the bound's size: %d bytes, %v", len(b), err)
	}
}

// TestWriteFileReplacesALink: WriteFile at a planted link (at the file,
// the way a checkpoint is saved) replaces the link whole and leaves no
// temporary file; what the link pointed to is untouched.
func TestWriteFileReplacesALink(t *testing.T) {
	t.Parallel()
	v := newVictim(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "job.checkpoint")
	v.plant(path)
	if err := ownfile.WriteFile(path, []byte(`{"rows":3}`), 0o600); err != nil {
		t.Fatal(err)
	}
	v.check()
	if isLink(path) || read(t, path) != `{"rows":3}` {
		t.Errorf("%s is a link or does not hold what was written", path)
	}
	if names := leftovers(t, dir, "job.checkpoint"); len(names) != 0 {
		t.Errorf("left in the directory: %v", names)
	}
	if b, err := ownfile.ReadFile(path, 16); err != nil || string(b) != `{"rows":3}` {
		t.Errorf("ReadFile: %q, %v", b, err)
	}
}
