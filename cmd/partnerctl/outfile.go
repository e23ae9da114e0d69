package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// outputFile is an output file being written (-o, --errors-out): every
// output file of the command is written through it, the same safe way. The
// data goes to a new temporary file beside the destination, created
// exclusively (never through a symbolic link); commit puts it in place
// under the destination's name without following a link there either:
// without force it refuses any existing entry, a dangling link included,
// and with force it replaces the entry itself (a link, not its target).
// Until commit, the destination is untouched, so a failed command leaves
// no partial file under its name.
type outputFile struct {
	*os.File
	flag, path string
	force      bool
	committed  bool
}

// checkOutputPath checks, before anything is sent, that a file can be
// written at path (the value of flag): path is not a directory, nothing
// is there unless force is set, and its directory exists. An empty path
// passes.
func checkOutputPath(flag, path string, force bool) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Lstat(path); err == nil {
		switch {
		case fi.IsDir():
			return usagef("%s %s is a directory: give a file name", flag, path)
		case !force:
			return usagef("%s %s already exists: give --force to replace it", flag, path)
		}
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usagef("%s %s: directory %s does not exist", flag, path, dir)
	}
	return nil
}

// createOutput starts writing the output file path, the value of flag.
// The temporary file has the mode 0666 less the umask, as a new file
// would (os.CreateTemp would make it 0600 whatever the umask).
func createOutput(flag, path string, force bool) (*outputFile, error) {
	dir, base := filepath.Split(path)
	for {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(uint64(rand.Uint32()), 10)+".partial")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			// Name the file the operator asked for, not the temporary one.
			if pe, ok := errors.AsType[*os.PathError](err); ok {
				err = pe.Err
			}
			return nil, fmt.Errorf("%s: cannot write %s: %w", flag, path, err)
		}
		return &outputFile{File: f, flag: flag, path: path, force: force}, nil
	}
}

// commit puts the written file in place. A regular file it replaces
// (with force) passes on its mode.
func (f *outputFile) commit() error {
	if fi, err := os.Lstat(f.path); err == nil && fi.Mode().IsRegular() && f.force {
		if err := f.Chmod(fi.Mode().Perm()); err != nil {
			return err
		}
	}
	// On disk before it takes the name, so that a crash of the machine
	// right after does not leave the file empty or short.
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := f.place(); err != nil {
		return err
	}
	f.committed = true
	return nil
}

func (f *outputFile) place() error {
	if f.force {
		// rename replaces the entry at path, never what a link there
		// points to.
		return os.Rename(f.Name(), f.path)
	}
	// link fails when anything is at path, a dangling link included, and
	// does not follow one: no race with a link made since the check.
	err := os.Link(f.Name(), f.path)
	switch {
	case err == nil:
		return os.Remove(f.Name())
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%s %s already exists: give --force to replace it", f.flag, f.path)
	}
	// A file system without hard links: check, then rename.
	if _, lerr := os.Lstat(f.path); !errors.Is(lerr, fs.ErrNotExist) {
		return fmt.Errorf("%s %s already exists: give --force to replace it", f.flag, f.path)
	}
	return os.Rename(f.Name(), f.path)
}

// abort removes the temporary file unless commit put it in place.
func (f *outputFile) abort() {
	if !f.committed {
		f.Close()
		os.Remove(f.Name())
	}
}
