//go:build !unix

package ownfile

import (
	"fmt"
	"os"
)

// open opens path with flag only when it is a regular file. This system
// has no O_NOFOLLOW: the entry is checked with Lstat before the open and
// the open file with Stat after it, and both must be the same regular
// file.
func open(path string, flag int) (*os.File, os.FileInfo, error) {
	before, err := os.Lstat(path)
	if err != nil {
		return nil, nil, err
	}
	if before.Mode()&os.ModeSymlink != 0 {
		return nil, nil, fmt.Errorf("%s is a symbolic link", path)
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && (!fi.Mode().IsRegular() || !os.SameFile(before, fi)) {
		err = fmt.Errorf("%s is not a regular file", path)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}
