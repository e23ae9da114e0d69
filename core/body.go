package core

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"

	"github.com/partnerapi/partner-go/internal/check"
)

// BodyFunc opens a fresh copy of a request body for each attempt. The
// returned reader is closed after the attempt when it is an io.Closer.
type BodyFunc func() (io.Reader, error)

// body is the single source of a request body across every attempt of a
// request. Each attempt gets a lazy reader: nothing is opened, rewound or
// consumed until the HTTP client starts reading, so an attempt that fails
// before writing leaves the source untouched and a plain reader can still
// be sent by the next one. It never buffers the body.
type body struct {
	mu       sync.Mutex
	open     func() (io.Reader, error) // nil for a one-shot reader and a seeker
	seeker   io.ReadSeeker             // a shared seekable body
	start    int64                     // the seeker's offset when the request began
	gen      int                       // attempts that started reading the seeker
	once     io.Reader                 // the one-shot reader
	consumed bool                      // the one-shot reader has been read from
	size     int64                     // -1 when unknown
	// reopen opens a file body anew for each attempt (fileReopener).
	reopen func() (io.Reader, error)
	// mem is the whole body when it is in memory (an encoded JSON
	// body): go-retryablehttp sends it as a *bytes.Reader per attempt,
	// which net/http writes with the headers in one go.
	mem []byte
}

func newBody(r io.Reader, fn BodyFunc, jsonBytes []byte) (*body, error) {
	switch {
	case jsonBytes != nil:
		return &body{open: func() (io.Reader, error) { return bytes.NewReader(jsonBytes), nil }, size: int64(len(jsonBytes)), mem: jsonBytes}, nil
	case fn != nil:
		return &body{open: fn, size: -1}, nil
	case r == nil:
		return nil, nil
	}
	if err := check.Reader(r); err != nil {
		return nil, err
	}
	if rs, ok := r.(io.ReadSeeker); ok {
		start, err := rs.Seek(0, io.SeekCurrent)
		if err != nil {
			// A file that cannot seek (a pipe, standard input) is sent
			// once, like any plain reader.
			return &body{once: r, size: -1}, nil
		}
		end, err := rs.Seek(0, io.SeekEnd)
		if err != nil {
			return nil, fmt.Errorf("preparing body: %w", err)
		}
		if _, err := rs.Seek(start, io.SeekStart); err != nil {
			return nil, fmt.Errorf("preparing body: %w", err)
		}
		if f, ok := r.(*os.File); ok {
			if reopen := fileReopener(f, start); reopen != nil {
				return &body{reopen: reopen, size: end - start}, nil
			}
		}
		return &body{seeker: rs, start: start, size: end - start}, nil
	}
	size := int64(-1)
	if l, ok := r.(interface{ Len() int }); ok {
		// A *bytes.Buffer, or a body that knows its length: sent with a
		// Content-Length rather than chunked.
		size = int64(l.Len())
	}
	return &body{once: r, size: size}, nil
}

// replayable reports whether another attempt can send the whole body.
func (b *body) replayable() bool {
	if b == nil || b.open != nil || b.seeker != nil || b.reopen != nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.consumed
}

// attempt returns the reader for one attempt.
func (b *body) attempt() (io.Reader, error) {
	if b.reopen != nil {
		return b.reopen()
	}
	return &lazyReader{b: b}, nil
}

// fileReopener returns a function that opens the regular file f again,
// independently of f (with an offset of its own), positioned at start.
// Each attempt then sends its own *os.File, which net/http writes to the
// connection with sendfile (no copy through user space, as a raw POST of
// the file does), and which no later attempt can rewind under it. It
// returns nil where that is not possible (not Linux, not a regular file,
// no /proc), and the body is read through f as a rewindable seeker.
func fileReopener(f *os.File, start int64) func() (io.Reader, error) {
	if runtime.GOOS != "linux" {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	var path string
	if err := rc.Control(func(fd uintptr) { path = "/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10) }); err != nil {
		return nil
	}
	open := func() (*os.File, error) {
		g, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		if gi, err := g.Stat(); err != nil || !os.SameFile(fi, gi) {
			g.Close()
			return nil, fmt.Errorf("body file %s changed while it was sent", f.Name())
		}
		if _, err := g.Seek(start, io.SeekStart); err != nil {
			g.Close()
			return nil, err
		}
		return g, nil
	}
	g, err := open()
	if err != nil {
		return nil
	}
	g.Close()
	return func() (io.Reader, error) { return open() }
}

type lazyReader struct {
	b   *body
	r   io.Reader
	gen int // the seeker generation this attempt reads
	err error
}

func (l *lazyReader) Read(p []byte) (int, error) {
	if l.r == nil && l.err == nil {
		l.r, l.gen, l.err = l.b.begin()
	}
	if l.err != nil {
		return 0, l.err
	}
	if l.b.seeker != nil {
		// The transport may still be reading an earlier attempt's body
		// when the next attempt rewinds the shared seeker: serialise the
		// reads and cut the stale attempt off.
		l.b.mu.Lock()
		defer l.b.mu.Unlock()
		if l.gen != l.b.gen {
			return 0, errStaleAttempt
		}
	}
	return l.r.Read(p)
}

func (l *lazyReader) Close() error {
	if c, ok := l.r.(io.Closer); ok && l.b.open != nil {
		return c.Close()
	}
	return nil
}

// begin opens, rewinds or claims the source for one attempt.
func (b *body) begin() (io.Reader, int, error) {
	if b.open != nil {
		r, err := b.open()
		return r, 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seeker != nil {
		if _, err := b.seeker.Seek(b.start, io.SeekStart); err != nil {
			return nil, 0, err
		}
		b.gen++
		return b.seeker, b.gen, nil // never closed: the caller owns it
	}
	if b.consumed {
		return nil, 0, ErrBodyNotReplayable
	}
	b.consumed = true
	return b.once, 0, nil // never closed: the caller owns it
}
