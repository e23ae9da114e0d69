package bulk_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/oauth2"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)

// Bodies stream: the SDK never reads more than a small, fixed window of a
// body ahead of what the server has received, whatever the body's size.
// The client and the server talk over net.Pipe, which buffers nothing, so
// the distance between the bytes the SDK has read from the caller's
// reader and the bytes the server has read from the request is what the
// HTTP machinery holds in memory. A client that buffered the body (as
// go-retryablehttp does with a plain reader) would read all of it before
// the server saw the first byte.
const (
	streamBodySize = 8 << 20 // much larger than maxStreamLag
	maxStreamLag   = 1 << 20 // generous: net/http holds a few 4-32 KiB buffers
)

func TestBodiesStreamInBoundedMemory(t *testing.T) {
	var read atomic.Int64 // bytes the SDK has read from the caller's body
	srv := newStreamServer(&read, nil)
	defer srv.close()
	c, err := partner.New(partner.WithBaseURL("http://127.0.0.1:9"),
		partner.WithHTTPClient(&http.Client{Transport: &http.Transport{DialContext: srv.dial}}),
		partner.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "t", TokenType: "Bearer"})))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p := bulk.LoadParams{IntegrationID: "int-1"}

	// A file of streamBodySize bytes that takes no disk space.
	path := filepath.Join(t.TempDir(), "big.csv")
	if f, err := os.Create(path); err != nil {
		t.Fatal(err)
	} else if err := f.Truncate(streamBodySize); err != nil {
		t.Fatal(err)
	} else {
		f.Close()
	}
	file := func(t *testing.T) io.Reader {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return &countingFile{f: f, n: &read}
	}
	plain := func(*testing.T) io.Reader { return &csvSource{left: streamBodySize, n: &read} }

	for _, tc := range []struct {
		name string
		body func(*testing.T) io.Reader
		send func(io.Reader) error
	}{
		{"Load/file", file, func(r io.Reader) error { _, err := c.Bulk.Load(ctx, p, r); return err }},
		{"Load/reader", plain, func(r io.Reader) error { _, err := c.Bulk.Load(ctx, p, r); return err }},
		{"LoadAttachment/file", file, func(r io.Reader) error {
			_, err := c.Bulk.LoadAttachment(ctx, p, "big.csv", r)
			return err
		}},
		{"LoadOpportunities/reader", plain, func(r io.Reader) error {
			_, err := c.Bulk.LoadOpportunities(ctx, bulk.LoadOpportunitiesParams{IntegrationID: "int-1"}, r)
			return err
		}},
		{"Upload/file", file, func(r io.Reader) error {
			return c.Bulk.Upload(ctx, &bulk.Ticket{UploadURL: "http://127.0.0.1:9/upload/x", UploadToken: "tok"}, bulk.UploadParams{}, r)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read.Store(0)
			srv.reset()
			if err := tc.send(tc.body(t)); err != nil {
				t.Fatal(err)
			}
			received, lag := srv.result()
			if received < streamBodySize || read.Load() != streamBodySize {
				t.Errorf("server received %d bytes, SDK read %d; want %d", received, read.Load(), streamBodySize)
			}
			if lag > maxStreamLag {
				t.Errorf("the SDK read %d bytes ahead of the server, want at most %d: the body is buffered", lag, maxStreamLag)
			}
		})
	}
}

// streamServer answers every request over net.Pipe connections, reading
// the body and recording how far the SDK's reads ran ahead of it.
type streamServer struct {
	conns  chan net.Conn
	done   chan struct{}
	hs     *http.Server
	wg     sync.WaitGroup
	read   *atomic.Int64
	mu     sync.Mutex
	got    int64
	maxLag int64
}

// newStreamServer serves h, or when h is nil its own handler, which reads
// every body and compares the bytes received with read.
func newStreamServer(read *atomic.Int64, h http.Handler) *streamServer {
	s := &streamServer{conns: make(chan net.Conn), done: make(chan struct{}), read: read}
	if h == nil {
		h = http.HandlerFunc(s.serve)
	}
	s.hs = &http.Server{Handler: h}
	s.wg.Go(func() { s.hs.Serve(s) })
	return s
}

func (s *streamServer) serve(w http.ResponseWriter, r *http.Request) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Body.Read(buf)
		s.mu.Lock()
		s.got += int64(n)
		if lag := s.read.Load() - s.got; lag > s.maxLag {
			s.maxLag = lag
		}
		s.mu.Unlock()
		if err != nil {
			break
		}
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"integration_id":"int-1","execution_id":"ex-1","created_at":"2026-01-01T00:00:00Z"}`)
}

func (s *streamServer) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got, s.maxLag = 0, 0
}

func (s *streamServer) result() (received, maxLag int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got, s.maxLag
}

func (s *streamServer) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case s.conns <- server:
		return client, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Accept, Close and Addr make the server a net.Listener of pipe ends.
func (s *streamServer) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.done:
		return nil, net.ErrClosed
	}
}

func (s *streamServer) Close() error { return nil }

func (s *streamServer) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9} }

func (s *streamServer) close() {
	close(s.done)
	s.hs.Close() // and the connections
	s.wg.Wait()
}

// csvSource is a plain io.Reader of left bytes: csvLine over and over.
// It counts the bytes read in n.
type csvSource struct {
	left int64
	n    *atomic.Int64
	pos  int // in csvLine
}

const csvLine = "CRM-000001,Some opportunity name,proposal,12345.67\n"

// csvLines is csvLine over and over, a little more than 64 KiB of it.
var csvLines = strings.Repeat(csvLine, 64<<10/len(csvLine)+1)

func (c *csvSource) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), c.left)]
	for i := 0; i < len(p); {
		n := copy(p[i:], csvLines[c.pos:])
		i += n
		c.pos = (c.pos + n) % len(csvLine)
	}
	c.left -= int64(len(p))
	if c.n != nil {
		c.n.Add(int64(len(p)))
	}
	return len(p), nil
}

// countingFile is a file as an io.ReadSeeker (so the SDK may rewind it)
// that counts the bytes read from it. It hides the other methods of
// *os.File (WriteTo would bypass the count).
type countingFile struct {
	f *os.File
	n *atomic.Int64
}

func (c *countingFile) Read(p []byte) (int, error) {
	n, err := c.f.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingFile) Seek(offset int64, whence int) (int64, error) {
	return c.f.Seek(offset, whence)
}

// TestFakeParsesLoadsAsTheyStream: the fake parses a load as it reads it.
// A CSV body whose line 10,002 is malformed, followed by 256 MiB more, is
// refused with a 400 naming the line once the fake has read at most its
// drain allowance (32 MiB) past the bad line: over net.Pipe the client
// cannot send faster than the fake reads, so the bytes sent bound the
// bytes the fake has read.
func TestFakeParsesLoadsAsTheyStream(t *testing.T) {
	f := fake.New(fake.WithDemoData(), fake.WithBulkDiscard(), mocktest.ContractCheck(t))
	defer f.Close()
	var sent atomic.Int64
	srv := newStreamServer(&sent, f)
	defer srv.close()
	c, err := partner.New(partner.WithBaseURL("http://127.0.0.1:9"),
		partner.WithHTTPClient(&http.Client{Transport: &http.Transport{DialContext: srv.dial}}),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret))
	if err != nil {
		t.Fatal(err)
	}
	const after = 256 << 20
	body := &countingReader{n: &sent, r: io.MultiReader(
		strings.NewReader("sales_details.crm_opportunity_id,name,stage,amount\n"),
		&csvSource{left: 10_000 * int64(len(csvLine))},
		strings.NewReader("CRM-BAD,one,field,too,many\n"),
		&csvSource{left: after},
	)}
	_, err = c.Bulk.Load(context.Background(), bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, body)
	var perr *partner.Error
	if !errors.As(err, &perr) || !partner.IsBadRequest(err) || !strings.Contains(perr.Message, "line 10002") {
		t.Fatalf("err = %v, want a 400 naming line 10002", err)
	}
	if n := sent.Load(); n > 64<<20 {
		t.Errorf("the fake read %d MiB before refusing a body malformed in its first MiB: it does not stream", n>>20)
	}
}

// countingReader counts the bytes read from r in n.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
