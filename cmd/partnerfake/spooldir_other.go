//go:build !unix

package main

// lockDir locks nothing where flock is missing: a directory left by a
// killed partnerfake stays (it is in the system's temporary directory).
func lockDir(string) (func() error, error) { return func() error { return nil }, nil }

// stale reports no directory stale where it cannot be told.
func stale(string) bool { return false }
