package redisdedup_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/events/redisdedup"
)

// hostileReply is a bulk string whose length no process can allocate:
// the Redis client panics reading it.
const hostileReply = "$1125899906842624\r\n"

// hostileRedis is a server speaking RESP that answers each command
// whose name is in hostile with hostileReply, and any other with an
// error (the client's handshake goes on without it). It returns its
// address; it stops when the test ends.
func hostileRedis(t *testing.T, hostile ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					name, err := readCommand(br)
					if err != nil {
						return
					}
					reply := "-ERR unknown command\r\n"
					for _, h := range hostile {
						if strings.EqualFold(name, h) {
							reply = hostileReply
						}
					}
					if _, err := io.WriteString(c, reply); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// readCommand reads one command (an array of bulk strings) and returns
// its name.
func readCommand(br *bufio.Reader) (string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "*")))
	if err != nil || n < 1 || n > 64 {
		return "", io.ErrUnexpectedEOF
	}
	var name string
	for i := range n {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "$")))
		if err != nil || size < 0 || size > 1<<20 {
			return "", io.ErrUnexpectedEOF
		}
		arg := make([]byte, size+2)
		if _, err := io.ReadFull(br, arg); err != nil {
			return "", err
		}
		if i == 0 {
			name = string(arg[:size])
		}
	}
	return name, nil
}

// TestHostileReplyIsAnError: a reply the Redis client panics on (a huge
// bulk length) is an error of the Store, with a request's context (the
// command runs in a goroutine of its own) and without one, and the
// Handler's guard treats it as a store that is down: it passes the
// delivery on, or with RefuseWhenStoreFails answers 503. The process
// does not crash.
func TestHostileReplyIsAnError(t *testing.T) {
	t.Parallel()
	addr := hostileRedis(t, "evalsha", "eval", "set", "del")
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1, Protocol: 2})
	t.Cleanup(func() { client.Close() })
	s := redisdedup.New(client)

	ctx := t.Context()
	for name, ctx := range map[string]context.Context{"with a context that ends": ctx, "with one that does not": context.Background()} {
		if _, err := s.ClaimFor(ctx, "k", "holder", events.DefaultDedupLease); err == nil || !strings.Contains(err.Error(), "panicked") {
			t.Errorf("claim %s: %v, want the client's panic as an error", name, err)
		}
		if err := s.Done(ctx, "k", events.DefaultDedupRetryWindow); err == nil {
			t.Errorf("done %s: no error", name)
		}
		if err := s.Release(ctx, "k"); err == nil {
			t.Errorf("release %s: no error", name)
		}
	}

	var c counter
	var logs syncBuffer
	h := &events.Handler{Insecure: true, Deliver: c.deliver, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Dedup: &events.Dedup{Store: s}}
	if code := post(h, `{"n":"1"}`); code != http.StatusNoContent || c.get("1") != 1 {
		t.Errorf("delivery with the store panicking: %d, delivered %d times; want 204, once", code, c.get("1"))
	}
	if !strings.Contains(logs.String(), "panicked") {
		t.Errorf("the store's failure is not logged: %s", logs.String())
	}
	h.Dedup = &events.Dedup{Store: s, RefuseWhenStoreFails: true}
	rec := postRecorder(h, `{"n":"2"}`)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" || c.get("2") != 0 {
		t.Errorf("refusing delivery with the store panicking: %d (Retry-After %q), delivered %d times; want 503, not delivered",
			rec.Code, rec.Header().Get("Retry-After"), c.get("2"))
	}
}

func postRecorder(h http.Handler, body string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body)))
	return rec
}
