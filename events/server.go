package events

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxConns is the number of connections LimitConns serves at once
// when given n <= 0: more than the service's concurrent deliveries.
const DefaultMaxConns = 256

// NewServer returns an http.Server that serves h with the timeouts a
// webhook receiver needs (see "Serving deliveries" in the package
// documentation):
//
//   - ReadHeaderTimeout: 10 s, the request line and headers, from the
//     moment the connection is accepted or a keep-alive connection's
//     next request starts: a connection that sends nothing is closed
//     after it;
//   - ReadTimeout: 30 s, the whole request, body included;
//   - WriteTimeout: 60 s, from the end of the headers to the end of the
//     answer (ReadTimeout plus 30 s for Deliver; make it longer when
//     Deliver takes longer);
//   - IdleTimeout: 60 s, a keep-alive connection between requests;
//   - MaxHeaderBytes: 16 KiB (a callback path and a few headers);
//   - Protocols: HTTP/1.1 alone, with ServeTLS too. A delivery is one
//     request, which HTTP/2 does not speed up, and LimitConns closes an
//     HTTP/1.1 connection that idles between requests for a newcomer,
//     but an HTTP/2 one only before it begins (see LimitConns).
//
// Serve it on a listener from LimitConns, which caps the connections
// without letting idle ones lock deliveries out. Change a field before
// serving to set another value.
func NewServer(h http.Handler) *http.Server {
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	return &http.Server{
		Protocols:         protocols,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
}

// LimitConns returns a listener that hands srv at most n connections of
// ln at once (DefaultMaxConns when n <= 0), for srv.Serve or srv.ServeTLS.
// It sets srv.ConnState, calling the hook set before it, to learn what
// each connection does: call it before srv serves, once per server.
//
// When n connections are open and another arrives, it closes one that
// is waiting for a request rather than refuse or delay the newcomer: a
// connection that has sent nothing of a request since it was accepted or
// went idle after an answer, the oldest first; failing one, a connection
// whose request has begun but whose headers have not all arrived, the
// oldest first. A connection whose request has been read, which a
// handler may be serving, is never closed: when all n are such, the
// newcomer waits (in the kernel's accept queue beyond it) until one ends.
// So a client that does not know the secret and holds every connection,
// idle or trickling headers, loses them to deliveries, one per new
// connection; it keeps a delivery out only by opening n connections in
// the time a delivery takes to send its headers. A listener that stops
// accepting is the other way to lose deliveries, which netutil's
// LimitListener does when every connection is held.
//
// A connection the server speaks HTTP/2 on (ServeTLS with HTTP/2 turned
// on, which NewServer turns off) is closed for a newcomer only until its
// client has sent the HTTP/2 preface, the start of its first exchange;
// after that, IdleTimeout closes it: HTTP/2 reports the end of a request
// before the answer is flushed, so closing it when it goes idle could
// cut off the answer.
func LimitConns(srv *http.Server, ln net.Listener, n int) net.Listener {
	if n <= 0 {
		n = DefaultMaxConns
	}
	l := &connLimiter{Listener: ln, max: n, conns: map[*limitedConn]struct{}{}, next: srv.ConnState}
	l.cond = sync.NewCond(&l.mu)
	srv.ConnState = l.connState
	return l
}

// connLimiter is LimitConns' listener.
type connLimiter struct {
	net.Listener
	max  int
	next func(net.Conn, http.ConnState) // the server's hook before ours

	mu     sync.Mutex
	cond   *sync.Cond // broadcast when a connection ends or goes idle, and on Close
	conns  map[*limitedConn]struct{}
	seq    uint64 // orders the connections' last changes of state
	closed bool
}

// limitedConn is a connection connLimiter handed out.
type limitedConn struct {
	net.Conn
	l *connLimiter
	// spoke is set once a byte is read since the connection was
	// accepted or went idle.
	spoke atomic.Bool

	// Guarded by l.mu.
	waiting  bool   // accepted or idle: no request read since
	since    uint64 // l.seq when it went waiting
	released bool   // its slot is free
}

func (c *limitedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.spoke.Load() {
		c.spoke.Store(true)
	}
	return n, err
}

func (c *limitedConn) Close() error {
	c.l.mu.Lock()
	c.l.releaseLocked(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// NetConn returns the connection c wraps.
func (c *limitedConn) NetConn() net.Conn { return c.Conn }

func (l *connLimiter) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := &limitedConn{Conn: nc, l: l, waiting: true}
	l.mu.Lock()
	for len(l.conns) >= l.max && !l.closed {
		v := l.victimLocked()
		if v == nil {
			l.cond.Wait()
			continue
		}
		l.releaseLocked(v)
		l.mu.Unlock()
		v.Conn.Close() // its server goroutine sees the error and ends
		l.mu.Lock()
	}
	if l.closed {
		l.mu.Unlock()
		nc.Close()
		return nil, net.ErrClosed
	}
	l.seq++
	c.since = l.seq
	l.conns[c] = struct{}{}
	l.mu.Unlock()
	return c, nil
}

func (l *connLimiter) Close() error {
	l.mu.Lock()
	l.closed = true
	l.cond.Broadcast()
	l.mu.Unlock()
	return l.Listener.Close()
}

// victimLocked returns the connection to close for a newcomer: the
// oldest waiting one that has read nothing, else the oldest waiting one;
// nil when none waits.
func (l *connLimiter) victimLocked() *limitedConn {
	var silent, spoke *limitedConn
	for c := range l.conns {
		if !c.waiting {
			continue
		}
		best := &silent
		if c.spoke.Load() {
			best = &spoke
		}
		if *best == nil || c.since < (*best).since {
			*best = c
		}
	}
	if silent != nil {
		return silent
	}
	return spoke
}

func (l *connLimiter) releaseLocked(c *limitedConn) {
	if c.released {
		return
	}
	c.released = true
	delete(l.conns, c)
	l.cond.Broadcast()
}

// connState follows what the server does with each connection.
func (l *connLimiter) connState(nc net.Conn, st http.ConnState) {
	if c := l.own(nc); c != nil {
		h2 := st == http.StateIdle && servesHTTP2(nc) // before the lock: it takes the TLS handshake's
		l.mu.Lock()
		switch st {
		case http.StateActive:
			c.waiting = false
		case http.StateIdle:
			if h2 {
				// HTTP/2 reports a stream's end before it flushes the
				// answer: closing the connection now could cut it off.
				break
			}
			c.spoke.Store(false)
			c.waiting = true
			l.seq++
			c.since = l.seq
			l.cond.Broadcast()
		case http.StateClosed, http.StateHijacked:
			l.releaseLocked(c)
		}
		l.mu.Unlock()
	}
	if l.next != nil {
		l.next(nc, st)
	}
}

// servesHTTP2 reports whether nc is a TLS connection that negotiated
// HTTP/2.
func servesHTTP2(nc net.Conn) bool {
	tc, ok := nc.(interface{ ConnectionState() tls.ConnectionState })
	return ok && tc.ConnectionState().NegotiatedProtocol == "h2"
}

// own returns the limitedConn of l that nc is or wraps (a *tls.Conn,
// with ServeTLS), or nil.
func (l *connLimiter) own(nc net.Conn) *limitedConn {
	for nc != nil {
		if c, ok := nc.(*limitedConn); ok && c.l == l {
			return c
		}
		u, ok := nc.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		nc = u.NetConn()
	}
	return nil
}
