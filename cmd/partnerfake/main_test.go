package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeAndShutdown starts the server on a free port, gets a token from
// it over HTTP and checks that cancelling the context shuts it down.
func TestServeAndShutdown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-client-id", "cid", "-client-secret", "csecret"}, pw)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatal("no output")
	}
	line := sc.Text()
	url := line[strings.LastIndex(line, " ")+1:]
	go io.Copy(io.Discard, pr)

	resp, err := http.Post(url+"/oauth/token", "application/json",
		strings.NewReader(`{"grant_type":"client_credentials","client_id":"cid","client_secret":"csecret"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("token request: status %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server did not shut down")
	}
}
