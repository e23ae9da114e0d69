package fake

// Reading a workbook's zip archive within the fake's limits: the body
// held in chunks (no copy doubles it; uploads and the spool hold theirs
// in the same chunks), and the central directory read only up to its
// cap.

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
)

// readerAtSize is a body that can be read at any offset: an uploaded file
// already held, or a body read by readWhole.
type readerAtSize interface {
	io.ReaderAt
	Size() int64
}

// chunkSize is the size of the pieces a body is held in: a workbook
// (readWhole), an uploaded file (readChunks) and the spool's memory.
const chunkSize = 1 << 20

// chunks is a body held in pieces of chunkSize bytes, all full but the
// last.
type chunks struct {
	bufs [][]byte
	size int64
}

func (c *chunks) Size() int64 { return c.size }

func (c *chunks) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	n := 0
	for n < len(p) && off < c.size {
		b := c.bufs[off/chunkSize][off%chunkSize:]
		k := copy(p[n:], b)
		n += k
		off += int64(k)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// readWhole returns body as a readerAtSize: as it is when it already is
// one in memory (an uploaded file), else read into chunks. A body of more
// than limit bytes is refused with 413 once limit bytes are read.
func readWhole(body io.Reader, limit int64) (readerAtSize, error) {
	if ra, ok := body.(readerAtSize); ok {
		if ra.Size() > limit {
			return nil, xlsxTooLarge(limit)
		}
		return ra, nil
	}
	c, err := readChunks(body, limit)
	if err != nil {
		return nil, err
	}
	if c.size > limit {
		return nil, xlsxTooLarge(limit)
	}
	return c, nil
}

// readChunks reads r into chunks, up to limit bytes and at most a chunk
// more: a result larger than limit says r holds more. Unlike io.ReadAll
// it never holds a body twice while it grows.
func readChunks(r io.Reader, limit int64) (*chunks, error) {
	c := &chunks{}
	for c.size <= limit {
		buf := make([]byte, min(chunkSize, limit+1-c.size))
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			c.bufs = append(c.bufs, buf[:n:n])
			c.size += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return c, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

func xlsxTooLarge(limit int64) error {
	return &badInput{status: 413, msg: fmt.Sprintf("XLSX file larger than %d bytes (the fake's limit)", limit)}
}

// errZipDirectory is the failure of a directory read past its budget.
var errZipDirectory = errors.New("zip directory too large")

// budgetReaderAt serves zip.NewReader at most left bytes: the search for
// the end of the directory (up to 65 KiB, twice) and the directory itself.
type budgetReaderAt struct {
	r    io.ReaderAt
	left int64
}

func (b *budgetReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if int64(len(p)) > b.left {
		return 0, errZipDirectory
	}
	b.left -= int64(len(p))
	return b.r.ReadAt(p, off)
}

// openZip reads the zip directory of data, refusing one of more than
// maxXLSXDirectory bytes or maxXLSXEntries entries before reading on.
func openZip(data readerAtSize) (*zip.Reader, error) {
	const search = 2 * (65*1024 + 1024) // the end record's search, and its zip64 form
	budget := &budgetReaderAt{r: data, left: search + maxXLSXDirectory + 4096}
	zr, err := zip.NewReader(budget, data.Size())
	switch {
	case errors.Is(err, errZipDirectory):
		return nil, badInputf("XLSX file: the zip directory is larger than %d bytes (the fake's limit)", maxXLSXDirectory)
	case err != nil:
		return nil, badInputf("malformed XLSX file: %v", err)
	case len(zr.File) > maxXLSXEntries:
		return nil, badInputf("XLSX file: the zip archive has more than %d entries (the fake's limit)", maxXLSXEntries)
	}
	budget.left = 1<<63 - 1 // the parts are read within their own budget
	return zr, nil
}
