// Package h2fault is a test harness: a real HTTP/2 server over TLS,
// written at the frame level with golang.org/x/net/http2's Framer, that
// does with each request what a test asks (answer it, reset its stream,
// send GOAWAY), and counts what it processed. It answers HTTP/2 pings.
package h2fault

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Act is what the server does with a request once it has read it whole
// (headers and body).
type Act int

const (
	// Answer answers 200 with the JSON body Server.Body.
	Answer Act = iota
	// ResetProtocol resets the stream with PROTOCOL_ERROR: the request
	// was read (and counts as processed), its answer never comes. HTTP/2
	// clients take such a reset as retryable.
	ResetProtocol
	// Refuse resets the stream with REFUSED_STREAM: not processed.
	Refuse
	// GoAwayCovering sends GOAWAY with the stream's id, which says the
	// request was received, and closes the connection: processed, its
	// answer lost.
	GoAwayCovering
	// GoAwayBelow sends GOAWAY with a last stream id below the
	// request's, and closes the connection: certainly not processed.
	GoAwayBelow
)

// Fault chooses the Act for the request numbered n on the server (from
// 0), read on the connection numbered conn (from 0).
type Fault func(n, conn int) Act

// Server is the HTTP/2 server. Its counters may be read and reset while
// it runs.
type Server struct {
	URL string
	// Roots trusts the server's certificate.
	Roots *x509.CertPool
	// Body is the answer of Answer ({"ok":true} unless set before the
	// first request).
	Body []byte
	// GoAwayDebug is the debug data of the GOAWAY frames the server
	// sends (none unless set before the first request): any text a
	// server likes.
	GoAwayDebug []byte
	// Requests counts the requests read whole; Processed those the
	// server processed (answered, reset after reading, covered by a
	// GOAWAY).
	Requests, Processed atomic.Int32

	fault Fault
	conns atomic.Int32
	srv   *httptest.Server
	wg    sync.WaitGroup
}

// New starts a Server that does with each request what fault says; it
// is closed when the test ends.
func New(t testing.TB, fault Fault) *Server {
	s := &Server{fault: fault, Body: []byte(`{"ok":true}`)}
	s.srv = httptest.NewUnstartedServer(http.NotFoundHandler())
	s.srv.TLS = &tls.Config{NextProtos: []string{"h2"}}
	s.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // a client that leaves mid-handshake
	s.srv.Config.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){
		"h2": func(_ *http.Server, c *tls.Conn, _ http.Handler) {
			s.wg.Add(1)
			defer s.wg.Done()
			s.serve(c, int(s.conns.Add(1))-1)
		},
	}
	s.srv.StartTLS()
	s.URL = s.srv.URL
	s.Roots = s.srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	t.Cleanup(func() { s.srv.CloseClientConnections(); s.srv.Close(); s.wg.Wait() })
	return s
}

// Always is a Fault that does act with every request.
func Always(act Act) Fault { return func(int, int) Act { return act } }

// FirstThen is a Fault that does first with the first request, then
// answers every other.
func FirstThen(first Act) Fault {
	return func(n, _ int) Act {
		if n == 0 {
			return first
		}
		return Answer
	}
}

func (s *Server) serve(c net.Conn, conn int) {
	defer c.Close()
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	fr := http2.NewFramer(c, c)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if fr.WriteSettings() != nil {
		return
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		ended, ok := s.frame(fr, f)
		if !ok || ended && !s.act(fr, f.Header().StreamID, conn) {
			return
		}
	}
}

// frame answers a frame that is not a request's end (settings, pings,
// flow control), and reports whether it ends a request, and false when
// the connection failed.
func (s *Server) frame(fr *http2.Framer, f http2.Frame) (ended, ok bool) {
	switch f := f.(type) {
	case *http2.SettingsFrame:
		if !f.IsAck() && fr.WriteSettingsAck() != nil {
			return false, false
		}
	case *http2.PingFrame:
		if !f.IsAck() && fr.WritePing(true, f.Data) != nil {
			return false, false
		}
	case *http2.MetaHeadersFrame:
		return f.StreamEnded(), true
	case *http2.DataFrame:
		if n := uint32(len(f.Data())); n > 0 {
			fr.WriteWindowUpdate(0, n)
			fr.WriteWindowUpdate(f.StreamID, n)
		}
		return f.StreamEnded(), true
	}
	return false, true
}

// act does the fault's Act with the request on stream id; false when it
// closed the connection.
func (s *Server) act(fr *http2.Framer, id uint32, conn int) bool {
	switch s.fault(int(s.Requests.Add(1))-1, conn) {
	case Answer:
		s.Processed.Add(1)
		var hb bytes.Buffer
		enc := hpack.NewEncoder(&hb)
		enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
		enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/json"})
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true})
		fr.WriteData(id, true, s.Body)
	case ResetProtocol:
		s.Processed.Add(1)
		fr.WriteRSTStream(id, http2.ErrCodeProtocol)
	case Refuse:
		fr.WriteRSTStream(id, http2.ErrCodeRefusedStream)
	case GoAwayCovering:
		s.Processed.Add(1)
		fr.WriteGoAway(id, http2.ErrCodeNo, s.GoAwayDebug)
		return false
	case GoAwayBelow:
		fr.WriteGoAway(id-min(id, 2), http2.ErrCodeNo, s.GoAwayDebug)
		return false
	}
	return true
}
