package main

import (
	"net/http"
	"testing"
)

func TestTokenInvalidatedUnlessShown(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	defer srv.Close()
	c := newCLI(srv)
	c.must(t, "token")
	if n := srv.CountRequests(http.MethodDelete, "/oauth/token"); n != 1 {
		t.Fatalf("token: %d invalidations, want 1", n)
	}
	c.must(t, "token", "--show")
	if n := srv.CountRequests(http.MethodDelete, "/oauth/token"); n != 1 {
		t.Fatalf("token --show: %d invalidations in all, want 1 (the shown token stays valid)", n)
	}
}
