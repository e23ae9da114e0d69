package contract

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
)

// maxChecked caps the bodies the Middleware keeps to check: a larger
// body is served as usual; of a larger request the parameters are still
// checked, a larger answer is not checked at all.
const maxChecked = 8 << 20

// sdkAgent starts the User-Agent of every request the SDK sends.
const sdkAgent = "partner-go/"

// Middleware returns a wrapper of a service's handler (such as the fake,
// through fake.WithMiddleware) that checks every exchange and calls
// report with each Violation, after the handler has answered. A request
// of the SDK (its User-Agent) must match an operation; a test's own
// requests to no operation pass unchecked (tests send them on purpose).
// A request that breaks its operation's parameters, security or body is
// a violation when the handler accepted it (2xx); refused, it shows the
// handler enforcing the contract (tests send bad input on purpose,
// through the SDK too). Every answer to an operation is checked. The
// body streams to the handler as the client sends it, a copy kept on the
// way; a body the handler did not read to its end is not checked.
// Answers are checked as written: not when the connection was taken over
// (a dropped or cut answer), the answer went past maxChecked, or the
// client went away before the answer was whole.
func (c *Checker) Middleware(report func(*Violation)) func(http.Handler) http.Handler {
	return Capture(func(r *http.Request, body []byte, a Answer) {
		x, v := c.CheckRequest(r, body)
		switch {
		case x == nil:
			if strings.HasPrefix(r.Header.Get("User-Agent"), sdkAgent) {
				report(v)
			}
			return
		case v != nil && a.Status/100 == 2:
			report(v)
		}
		if !a.Whole {
			return
		}
		if v := x.CheckResponse(a.Status, a.Header, a.Body); v != nil {
			report(v)
		}
	})
}

// Answer is what a handler answered, as Capture saw it.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
	// Whole is false when the connection was taken over, the body
	// went past maxChecked or the client went away before it was whole:
	// Body is then not the answer.
	Whole bool
}

// Capture returns a wrapper of a handler that serves each request with
// it, keeping a copy of the request's body as the handler reads it and
// of the answer as written, then calls check with the request, its body
// (nil unless the handler read it to its end within maxChecked) and the
// answer.
func Capture(check func(r *http.Request, body []byte, a Answer)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tee := &teeBody{rc: r.Body}
			r.Body = tee
			rec := &recorder{ResponseWriter: w}
			next.ServeHTTP(rec, r)
			if rec.status == 0 {
				rec.status = http.StatusOK
			}
			check(r, tee.complete(), Answer{
				Status: rec.status,
				Header: rec.Header(),
				Body:   rec.body.buf.Bytes(),
				Whole:  !rec.hijacked && !rec.body.over && r.Context().Err() == nil,
			})
		})
	}
}

// recorder passes an answer through and keeps its status and a copy of
// its body, up to maxChecked.
type recorder struct {
	http.ResponseWriter
	status   int
	body     capped
	hijacked bool
}

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.body.write(p)
	return w.ResponseWriter.Write(p)
}

// Flush passes a flush on (a slow answer's pieces).
func (w *recorder) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

// Hijack passes the connection on; the answer is then not checked.
func (w *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.hijacked = true
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// capped keeps the bytes written to it until they pass maxChecked, then
// none (over).
type capped struct {
	buf  bytes.Buffer
	over bool
}

func (c *capped) write(p []byte) {
	switch {
	case c.over:
	case c.buf.Len()+len(p) > maxChecked:
		c.over, c.buf = true, bytes.Buffer{}
	default:
		c.buf.Write(p)
	}
}

// teeBody keeps a copy of what is read through it, up to maxChecked.
type teeBody struct {
	rc  io.ReadCloser
	buf capped
	eof bool
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.buf.write(p[:n])
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

func (b *teeBody) Close() error { return b.rc.Close() }

// complete returns the whole body when it was read to its end and kept,
// else nil.
func (b *teeBody) complete() []byte {
	if !b.eof || b.buf.over {
		return nil
	}
	return b.buf.buf.Bytes()
}
