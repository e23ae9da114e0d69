package bulk

import (
	"bytes"
	"errors"
	"io"
	"mime/multipart"
	"net/textproto"
)

// multipartBody is the multipart/form-data body of LoadAttachment: one
// part named "file" holding the caller's reader. The framing around the
// file (the part's headers before it, the closing boundary after it) is
// built up front, so the body's length is known whenever the file's is,
// and the request carries a Content-Length instead of being chunked. The
// file is read as the body is sent, never buffered.
type multipartBody struct {
	boundary       string
	prefix, suffix []byte
}

func newMultipartBody(boundary, fileName string, f Format) (*multipartBody, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := mw.SetBoundary(boundary); err != nil {
		return nil, err
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", multipart.FileContentDisposition("file", fileName))
	h.Set("Content-Type", f.mediaType())
	if _, err := mw.CreatePart(h); err != nil {
		return nil, err
	}
	prefix := bytes.Clone(buf.Bytes())
	buf.Reset()
	if err := mw.Close(); err != nil {
		return nil, err
	}
	return &multipartBody{boundary: boundary, prefix: prefix, suffix: bytes.Clone(buf.Bytes())}, nil
}

// reader returns the body around r. When r is an io.ReadSeeker the body
// is one too (the transport rewinds it for a repeat and learns its size
// from it); when r has a Len method (a *bytes.Buffer), so has the body.
// Otherwise the body is a plain reader of unknown length.
func (m *multipartBody) reader(r io.Reader) (io.Reader, error) {
	if rs, ok := r.(io.ReadSeeker); ok {
		if start, err := rs.Seek(0, io.SeekCurrent); err == nil {
			return m.seeking(rs, start)
		}
		// A file that cannot seek (a pipe, standard input) is sent once,
		// like any plain reader.
	}
	mr := io.MultiReader(bytes.NewReader(m.prefix), r, bytes.NewReader(m.suffix))
	if l, ok := r.(interface{ Len() int }); ok {
		return &lenReader{Reader: mr, n: len(m.prefix) + l.Len() + len(m.suffix)}, nil
	}
	return mr, nil
}

// seeking returns the body around rs, whose content starts at start.
func (m *multipartBody) seeking(rs io.ReadSeeker, start int64) (io.Reader, error) {
	end, err := rs.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	if _, err := rs.Seek(start, io.SeekStart); err != nil {
		return nil, err
	}
	return &seekingMultipart{m: m, file: rs, start: start, size: end - start}, nil
}

// lenReader is a one-shot body whose length is known.
type lenReader struct {
	io.Reader
	n int
}

func (l *lenReader) Len() int { return l.n }

// seekingMultipart is the body over a seekable file: prefix, the file's
// size bytes from start, suffix. Seeking it seeks the file.
type seekingMultipart struct {
	m           *multipartBody
	file        io.ReadSeeker
	start, size int64
	off         int64 // offset in the whole body
}

func (s *seekingMultipart) len() int64 {
	return int64(len(s.m.prefix)) + s.size + int64(len(s.m.suffix))
}

func (s *seekingMultipart) Read(p []byte) (int, error) {
	pre := int64(len(s.m.prefix))
	switch {
	case s.off < pre:
		n := copy(p, s.m.prefix[s.off:])
		s.off += int64(n)
		return n, nil
	case s.off < pre+s.size:
		left := pre + s.size - s.off
		if int64(len(p)) > left {
			p = p[:left]
		}
		n, err := s.file.Read(p)
		s.off += int64(n)
		if errors.Is(err, io.EOF) {
			if s.off < pre+s.size {
				return n, io.ErrUnexpectedEOF // the file shrank while sent
			}
			err = nil
		}
		return n, err
	case s.off < s.len():
		n := copy(p, s.m.suffix[s.off-pre-s.size:])
		s.off += int64(n)
		return n, nil
	}
	return 0, io.EOF
}

func (s *seekingMultipart) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += s.off
	case io.SeekEnd:
		offset += s.len()
	}
	if offset < 0 {
		return 0, errors.New("partner: bulk: seek before the start of the body")
	}
	inFile := min(max(offset-int64(len(s.m.prefix)), 0), s.size)
	if _, err := s.file.Seek(s.start+inFile, io.SeekStart); err != nil {
		return 0, err
	}
	s.off = offset
	return offset, nil
}
