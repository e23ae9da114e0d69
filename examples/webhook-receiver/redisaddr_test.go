package main

import (
	"strings"
	"testing"
	"time"
)

// TestRedisOptions: RECEIVER_REDIS_ADDR is host:port or a redis:// or
// rediss:// URL, whose password, database and TLS are used; a value that
// is neither is refused, and the error does not repeat it.
func TestRedisOptions(t *testing.T) {
	t.Parallel()
	o, err := redisOptions("cache.internal:6379")
	if err != nil || o.Addr != "cache.internal:6379" || o.Password != "" || o.TLSConfig != nil || o.DialTimeout != time.Second || o.MaxRetries != 1 {
		t.Errorf("host:port: %+v, %v", o, err)
	}
	o, err = redisOptions("redis://user:pa55-word@cache.internal:6380/2")
	if err != nil || o.Addr != "cache.internal:6380" || o.Username != "user" || o.Password != "pa55-word" || o.DB != 2 || o.TLSConfig != nil {
		t.Errorf("redis:// URL: %+v, %v", o, err)
	}
	o, err = redisOptions("rediss://:pa55-word@cache.internal:6380?dial_timeout=3s")
	if err != nil || o.Addr != "cache.internal:6380" || o.Password != "pa55-word" || o.TLSConfig == nil || o.DialTimeout != 3*time.Second {
		t.Errorf("rediss:// URL: %+v, %v", o, err)
	}
	for _, bad := range []string{"user:pa55-word@cache.internal:6379", "http://user:pa55-word@cache.internal", "redis://user:pa55-word@cache.internal:port",
		"redis://user:pa55-word@cache.internal/db", "cache.internal"} {
		if _, err := redisOptions(bad); err == nil || strings.Contains(err.Error(), "pa55-word") || !strings.Contains(err.Error(), "RECEIVER_REDIS_ADDR") {
			t.Errorf("%q: %v, want an error that names the variable, not its value", bad, err)
		}
	}
}
