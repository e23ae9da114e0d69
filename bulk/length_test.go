package bulk_test

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/oauth2"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
)

// sizeRecorder answers every load and records how its body was framed.
type sizeRecorder struct {
	mu   sync.Mutex
	seen []seenBody
}

type seenBody struct {
	contentLength int64 // -1 when chunked
	chunked       bool
	body          []byte
	mediaType     string
	boundary      string
}

func (s *sizeRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	s.mu.Lock()
	s.seen = append(s.seen, seenBody{r.ContentLength, len(r.TransferEncoding) > 0 && r.TransferEncoding[0] == "chunked",
		b, mt, params["boundary"]})
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"integration_id":"int-1","execution_id":"exe-1"}`)
}

func (s *sizeRecorder) last(t *testing.T) seenBody {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen) == 0 {
		t.Fatal("no request reached the server")
	}
	return s.seen[len(s.seen)-1]
}

// TestUploadsSendContentLength: a body whose size is known (a file, a
// bytes or strings reader, a buffer, and the multipart body around any of
// them) goes with a Content-Length, not chunked; a plain reader is
// streamed chunked. What arrives is the whole body, byte for byte.
func TestUploadsSendContentLength(t *testing.T) {
	rec := &sizeRecorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c, err := partner.New(partner.WithBaseURL(srv.URL), partner.WithInsecureHTTP(),
		partner.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "t", TokenType: "Bearer"})))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p := bulk.LoadParams{IntegrationID: "int-1"}
	const data = "id,name\n1,a\n2,b\n"
	path := filepath.Join(t.TempDir(), "d.csv")
	if err := os.WriteFile(path, []byte("skip"+data), 0o600); err != nil {
		t.Fatal(err)
	}
	file := func(t *testing.T) io.Reader {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		f.Seek(4, io.SeekStart) // the body starts at the reader's offset
		return f
	}
	bodies := []struct {
		name  string
		open  func(*testing.T) io.Reader
		sized bool
	}{
		{"file", file, true},
		{"bytes.Reader", func(*testing.T) io.Reader { return bytes.NewReader([]byte(data)) }, true},
		{"strings.Reader", func(*testing.T) io.Reader { return strings.NewReader(data) }, true},
		{"bytes.Buffer", func(*testing.T) io.Reader { return bytes.NewBufferString(data) }, true},
		{"plain", func(*testing.T) io.Reader { return struct{ io.Reader }{strings.NewReader(data)} }, false},
	}
	check := func(t *testing.T, got seenBody, sized bool) {
		t.Helper()
		if sized && (got.chunked || got.contentLength != int64(len(got.body))) {
			t.Errorf("Content-Length %d, chunked %v, for a %d-byte body of known size", got.contentLength, got.chunked, len(got.body))
		}
		if !sized && (!got.chunked || got.contentLength != -1) {
			t.Errorf("Content-Length %d, chunked %v, for a body of unknown size", got.contentLength, got.chunked)
		}
	}
	for _, b := range bodies {
		t.Run("Load/"+b.name, func(t *testing.T) {
			if _, err := c.Bulk.Load(ctx, p, b.open(t)); err != nil {
				t.Fatal(err)
			}
			got := rec.last(t)
			check(t, got, b.sized)
			if string(got.body) != data {
				t.Errorf("body %q", got.body)
			}
		})
		t.Run("LoadAttachment/"+b.name, func(t *testing.T) {
			if _, err := c.Bulk.LoadAttachment(ctx, p, "d.csv", b.open(t)); err != nil {
				t.Fatal(err)
			}
			got := rec.last(t)
			check(t, got, b.sized)
			if got.mediaType != "multipart/form-data" {
				t.Fatalf("Content-Type %q", got.mediaType)
			}
			mr := multipart.NewReader(bytes.NewReader(got.body), got.boundary)
			part, err := mr.NextPart()
			if err != nil {
				t.Fatal(err)
			}
			content, _ := io.ReadAll(part)
			if part.FormName() != "file" || part.FileName() != "d.csv" || string(content) != data ||
				part.Header.Get("Content-Type") != "text/csv" {
				t.Errorf("part %q %q %q %q", part.FormName(), part.FileName(), part.Header.Get("Content-Type"), content)
			}
			if _, err := mr.NextPart(); err != io.EOF {
				t.Errorf("after the file part: %v, want io.EOF", err)
			}
		})
	}
}
