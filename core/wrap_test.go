package core

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/internal/errs"
)

func TestWrapAndWithKeepThePrefixOnce(t *testing.T) {
	api := &Error{StatusCode: 503, Method: "POST", Path: "/bulk/v1/bulkload"}
	w := errs.Wrap(api, "bulk: loading %s", "int-1")
	if got, want := w.Error(), "partner: bulk: loading int-1: POST /bulk/v1/bulkload: 503 Service Unavailable"; got != want {
		t.Errorf("Wrap: %q, want %q", got, want)
	}
	var e *Error
	if !errors.As(w, &e) || e != api {
		t.Error("Wrap hides the *Error from errors.As")
	}
	if errs.Wrap(nil, "x") != nil {
		t.Error("errs.Wrap(nil) != nil")
	}
	if got := errs.Wrap(context.Canceled, "reports: exporting").Error(); got != "partner: reports: exporting: context canceled" {
		t.Errorf("Wrap of a foreign error: %q", got)
	}
	wi := errs.With(api, ErrBodyNotReplayable)
	if s := wi.Error(); strings.Count(s, "partner:") != 1 || !strings.Contains(s, "(request body was already sent") {
		t.Errorf("With: %q", s)
	}
	if !errors.Is(wi, ErrBodyNotReplayable) || !errors.As(wi, &e) {
		t.Error("With hides one of its errors")
	}
}

// TestNotReplayablePrefixOnce: the errors of a body that cannot be sent
// again read "partner: " once, whichever path reports them.
func TestNotReplayablePrefixOnce(t *testing.T) {
	c, mt := newMockClient(t)
	var b bodies
	mt.RegisterResponder("POST", base+"/r", b.responder(429, 200))
	mt.RegisterResponder("GET", base+"/r", func(req *http.Request) (*http.Response, error) {
		io.ReadAll(req.Body)
		return nil, errors.New("connection reset by peer")
	})
	for _, method := range []string{"POST", "GET"} {
		err := c.Do(context.Background(), &Request{Method: method, Path: "/r", Body: plainReader{strings.NewReader("once")}}, nil)
		if !errors.Is(err, ErrBodyNotReplayable) || strings.Count(err.Error(), "partner:") != 1 {
			t.Errorf("%s: %v, want ErrBodyNotReplayable with the prefix once", method, err)
		}
	}
}
