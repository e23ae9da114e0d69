package fake

import (
	"bytes"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"time"
)

// bufferedAnswer records a handler's answer so that a fault can send it
// badly (Fault.Truncate, Fault.Dribble).
type bufferedAnswer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newBufferedAnswer() *bufferedAnswer { return &bufferedAnswer{header: http.Header{}} }

func (b *bufferedAnswer) Header() http.Header { return b.header }

func (b *bufferedAnswer) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedAnswer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *bufferedAnswer) code() int {
	if b.status == 0 {
		return http.StatusOK
	}
	return b.status
}

// sendTruncated writes the status line and headers, announcing the whole
// body, then half of the body, and closes the connection.
func (b *bufferedAnswer) sendTruncated(w http.ResponseWriter) {
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	defer conn.Close()
	body := b.body.Bytes()
	fmt.Fprintf(rw, "HTTP/1.1 %d %s\r\n", b.code(), http.StatusText(b.code()))
	b.header.Set("Content-Length", strconv.Itoa(len(body)))
	b.header.Set("Connection", "close")
	b.header.Del("Transfer-Encoding")
	b.header.Write(rw)
	rw.WriteString("\r\n")
	rw.Write(body[:len(body)/2])
	rw.Flush()
}

// sendDribbled sends the answer with its body in 16-byte pieces, pause
// apart, until done or stop is closed, which cut it off: the connection
// closes rather than the handler returning with part of a body.
func (b *bufferedAnswer) sendDribbled(w http.ResponseWriter, pause time.Duration, done, stop <-chan struct{}) {
	maps.Copy(w.Header(), b.header)
	body := b.body.Bytes()
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(b.code())
	rc := http.NewResponseController(w)
	for len(body) > 0 {
		n := min(16, len(body))
		if _, err := w.Write(body[:n]); err != nil {
			dropConnection(w)
			return
		}
		rc.Flush()
		body = body[n:]
		if len(body) == 0 {
			return
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-done:
			t.Stop()
			dropConnection(w)
			return
		case <-stop:
			// The answer stops short: the connection closes rather
			// than the handler returning with part of a body.
			t.Stop()
			dropConnection(w)
			return
		}
	}
}
