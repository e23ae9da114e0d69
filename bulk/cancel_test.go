package bulk_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
)

// TestUploadsCancelledMidBody: cancelling the context while a body is
// being sent to a server that does not read it ends LoadAttachment (a
// body copied through a pipe by a goroutine), Load and Upload with
// context.Canceled, and leaves no goroutine behind.
func TestUploadsCancelledMidBody(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	c, ts, stop := stallingClient(t, nil)
	defer stop()
	p := bulk.LoadParams{IntegrationID: "int-1"}
	for name, send := range map[string]func(ctx context.Context, r io.Reader) error{
		"LoadAttachment": func(ctx context.Context, r io.Reader) error {
			_, err := c.Bulk.LoadAttachment(ctx, p, "big.csv", r)
			return err
		},
		"Load": func(ctx context.Context, r io.Reader) error { _, err := c.Bulk.Load(ctx, p, r); return err },
		"Upload": func(ctx context.Context, r io.Reader) error {
			return c.Bulk.Upload(ctx, &bulk.Ticket{UploadURL: ts.URL + "/upload/x"}, bulk.UploadParams{}, r)
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// Cancels once 1 MiB has been read: the rest is far more
			// than the socket buffers hold.
			var read atomic.Int64
			body := &cancellingReader{src: &csvSource{left: 256 << 20, n: &read}, after: 1 << 20, cancel: cancel}
			if err := send(ctx, body); !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if n := read.Load(); n >= 256<<20 {
				t.Errorf("the whole body was read (%d bytes) despite the cancel", n)
			}
		})
	}
}

// TestLoadRowsCancelled: a load cancelled while its rows are being
// encoded returns the context's error and leaves no goroutine behind. The
// server takes the token request and then never reads a load's body; the
// load is cancelled once its request has reached the server, with far
// more rows left than the socket buffers hold, so that the encoder
// stops only if the SDK releases it.
func TestLoadRowsCancelled(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, _, stop := stallingClient(t, cancel)
	defer stop()
	row := map[string]string{"sales_details.crm_opportunity_id": "K-1", "name": strings.Repeat("x", 40)}
	rows := make([]map[string]string, 200_000) // about 15 MB of JSON
	for i := range rows {
		rows[i] = row
	}
	_, err := bulk.LoadRows(ctx, c.Bulk, bulk.LoadParams{IntegrationID: "int-1"}, rows)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// stallingClient returns a client of a server that answers the token
// request and never reads any other request's body, and stop, which the
// test defers after goleak.VerifyNone: it closes the client's idle
// connections and the server's, releases the server's handlers and closes
// the server. reached, when not
// nil, is called when another request reaches the server's handler.
func stallingClient(t *testing.T, reached func()) (*partner.Client, *httptest.Server, func()) {
	t.Helper()
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/oauth/token" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"access_token":"at","token_type":"Bearer","expires_in":3600}`)
			return
		}
		if reached != nil {
			reached()
		}
		<-release // never reads the body
	}))
	rt := http.DefaultTransport.(*http.Transport).Clone()
	stop := func() {
		rt.CloseIdleConnections()
		// The connections close before the handlers return: a handler
		// returning with a body unread on an open connection would make
		// the server linger half a second before closing it.
		ts.CloseClientConnections()
		close(release)
		ts.Close()
	}
	c, err := partner.New(partner.WithBaseURL(ts.URL), partner.WithHTTPClient(&http.Client{Transport: rt}),
		partner.WithClientCredentials("id", "secret"))
	if err != nil {
		stop()
		t.Fatal(err)
	}
	return c, ts, stop
}

// cancellingReader reads from src and calls cancel once after bytes
// have been read.
type cancellingReader struct {
	src    io.Reader
	after  int64
	cancel context.CancelFunc
}

func (r *cancellingReader) Read(p []byte) (int, error) {
	n, err := r.src.Read(p)
	if r.after -= int64(n); r.after <= 0 {
		r.cancel()
	}
	return n, err
}
