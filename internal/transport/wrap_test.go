package transport

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestWrapAndWithKeepThePrefixOnce(t *testing.T) {
	api := &Error{StatusCode: 503, Method: "POST", Path: "/bulk/v1/bulkload"}
	w := Wrap(api, "bulk: loading %s", "int-1")
	if got, want := w.Error(), "partner: bulk: loading int-1: POST /bulk/v1/bulkload: 503 Service Unavailable"; got != want {
		t.Errorf("Wrap: %q, want %q", got, want)
	}
	var e *Error
	if !errors.As(w, &e) || e != api {
		t.Error("Wrap hides the *Error from errors.As")
	}
	if Wrap(nil, "x") != nil {
		t.Error("Wrap(nil) != nil")
	}
	if got := Wrap(context.Canceled, "reports: exporting").Error(); got != "partner: reports: exporting: context canceled" {
		t.Errorf("Wrap of a foreign error: %q", got)
	}
	wi := With(api, ErrBodyNotReplayable)
	if s := wi.Error(); strings.Count(s, "partner:") != 1 || !strings.Contains(s, "(request body was already sent") {
		t.Errorf("With: %q", s)
	}
	if !errors.Is(wi, ErrBodyNotReplayable) || !errors.As(wi, &e) {
		t.Error("With hides one of its errors")
	}
}
