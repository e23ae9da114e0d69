package main

// partnerfake's spool directory: the temporary files of large load bodies
// (fake.WithSpoolDir) go to a directory of this process's own under the
// system's temporary directory, removed when partnerfake exits on
// SIGINT, SIGTERM or an error. A process killed where it cannot clean up
// (SIGKILL, a crash of the machine) leaves its directory; the next
// partnerfake that starts removes it, and only it: each directory holds
// a lock its process keeps while it runs (spooldir_unix.go).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// spoolPrefix starts the name of every partnerfake spool directory;
// spoolPending that of one being made, not yet locked.
const (
	spoolPrefix  = "partnerfake-spool-"
	spoolPending = ".partnerfake-spool-pending-"
)

// spoolDir is partnerfake's spool directory while it runs.
type spoolDir struct {
	path   string
	unlock func() error
}

// newSpoolDir makes this process's spool directory in tmp, locked, and
// removes the directories of partnerfake processes that no longer run.
// It is made under a pending name and renamed once locked, so that no
// other partnerfake sees it unlocked.
func newSpoolDir(tmp string) (*spoolDir, error) {
	pending, err := os.MkdirTemp(tmp, spoolPending+"*")
	if err != nil {
		return nil, fmt.Errorf("making the spool directory: %w", err)
	}
	unlock, err := lockDir(pending)
	if err != nil {
		os.Remove(pending)
		return nil, fmt.Errorf("locking the spool directory: %w", err)
	}
	path := filepath.Join(tmp, fmt.Sprintf("%s%d-%s", spoolPrefix, os.Getpid(), strings.TrimPrefix(filepath.Base(pending), spoolPending)))
	if err := os.Rename(pending, path); err != nil {
		unlock()
		os.Remove(pending)
		return nil, fmt.Errorf("making the spool directory: %w", err)
	}
	removeStaleSpools(tmp, path)
	return &spoolDir{path: path, unlock: unlock}, nil
}

// remove removes the directory with the files in it, and lets go of its
// lock.
func (d *spoolDir) remove() error {
	err := os.RemoveAll(d.path)
	if uerr := d.unlock(); err == nil {
		err = uerr
	}
	return err
}

// removeStaleSpools removes the spool directories in tmp, other than own,
// that no process holds locked: a partnerfake's that ended without
// removing it. Directories of other users are left alone, and so is a
// pending one younger than a minute, which its partnerfake may be about
// to lock.
func removeStaleSpools(tmp, own string) {
	matches, _ := filepath.Glob(filepath.Join(tmp, spoolPrefix+"*"))
	pending, _ := filepath.Glob(filepath.Join(tmp, spoolPending+"*"))
	for _, dir := range pending {
		if fi, err := os.Lstat(dir); err == nil && time.Since(fi.ModTime()) > time.Minute {
			matches = append(matches, dir)
		}
	}
	for _, dir := range matches {
		if dir == own {
			continue
		}
		if stale(dir) {
			os.RemoveAll(dir)
		}
	}
}
