// Package flood is a test harness: it holds connections to a server as
// a client that does not know a receiver's secret would, to show that
// deliveries still get through.
package flood

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
)

// Hold opens idle connections to addr, a server of at most capacity
// connections at once, and holds them until the test ends: capacity
// connections that each POST to path (a path without the secret), read
// the answer and stay open, kept alive and idle, then silent
// connections that send nothing. Each answer must be a kept-alive 401.
//
// A server that caps its connections holds all capacity idle ones;
// without a way to free them, the silent ones and any delivery after
// them wait behind them for a slot.
func Hold(t testing.TB, addr, path string, capacity, silent int) {
	t.Helper()
	req := "POST " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
	for range capacity {
		c := dial(t, addr)
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("flood: answer to a forged request: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Close {
			t.Fatalf("flood: forged request answered %d (close %v), want a kept-alive 401", resp.StatusCode, resp.Close)
		}
	}
	for range silent {
		dial(t, addr)
	}
}

func dial(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
