//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// child is partnerfake run as a process of its own (this test binary,
// see TestMain), with tmp as its TMPDIR.
type child struct {
	cmd   *exec.Cmd
	spool string // its spool directory
}

func startChild(t *testing.T, tmp string) *child {
	t.Helper()
	before, _ := filepath.Glob(filepath.Join(tmp, spoolPrefix+"*"))
	cmd := exec.Command(os.Args[0], "-addr", "127.0.0.1:0", "-demo=false")
	cmd.Env = append(os.Environ(), "PARTNERFAKE_TEST_MAIN=1", "TMPDIR="+tmp)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "partnerfake serving at") {
		t.Fatalf("partnerfake did not start: %q", sc.Text())
	}
	go func() {
		for sc.Scan() {
		}
	}()
	own := filepath.Join(tmp, spoolPrefix) + strconv.Itoa(cmd.Process.Pid) + "-"
	after, _ := filepath.Glob(own + "*")
	if len(after) != 1 {
		t.Fatalf("partnerfake (pid %d) made spool directories %q (before: %q)", cmd.Process.Pid, after, before)
	}
	return &child{cmd: cmd, spool: after[0]}
}

// plant puts a file in the child's spool directory, as a load in flight
// would.
func (c *child) plant(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(c.spool, "partnerfake-load-1"), make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
}

// stop signals the child and waits for it to exit.
func (c *child) stop(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if sig != syscall.SIGKILL && err != nil {
			t.Errorf("partnerfake after %v: %v", sig, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("partnerfake did not exit after %v", sig)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// TestSpoolDirRemovedOnExit: partnerfake's spool directory, files
// included, is gone after SIGTERM and SIGINT; after SIGKILL it stays,
// and the next partnerfake to start removes it, and not the directory of
// one still running.
func TestSpoolDirRemovedOnExit(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	for _, sig := range []os.Signal{syscall.SIGTERM, syscall.SIGINT} {
		c := startChild(t, tmp)
		c.plant(t)
		c.stop(t, sig)
		if exists(c.spool) {
			t.Errorf("the spool directory is left after %v", sig)
		}
	}

	killed := startChild(t, tmp)
	killed.plant(t)
	killed.stop(t, syscall.SIGKILL)
	if !exists(killed.spool) {
		t.Fatal("the spool directory of a killed partnerfake is gone before another started")
	}
	running := startChild(t, tmp)
	if exists(killed.spool) {
		t.Errorf("a new partnerfake left the spool directory of a killed one")
	}
	other := startChild(t, tmp)
	if !exists(running.spool) {
		t.Errorf("a new partnerfake removed the spool directory of one still running")
	}
	// A link named as a spool directory is not followed.
	victim := t.TempDir()
	os.WriteFile(filepath.Join(victim, "keep"), []byte("x"), 0o600)
	os.Symlink(victim, filepath.Join(tmp, spoolPrefix+"1-link"))
	// A pending directory left by a partnerfake killed while it started
	// goes once it is a minute old; a younger one may be about to be
	// locked, and stays.
	oldPending, newPending := filepath.Join(tmp, spoolPending+"old"), filepath.Join(tmp, spoolPending+"new")
	os.Mkdir(oldPending, 0o700)
	os.Mkdir(newPending, 0o700)
	hourAgo := time.Now().Add(-time.Hour)
	os.Chtimes(oldPending, hourAgo, hourAgo)
	third := startChild(t, tmp)
	if exists(oldPending) || !exists(newPending) {
		t.Errorf("pending directories after a start: an hour old kept %v, new kept %v; want false, true", exists(oldPending), exists(newPending))
	}
	os.Remove(newPending)
	if !exists(filepath.Join(victim, "keep")) {
		t.Errorf("a new partnerfake removed files through a link")
	}
	for _, c := range []*child{running, other, third} {
		c.stop(t, syscall.SIGTERM)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*partnerfake-spool-*")); len(left) != 1 { // the link
		t.Errorf("left in TMPDIR: %q", left)
	}
}
