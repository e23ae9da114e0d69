package transport

import (
	"bytes"
	"errors"
	"io"
	"sync"
)

// ErrBodyNotReplayable is returned when a request must be sent again (a
// retry, or the repeat after a refreshed token) but its body came from a
// plain io.Reader that has already been read. Pass an io.ReadSeeker (an
// *os.File, say) or a BodyFunc to make such bodies replayable.
var ErrBodyNotReplayable = errors.New("partner: request body was already sent and cannot be replayed; pass an io.ReadSeeker to allow retries")

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
	open     func() (io.Reader, error) // nil for a one-shot reader
	once     io.Reader                 // the one-shot reader
	consumed bool                      // the one-shot reader has been read from
	size     int64                     // -1 when unknown
}

func newBody(r io.Reader, fn BodyFunc, jsonBytes []byte) (*body, error) {
	switch {
	case jsonBytes != nil:
		return &body{open: func() (io.Reader, error) { return bytes.NewReader(jsonBytes), nil }, size: int64(len(jsonBytes))}, nil
	case fn != nil:
		return &body{open: fn, size: -1}, nil
	case r == nil:
		return nil, nil
	}
	if rs, ok := r.(io.ReadSeeker); ok {
		start, err := rs.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil, err
		}
		end, err := rs.Seek(0, io.SeekEnd)
		if err != nil {
			return nil, err
		}
		if _, err := rs.Seek(start, io.SeekStart); err != nil {
			return nil, err
		}
		return &body{
			open: func() (io.Reader, error) {
				if _, err := rs.Seek(start, io.SeekStart); err != nil {
					return nil, err
				}
				return io.NopCloser(rs), nil
			},
			size: end - start,
		}, nil
	}
	return &body{once: r, size: -1}, nil
}

// replayable reports whether another attempt can send the whole body.
func (b *body) replayable() bool {
	if b == nil || b.open != nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.consumed
}

// attempt returns the reader for one attempt.
func (b *body) attempt() (io.Reader, error) {
	return &lazyReader{b: b}, nil
}

type lazyReader struct {
	b   *body
	r   io.Reader
	err error
}

func (l *lazyReader) Read(p []byte) (int, error) {
	if l.r == nil && l.err == nil {
		l.r, l.err = l.b.start()
	}
	if l.err != nil {
		return 0, l.err
	}
	return l.r.Read(p)
}

func (l *lazyReader) Close() error {
	if c, ok := l.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (b *body) start() (io.Reader, error) {
	if b.open != nil {
		return b.open()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.consumed {
		return nil, ErrBodyNotReplayable
	}
	b.consumed = true
	return struct{ io.Reader }{b.once}, nil // the caller closes its own reader
}
