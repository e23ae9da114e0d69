package repocheck

import (
	"strings"
	"testing"
)

// TestRootAndEventsLinkNoRedis: a program that imports only the root
// package and events (the two and their dependencies are what it links
// besides the runtime) depends on no Redis client; only events/redisdedup
// brings it in, as the module's listing shows.
func TestRootAndEventsLinkNoRedis(t *testing.T) {
	t.Parallel()
	for p := range deps(t, modulePath, modulePath+"/events") {
		if strings.Contains(p, "redis") || strings.HasPrefix(p, "go.uber.org/atomic") {
			t.Errorf("a program importing the root package and events links %s", p)
		}
	}
	if !deps(t, modulePath+"/events/redisdedup")["github.com/redis/go-redis/v9"] {
		t.Error("events/redisdedup does not depend on github.com/redis/go-redis/v9: has the check gone stale?")
	}
}
