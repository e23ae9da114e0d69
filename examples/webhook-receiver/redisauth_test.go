package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/partnerapi/partner-go/events/redisdedup/redistest"
)

// TestDemonstrationOnRedisWithPassword: RECEIVER_REDIS_ADDR as a
// redis:// URL with a password reaches a Redis that requires it, and the
// guard's keys are there; with a wrong password the guard's failure is
// logged at start. The password shows in no log and no output.
func TestDemonstrationOnRedisWithPassword(t *testing.T) {
	t.Parallel()
	const password = "s3cret-redis-pa55"
	rs := redistest.Start(t)
	if err := rs.Client().ConfigSet(t.Context(), "requirepass", password).Err(); err != nil {
		t.Fatal(err)
	}
	authed := redis.NewClient(&redis.Options{Addr: rs.Addr, Password: password})
	t.Cleanup(func() { authed.Close() })

	for _, tc := range []struct {
		password string
		want     string // in the logs
		guarded  bool   // the demonstration's repeat is kept out
	}{{password, "duplicate guard on Redis", true}, {"wrong-pa55", "duplicate guard: Redis does not answer", false}} {
		env := map[string]string{"RECEIVER_REDIS_ADDR": "redis://:" + tc.password + "@" + rs.Addr + "/0", "RECEIVER_REDIS_PREFIX": "auth-test:"}
		var out, logs syncBuffer
		cfg := config{getenv: func(k string) string { return env[k] }, log: slog.New(slog.NewTextHandler(&logs, nil)), out: &out,
			tracer: sdktrace.NewTracerProvider()}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		err := run(ctx, cfg)
		cancel()
		// Without the guard, the demonstration fails on the repeat it
		// sends: the guard let it through.
		if (err == nil) != tc.guarded {
			t.Fatalf("run: %v, want the guard to work: %v\noutput:\n%s\nlogs:\n%s", err, tc.guarded, out.String(), logs.String())
		}
		if !strings.Contains(logs.String(), tc.want) || !strings.Contains(logs.String(), rs.Addr) {
			t.Errorf("logs lack %q and the address:\n%s", tc.want, logs.String())
		}
		if all := out.String() + logs.String(); strings.Contains(all, "pa55") {
			t.Errorf("the password shows:\n%s", all)
		}
	}
	keys, err := authed.Keys(t.Context(), "auth-test:*").Result()
	if err != nil || len(keys) < 3 {
		t.Errorf("keys in Redis under the prefix: %v, %v; want one per delivery handled", keys, err)
	}
}
