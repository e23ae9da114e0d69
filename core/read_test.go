package core

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jarcoal/httpmock"
)

// cutBody is a body that ends early: the connection closed mid-answer.
type cutBody struct{ r io.Reader }

func (c *cutBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}
func (c *cutBody) Close() error { return nil }

// cutFirst answers {"rows":[1,2,3]}, cut off after its first bytes when
// it is the first answer n counts.
func cutFirst(n *atomic.Int32) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		resp := httpmock.NewStringResponse(200, `{"rows":[1,2,3]}`)
		resp.ContentLength = 16
		if n.Add(1) == 1 {
			resp.Body = &cutBody{strings.NewReader(`{"rows":[1`)}
		}
		return resp, nil
	}
}

// readInto is a Request.Read that appends each answer it reads to got.
func readInto(got *[]string) func(*http.Response) error {
	return func(resp *http.Response) error {
		b, err := io.ReadAll(resp.Body)
		*got = append(*got, string(b))
		return err
	}
}

// TestRequestReadInRetryLoop: Request.Read reads the 2xx answer inside
// the retry loop: an answer cut off while it reads is retried, as a lost
// answer is; an error of Read's own ends the call without a retry; Send
// then returns the response with its body read and closed.
func TestRequestReadInRetryLoop(t *testing.T) {
	c, mt := newMockClient(t)
	var n atomic.Int32
	mt.RegisterResponder("POST", base+"/page", cutFirst(&n))
	var got []string
	read := readInto(&got)
	resp, err := c.Send(context.Background(), &Request{Method: "POST", Path: "/page", Idempotent: true, Read: read})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); len(b) != 0 {
		t.Errorf("Send returned a body of %q after Read", b)
	}
	resp.Body.Close()
	if calls(mt) != 2 || len(got) != 2 || got[1] != `{"rows":[1,2,3]}` {
		t.Errorf("%d calls, Read saw %q; want the cut answer retried and read whole", calls(mt), got)
	}

	refused := errors.New("not a page")
	n.Store(1) // whole answers from now on
	_, err = c.Send(context.Background(), &Request{Method: "POST", Path: "/page", Idempotent: true,
		Read: func(resp *http.Response) error { io.ReadAll(resp.Body); return refused }})
	if !errors.Is(err, refused) || calls(mt) != 3 {
		t.Errorf("err %v after %d calls; want Read's error after one more call", err, calls(mt))
	}

	n.Store(0) // the next answer is cut off, on a write that is not safe to repeat
	_, err = c.Send(context.Background(), &Request{Method: "POST", Path: "/page", Read: read})
	if !errors.Is(err, io.ErrUnexpectedEOF) || !IsOutcomeUnknown(err) || calls(mt) != 4 {
		t.Errorf("err %v after %d calls; want a cut answer, outcome unknown, not retried", err, calls(mt))
	}
}

// TestDoWithRequestRead: Do with a nil out leaves the answer to
// Request.Read (what replaces a Decoder): a cut answer is retried there
// too, and Read sees the whole answer once.
func TestDoWithRequestRead(t *testing.T) {
	c, mt := newMockClient(t)
	var n atomic.Int32
	mt.RegisterResponder("GET", base+"/stream", cutFirst(&n))
	var got []string
	read := readInto(&got)
	if err := c.Do(context.Background(), &Request{Method: "GET", Path: "/stream", Read: read}, nil); err != nil {
		t.Fatal(err)
	}
	if calls(mt) != 2 || len(got) != 2 || got[1] != `{"rows":[1,2,3]}` {
		t.Errorf("%d calls, Read saw %q; want the cut answer retried and read whole", calls(mt), got)
	}
}
