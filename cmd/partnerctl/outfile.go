package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/partnerapi/partner-go/ownfile"
)

// outputFile is an output file being written (-o, --errors-out): every
// output file of the command is written through it, the same safe way
// (ownfile.Output). The data goes to a new temporary file beside the
// destination, created exclusively (never through a symbolic link);
// commit puts it in place under the destination's name without following
// a link there either: without force it refuses any existing entry, a
// dangling link included, and with force it replaces the entry itself (a
// link, not its target). Until commit, the destination is untouched, so a
// failed command leaves no partial file under its name.
type outputFile struct {
	*ownfile.Output
	flag, path string
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
// would.
func createOutput(flag, path string, force bool) (*outputFile, error) {
	o, err := ownfile.CreateOutput(path, force)
	if err != nil {
		// Name the file the operator asked for, not the temporary one.
		if pe, ok := errors.AsType[*fs.PathError](err); ok {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: cannot write %s: %w", flag, path, err)
	}
	return &outputFile{Output: o, flag: flag, path: path}, nil
}

// commit puts the written file in place. A regular file it replaces
// (with force) passes on its mode.
func (f *outputFile) commit() error {
	return placeError(f.flag, f.path, f.Output.Commit())
}

// abort removes the temporary file unless commit put it in place.
func (f *outputFile) abort() { f.Output.Abort() }

// placeOutput puts f, a file the command wrote (--resume's partial
// file), in place at path, the value of flag, as commit does.
func placeOutput(flag string, f *os.File, path string, force bool) error {
	return placeError(flag, path, ownfile.Place(f, path, force))
}

// placeError is err, an error of putting the output file path (the
// value of flag) in place, as the operator reads it.
func placeError(flag, path string, err error) error {
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s %s already exists: give --force to replace it", flag, path)
	}
	return err
}
