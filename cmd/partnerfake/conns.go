package main

import (
	"net"
	"net/http"
	"sync"
)

// idleCap keeps at most max keep-alive connections idle: a connection
// that goes idle past them is closed at once. With the listener's cap on
// connections (-max-connections), idle connections then cannot hold every
// slot: a quarter stays for new clients, whatever a client that opens
// connections and leaves them idle does (idle ones are closed after
// -idle-timeout anyway).
type idleCap struct {
	mu   sync.Mutex
	max  int
	idle map[net.Conn]bool
}

func newIdleCap(maxConns int) *idleCap {
	return &idleCap{max: max(maxConns*3/4, 1), idle: map[net.Conn]bool{}}
}

// connState is the server's ConnState hook.
func (c *idleCap) connState(conn net.Conn, state http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch state {
	case http.StateIdle:
		if len(c.idle) >= c.max {
			conn.Close()
			return
		}
		c.idle[conn] = true
	default:
		delete(c.idle, conn)
	}
}
