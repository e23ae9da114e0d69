//go:build unix

package ownfile

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// open opens path with flag never through a symbolic link at its last
// element (O_NOFOLLOW), without blocking on a FIFO (O_NONBLOCK, which
// changes nothing for a regular file), and only when what was opened is
// a regular file of this user's.
func open(path string, flag int) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, nil, fmt.Errorf("%s is a symbolic link", path)
	}
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkOwn(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// checkOwn says why fi, the file at path, is not a regular file of this
// user's.
func checkOwn(path string, fi os.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s belongs to another user", path)
	}
	return nil
}
