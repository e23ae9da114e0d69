package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
)

// syncBuffer is a bytes.Buffer safe for the receiver's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDemonstration runs the demonstration against the embedded fake: it
// handles the three deliveries, keeps out the repeat and the one without
// the secret, traces each delivery, and shows the secret nowhere.
func TestDemonstration(t *testing.T) {
	t.Parallel()
	secret := events.NewSecret()
	var out, logs syncBuffer
	spans := tracetest.NewSpanRecorder()
	cfg := config{
		getenv: func(k string) string { return map[string]string{"RECEIVER_SECRET": string(secret)}[k] },
		log:    slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		out:    &out,
		tracer: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)),
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := run(ctx, cfg); err != nil {
		t.Fatalf("run: %v\noutput:\n%s\nlogs:\n%s", err, out.String(), logs.String())
	}
	for _, want := range []string{
		`handled a delivery: "Acme renewal", partner_portal.integration_status = SCHEDULED`,
		`handled a delivery: "Globex expansion"`, `handled a delivery: "Initech pilot"`,
		`a repeat of the delivery of "Acme renewal": answered 204 by the duplicate guard, not handled again`,
		"a delivery without a secret the receiver accepts: answered 401",
		"webhook-receiver: handled 3 deliveries", "unsubscribed sub_",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	handled := 0
	for _, s := range spans.Ended() {
		if s.Name() == "partner.events.Handler" {
			handled++
		}
	}
	if handled != 5 { // three deliveries, the repeat, the one refused
		t.Errorf("%d spans of the Handler, want 5", handled)
	}
	if strings.Contains(out.String()+logs.String(), string(secret)) {
		t.Errorf("the secret shows in the output or the logs")
	}
}

// TestServeAndShutdown serves as against a deployment: the health
// endpoint answers, the old secret of a rotation is accepted beside the
// new one, and a SIGTERM (ctx cancelled) lets the delivery in flight
// finish before the receiver stops.
func TestServeAndShutdown(t *testing.T) {
	t.Parallel()
	srv := fake.NewServer()
	defer srv.Close()
	newSecret, oldSecret := events.NewSecret(), events.NewSecret()
	env := map[string]string{"PARTNER_BASE_URL": srv.URL, "PARTNER_CLIENT_ID": fake.DefaultClientID,
		"PARTNER_CLIENT_SECRET": fake.DefaultClientSecret, "RECEIVER_ADDR": "127.0.0.1:0",
		"RECEIVER_SECRET": string(newSecret), "RECEIVER_OLD_SECRET": string(oldSecret)}
	addr := make(chan string, 1)
	entered, release := make(chan struct{}), make(chan struct{})
	var logs syncBuffer
	cfg := config{
		getenv:    func(k string) string { return env[k] },
		log:       slog.New(slog.NewTextHandler(&logs, nil)),
		out:       &bytes.Buffer{},
		tracer:    sdktrace.NewTracerProvider(),
		listening: func(a string) { addr <- a },
		delivered: func(d *events.Delivery) {
			if d.Fields["hold"] == "yes" {
				close(entered)
				<-release
			}
		},
	}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg) }()
	base := "http://" + <-addr

	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("health: %v %v", resp, err)
	}
	resp.Body.Close()
	for secret, want := range map[events.Secret]int{newSecret: 204, oldSecret: 204, events.NewSecret(): 401} {
		status, err := post(t.Context(), base+callbackPath+string(secret), []byte(`{"name":"`+string(secret)+`"}`))
		if err != nil || status != want {
			t.Errorf("a delivery with a secret: %d %v, want %d", status, err, want)
		}
	}

	// A delivery in flight when SIGTERM comes.
	answer := make(chan int, 1)
	go func() {
		status, err := post(context.Background(), base+callbackPath+string(newSecret), []byte(`{"hold":"yes"}`))
		if err != nil {
			t.Errorf("the delivery in flight: %v", err)
		}
		answer <- status
	}()
	<-entered
	stop()
	// Once the receiver refuses connections its shutdown has begun; the
	// delivery is still being handled.
	host := strings.TrimPrefix(base, "http://")
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", host, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if i == 10000 {
			t.Fatal("the receiver still takes connections after SIGTERM")
		}
	}
	select {
	case err := <-done:
		t.Fatalf("the receiver stopped (%v) with a delivery in flight", err)
	default:
	}
	close(release)
	if status := <-answer; status != http.StatusNoContent {
		t.Errorf("the delivery in flight was answered %d, want 204", status)
	}
	if err := <-done; err != nil {
		t.Errorf("run: %v\nlogs:\n%s", err, logs.String())
	}
}

// TestSecretSettings: the secrets' variables are checked before anything
// runs, and never repeated.
func TestSecretSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"PARTNER_BASE_URL": "https://api.example.com"}, "RECEIVER_SECRET is required with a deployment"},
		{map[string]string{"RECEIVER_SECRET": "short-s3cr3t"}, "RECEIVER_SECRET is shorter than 22 characters"},
		{map[string]string{"RECEIVER_OLD_SECRET": string(events.NewSecret())}, "RECEIVER_OLD_SECRET is set without RECEIVER_SECRET"},
	} {
		err := run(t.Context(), config{getenv: func(k string) string { return tc.env[k] }, log: slog.New(slog.DiscardHandler), out: &bytes.Buffer{}})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%v: %v, want it to say %q", tc.env, err, tc.want)
		}
	}
}

// TestUsage: -h prints the usage and every setting, and is not an error
// of the command line (main exits 0 on flag.ErrHelp, without running);
// anything else on the command line is refused.
func TestUsage(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	if err := parseFlags([]string{"-h"}, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("parseFlags(-h) = %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"Usage: webhook-receiver", "RECEIVER_ADDR", "RECEIVER_SECRET", "RECEIVER_OLD_SECRET",
		"RECEIVER_REDIS_ADDR", "RECEIVER_REDIS_PREFIX", "PARTNER_BASE_URL", "PARTNER_CLIENT_SECRET", "PARTNER_PORTAL_WORD", "Exit status"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, stderr.String())
		}
	}
	// Every RECEIVER_* variable the program reads is in the usage.
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range regexp.MustCompile(`"(RECEIVER_[A-Z_]+)"`).FindAllStringSubmatch(string(src), -1) {
			if !strings.Contains(stderr.String(), "  "+v[1]+"\n") {
				t.Errorf("%s reads %s, which the usage does not list", name, v[1])
			}
		}
	}
	for _, args := range [][]string{{"-addr", ":9090"}, {"serve"}} {
		stderr.Reset()
		if err := parseFlags(args, &stderr); err == nil || errors.Is(err, flag.ErrHelp) || stderr.Len() == 0 {
			t.Errorf("parseFlags(%q) = %v, stderr %q; want a refusal said on stderr", args, err, stderr.String())
		}
	}
}
