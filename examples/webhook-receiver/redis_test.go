package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/partnerapi/partner-go/events/redisdedup/redistest"
)

// TestDemonstrationOnRedis runs the demonstration with the duplicate
// guard's keys in a real Redis (RECEIVER_REDIS_ADDR): the repeat is kept
// out by the shared store, whose keys are under RECEIVER_REDIS_PREFIX.
// redistest starts a throwaway redis-server from PATH, and skips the test
// without one (PARTNER_REQUIRE_REDIS=1 fails it instead).
func TestDemonstrationOnRedis(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	env := map[string]string{"RECEIVER_REDIS_ADDR": rs.Addr, "RECEIVER_REDIS_PREFIX": "receiver-test:"}
	var out, logs syncBuffer
	cfg := config{
		getenv: func(k string) string { return env[k] },
		log:    slog.New(slog.NewTextHandler(&logs, nil)),
		out:    &out,
		tracer: sdktrace.NewTracerProvider(),
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := run(ctx, cfg); err != nil {
		t.Fatalf("run: %v\noutput:\n%s\nlogs:\n%s", err, out.String(), logs.String())
	}
	if want := "answered 204 by the duplicate guard, not handled again"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
	keys, err := rs.Client().Keys(t.Context(), "receiver-test:*").Result()
	if err != nil || len(keys) < 3 {
		t.Errorf("keys in Redis under the prefix: %v, %v; want one per delivery handled", keys, err)
	}
}
