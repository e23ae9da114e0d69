//go:build unix

package main

import (
	"os"
	"syscall"
)

// lockDir locks the directory dir for this process (flock, released when
// the process ends however it ends), and returns what unlocks it.
func lockDir(dir string) (func() error, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f.Close, nil
}

// stale reports whether dir is a spool directory of this user that no
// process holds locked. A symbolic link, another user's directory or one
// locked is not.
func stale(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
		return false
	}
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	// Free, the lock says its process is gone (closing f releases it);
	// EWOULDBLOCK, that it runs.
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
