// Package redistest starts a throwaway redis-server for a test of code
// that uses redisdedup (a webhook receiver's duplicate guard shared on
// Redis): on a free loopback port, persistence off, its files in the
// test's temporary directory, stopped when the test ends.
//
//	func TestReceiverOnRedis(t *testing.T) {
//		rs := redistest.Start(t) // skipped without redis-server on PATH
//		store := redisdedup.New(rs.Client(), redisdedup.WithPrefix("test:"))
//		...
//	}
//
// It runs the redis-server found on PATH (apt-get install redis-server,
// brew install redis). Without one the test is skipped, or failed when
// the environment variable PARTNER_REQUIRE_REDIS is 1, so that a CI
// machine that must run these tests cannot pass them by skipping them;
// the module's own tests follow the same rule.
package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RequireEnv names the environment variable that, set to 1, makes Start
// fail a test when there is no redis-server on PATH instead of skipping
// it.
const RequireEnv = "PARTNER_REQUIRE_REDIS"

// Server is a redis-server a test started on a free loopback port,
// persistence off, stopped when the test ends.
type Server struct {
	// Addr is the server's host:port, for redis.Options.Addr or a
	// program's setting.
	Addr string

	t   testing.TB
	bin string
	dir string

	cmd    *exec.Cmd
	exited chan struct{}
	out    lockedBuffer
}

// lockedBuffer is the server's output, written by the process's copier
// and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Start starts a redis-server for t, stopped when t ends, or skips t
// (fails it with PARTNER_REQUIRE_REDIS=1) when there is none on PATH.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		msg := "redis-server is not on PATH: the Redis store's tests need a real server " +
			"(apt-get install redis-server, or your system's redis package)"
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("%s; %s=1 requires them", msg, RequireEnv)
		}
		t.Skip(msg)
	}
	s := &Server{t: t, bin: bin, dir: t.TempDir()}
	var lastErr error
	for range 3 { // another process may take the free port first
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if lastErr = s.start(); lastErr == nil {
			t.Cleanup(s.Stop)
			return s
		}
	}
	t.Fatalf("starting redis-server: %v\n%s", lastErr, s.out.String())
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs the server on s.Addr and waits until it answers PING, at
// most 30 s (a loaded machine starts it slowly; one that never answers is
// a failure, not a skip). It tries every 5 ms, dialling once each time,
// so that the wait ends within a few milliseconds of the server's
// listening.
func (s *Server) start() error {
	_, port, _ := net.SplitHostPort(s.Addr)
	// --hz 100: the server acts on Stop's SIGTERM at its next periodic
	// task, 10 ms away at most instead of the default 100 ms.
	s.cmd = exec.Command(s.bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--logfile", "", "--daemonize", "no", "--hz", "100")
	s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) { cmd.Wait(); close(exited) }(s.cmd, s.exited)
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialerRetries: 1, DialTimeout: time.Second})
	defer c.Close()
	ping := func() error {
		// A plain dial first: the client logs each dial it fails.
		conn, err := net.DialTimeout("tcp", s.Addr, time.Second)
		if err != nil {
			return err
		}
		conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return c.Ping(ctx).Err()
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := ping()
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("redis-server exited: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("redis-server did not answer PING within 30s: %v", err)
		}
	}
}

// Stop stops the server (SIGTERM, then SIGKILL after 10 s), as a test
// of what a program does when Redis goes away needs; Start stops it at
// the end of the test anyway.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	if s.cmd.Process.Signal(syscall.SIGTERM) != nil { // no SIGTERM on this system
		s.kill()
		s.cmd = nil
		return
	}
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.kill()
	}
	s.cmd = nil
}

func (s *Server) kill() {
	s.cmd.Process.Kill()
	<-s.exited
}

// Restart stops the server and starts it again on the same port: with
// persistence off, it comes back empty.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		s.t.Fatalf("restarting redis-server: %v\n%s", err, s.out.String())
	}
}

// Client returns a client of the server, closed when the test ends. It
// fails fast, as a test of what a program does when Redis goes away
// needs: it sends each command once (MaxRetries -1) and dials once
// (DialerRetries 1), so that while the server is stopped a command fails
// at once instead of after go-redis's default retries (about 2 s). Its
// connections closed by Stop or Restart are not reused: once the server
// answers again, so does the client. A test that needs other settings
// makes its own client of Addr.
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialerRetries: 1})
	s.t.Cleanup(func() { c.Close() })
	return c
}
