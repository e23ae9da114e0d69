package fake

// The spool of a load: a load reads its body once to check it whole, and
// applies it from the spool, so that a refused body changes nothing (see
// area_bulk.go).

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
)

// spoolMemory is how much of a body a load keeps in memory; past it the
// spool is a temporary file.
const spoolMemory = 4 << 20

// spool keeps the bytes written to it: in memory, in chunks, up to limit
// bytes, then in a temporary file in dir (os.TempDir when empty), which
// close removes.
type spool struct {
	limit int64
	mem   chunks
	file  *os.File
	size  int64
	// spilled is called when the spool moves to a file.
	spilled func()
	// dir is the directory of its file ("": os.TempDir).
	dir string
	// total, when set, counts the bytes of every load's spool within
	// its cap; reserved is this spool's part of it, given back by close.
	total    *bulkStore
	reserved int64
}

// spoolFull is the error of a body that would pass the spools' total:
// a 413, as every size refusal.
func spoolFull(max int64) error {
	return &badInput{status: http.StatusRequestEntityTooLarge,
		msg: fmt.Sprintf("the fake's loads running hold %d bytes of bodies, its limit (fake.Limits.SpoolBytes, partnerfake -max-spool-bytes)", max)}
}

// spoolError is a failure of the fake's own spool (its temporary file),
// not of the body: the load is answered 500.
type spoolError struct{ err error }

func (e *spoolError) Error() string { return "the fake's spool of the body: " + e.err.Error() }
func (e *spoolError) Unwrap() error { return e.err }

func (s *spool) Write(p []byte) (int, error) {
	if s.total != nil {
		if !s.total.reserveSpool(int64(len(p))) {
			return 0, spoolFull(s.total.maxSpoolBytes)
		}
		s.reserved += int64(len(p))
	}
	if s.file == nil && s.size+int64(len(p)) > s.limit {
		if err := s.spill(); err != nil {
			return 0, &spoolError{err}
		}
	}
	if s.file != nil {
		n, err := s.file.Write(p)
		s.size += int64(n)
		if err != nil {
			return n, &spoolError{err}
		}
		return n, nil
	}
	for q := p; len(q) > 0; {
		last := len(s.mem.bufs) - 1
		if last < 0 || len(s.mem.bufs[last]) == chunkSize {
			s.mem.bufs = append(s.mem.bufs, nil)
			last++
		}
		b := s.mem.bufs[last]
		k := min(len(q), chunkSize-len(b))
		if len(b)+k > cap(b) {
			// Grown by doubling while small, then to a whole chunk, so
			// that a large body does not leave a chunk's worth of garbage.
			c := max(2*cap(b), len(b)+k, 4<<10)
			if c > 64<<10 {
				c = chunkSize
			}
			b = append(make([]byte, 0, c), b...)
		}
		s.mem.bufs[last] = append(b, q[:k]...)
		q = q[k:]
	}
	s.size += int64(len(p))
	s.mem.size = s.size
	return len(p), nil
}

// spill moves what the spool holds to a temporary file.
func (s *spool) spill() error {
	f, err := os.CreateTemp(s.dir, "partnerfake-load-*")
	if err != nil {
		return err
	}
	s.file = f
	if s.spilled != nil {
		s.spilled()
	}
	for _, b := range s.mem.bufs {
		if _, err := f.Write(b); err != nil {
			return err
		}
	}
	s.mem = chunks{}
	return nil
}

// reader returns a reader of what was written.
func (s *spool) reader() io.Reader {
	if s.file != nil {
		return io.NewSectionReader(&spoolFile{s.file}, 0, s.size)
	}
	return io.NewSectionReader(&s.mem, 0, s.size)
}

// close lets go of what the spool holds and removes its file.
func (s *spool) close() error {
	s.mem = chunks{}
	if s.total != nil {
		s.total.spooled.Add(-s.reserved)
		s.reserved = 0
	}
	if s.file == nil {
		return nil
	}
	err := errors.Join(s.file.Close(), os.Remove(s.file.Name()))
	s.file = nil
	return err
}

// spoolFile reads the spool's file, its failures spoolErrors.
type spoolFile struct{ f *os.File }

func (r *spoolFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.f.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		err = &spoolError{fmt.Errorf("reading %s: %w", r.f.Name(), err)}
	}
	return n, err
}
