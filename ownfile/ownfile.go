// Package ownfile writes a program's own files and reads them back
// without being turned against another file: an output, a partial file a
// long job appends to, a checkpoint. A program that writes into a
// directory others can write to (a shared export directory, /tmp) meets
// links planted where its files go; one that reads its checkpoint back
// meets a checkpoint that is a link to /dev/zero or to another user's
// file. This package refuses each:
//
//   - nothing is written through a symbolic link: new files are created
//     exclusively (O_EXCL), and a file is put in place by renaming or
//     linking the entry, never by writing to what a link points to;
//   - a file opened again (Open, ReadFile) is never opened through a
//     symbolic link, and must be a regular file of this user's, checked
//     on the open file itself;
//   - a small file (a checkpoint) is read only up to a bound (ReadFile).
//
// An output is written whole or not at all (CreateOutput, Commit): the
// data goes to a new file beside the destination, which takes the
// destination's name once complete and on disk; a checkpoint is replaced
// whole (WriteFile). partnerctl and the example programs write their
// files through it.
package ownfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Create creates the file path for writing, empty, as os.Create does, but
// never through a symbolic link: an entry already at path is removed
// first (the entry, a link itself, never what a link points to), and the
// file is created exclusively (O_EXCL), so a link planted at path since
// makes Create fail instead of being followed. The new file has the mode
// 0666 less the umask.
func Create(path string) (*os.File, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
}

// Open opens the existing file path with flag (os.O_RDONLY, os.O_WRONLY or
// os.O_RDWR, with os.O_APPEND or os.O_TRUNC if wanted) for the program's
// own use: never through a symbolic link at path, and only when what was
// opened is a regular file of this user's (on Unix), checked on the open
// file itself so that nothing can be swapped in between a check and the
// open. A FIFO at path does not block the open. The error says which of
// these path is not ("is a symbolic link", "is not a regular file",
// "belongs to another user").
func Open(path string, flag int) (*os.File, error) {
	f, _, err := open(path, flag)
	return f, err
}

// ReadFile reads the file path, opened as Open opens it, when it holds at
// most max bytes; a larger one (a checkpoint a program did not write) is
// refused without reading it whole.
func ReadFile(path string, max int64) ([]byte, error) {
	f, fi, err := open(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooLarge := fmt.Errorf("%s is larger than %d bytes", path, max)
	if fi.Size() > max {
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, tooLarge
	}
	return b, nil
}

// WriteFile replaces the file path with data: it writes data to a new
// file beside path (created exclusively, never through a link), syncs it
// to disk, and renames it to path, which replaces the entry at path (a
// link there, not what it points to). A crash leaves the old content or
// the new one, never a part. The new file has the mode perm less the
// umask. On an error path is as it was.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	f, err := createBeside(path, ".tmp", perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// createBeside creates a new file with a name of its own in path's
// directory, exclusively, with the mode perm less the umask
// (os.CreateTemp would make it 0600 whatever the umask).
func createBeside(path, suffix string, perm fs.FileMode) (*os.File, error) {
	dir, base := filepath.Split(path)
	for {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			// Name the file asked for, not the temporary one.
			if pe, ok := errors.AsType[*fs.PathError](err); ok {
				err = &fs.PathError{Op: "create", Path: path, Err: pe.Err}
			}
			return nil, err
		}
		return f, nil
	}
}

// Output is an output file being written: the data goes to a new file
// beside the destination (*os.File's methods write it), and Commit puts
// it in place under the destination's name. Until then the destination
// is untouched, so a program that fails leaves no partial file under
// that name.
type Output struct {
	*os.File
	path      string
	replace   bool
	committed bool
}

// CreateOutput starts writing the output file path. The file is created
// exclusively beside path (never through a link), with the mode 0666
// less the umask. replace says whether Commit may replace what is at
// path; CreateOutput itself does not look. Call Abort when the output is
// not committed (defer it).
func CreateOutput(path string, replace bool) (*Output, error) {
	f, err := createBeside(path, ".partial", 0o666)
	if err != nil {
		return nil, err
	}
	return &Output{File: f, path: path, replace: replace}, nil
}

// Commit puts the written file in place under its destination's name
// (Place).
func (o *Output) Commit() error {
	if err := Place(o.File, o.path, o.replace); err != nil {
		return err
	}
	o.committed = true
	return nil
}

// Abort closes and removes the written file unless Commit put it in
// place.
func (o *Output) Abort() {
	if !o.committed {
		o.Close()
		os.Remove(o.Name())
	}
}

// Place puts f, a file this program created and wrote (CreateOutput's,
// or a partial file from Create), in place under path: it syncs f to
// disk, so that a crash right after leaves path complete, closes it, and
// gives its entry the name path without following a link there. Without
// replace it refuses any entry at path, a dangling link included, with
// an error that wraps fs.ErrExist; with replace it replaces the entry (a
// link, not what it points to), and a regular file it replaces passes on
// its mode. On an error f is closed and still under its own name.
func Place(f *os.File, path string, replace bool) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && replace {
		if err := f.Chmod(fi.Mode().Perm()); err != nil {
			f.Close()
			return err
		}
	}
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if replace {
		// rename replaces the entry at path, never what a link there
		// points to.
		return os.Rename(f.Name(), path)
	}
	exists := &fs.PathError{Op: "place", Path: path, Err: fs.ErrExist}
	// link fails when anything is at path, a dangling link included, and
	// does not follow one: no race with a link made since a check.
	err = os.Link(f.Name(), path)
	switch {
	case err == nil:
		return os.Remove(f.Name())
	case errors.Is(err, fs.ErrExist):
		return exists
	}
	// A file system without hard links: check, then rename.
	if _, lerr := os.Lstat(path); !errors.Is(lerr, fs.ErrNotExist) {
		return exists
	}
	return os.Rename(f.Name(), path)
}
