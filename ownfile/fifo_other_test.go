//go:build !unix

package ownfile_test

import "errors"

// mkfifo fails: this system has no FIFOs in its file system.
func mkfifo(string) error { return errors.New("no FIFOs here") }
