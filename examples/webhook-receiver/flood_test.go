package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
)

// TestDeliveredUnderFlood: a client that does not know the secret holds
// all 256 connections of the receiver idle after a 401, and more that
// send nothing wait behind them; a delivery from the service (the fake,
// one attempt of the time the receiver gives a request's headers) is
// still delivered on its first attempt.
func TestDeliveredUnderFlood(t *testing.T) {
	t.Parallel()
	attempt := events.NewServer(nil).ReadHeaderTimeout
	srv := fake.NewServer(fake.WithDemoData(), fake.WithDeliveryPolicy(fake.DeliveryPolicy{Attempts: 1, Timeout: attempt}))
	defer srv.Close()
	secret := events.NewSecret()
	env := map[string]string{"PARTNER_BASE_URL": srv.URL, "PARTNER_CLIENT_ID": fake.DefaultClientID,
		"PARTNER_CLIENT_SECRET": fake.DefaultClientSecret, "RECEIVER_ADDR": "127.0.0.1:0", "RECEIVER_SECRET": string(secret)}
	addr := make(chan string, 1)
	delivered := make(chan *events.Delivery, 1)
	var logs syncBuffer
	cfg := config{
		getenv:    func(k string) string { return env[k] },
		log:       slog.New(slog.NewTextHandler(&logs, nil)),
		out:       &bytes.Buffer{},
		tracer:    sdktrace.NewTracerProvider(),
		listening: func(a string) { addr <- a },
		delivered: func(d *events.Delivery) { delivered <- d },
	}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg) }()
	host := <-addr

	c, err := partner.New(partner.WithConnection(srv.Connection()))
	if err != nil {
		t.Fatal(err)
	}
	callback := (&url.URL{Scheme: "http", Host: host, Path: callbackPath}).String()
	if _, err := c.Events.Subscribe(ctx, events.SubscribeParams{Name: "flood test", Events: []events.Kind{events.KindObjectUpdate},
		IntegrationID: demo.OpportunityIntegration, CallbackURL: callback, Secret: secret}); err != nil {
		t.Fatal(err)
	}

	release := holdConns(t, host, callbackPath+"not-the-secret-at-all-00", events.DefaultMaxConns, 64)
	srv.UpdateObject(demo.Opportunity2, map[string]any{"stage": "flooded"})
	if err := srv.WaitDeliveries(ctx); err != nil {
		t.Fatal(err)
	}
	if ds := srv.Deliveries(); len(ds) != 1 || !ds[0].Delivered || ds[0].Attempt != 1 {
		t.Fatalf("the service's attempts: %+v, want one, delivered\nlogs:\n%s", ds, logs.String())
	}
	if d := <-delivered; d.Fields["stage"] != "flooded" {
		t.Errorf("delivered %v", d.Fields)
	}
	release()
	stop()
	if err := <-done; err != nil {
		t.Errorf("run: %v\nlogs:\n%s", err, logs.String())
	}
}

// holdConns opens connections to addr, a server of at most capacity
// connections at once, and holds them until the test ends, as a client
// that does not know the secret would: capacity connections that each
// POST to path (a path without the secret), read the answer and stay
// open, kept alive and idle, then silent connections that send nothing.
// Each answer must be a kept-alive 401. The returned function closes
// them (the test's end does too): a server's graceful shutdown waits for
// silent connections.
func holdConns(t *testing.T, addr, path string, capacity, silent int) (release func()) {
	t.Helper()
	var held []net.Conn
	release = func() {
		for _, c := range held {
			c.Close()
		}
	}
	t.Cleanup(release)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		return c
	}
	req := "POST " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
	for range capacity {
		c := dial()
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("answer to a forged request: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Close {
			t.Fatalf("forged request answered %d (close %v), want a kept-alive 401", resp.StatusCode, resp.Close)
		}
	}
	for range silent {
		dial()
	}
	return release
}
