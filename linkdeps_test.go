package partner_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRootAndEventsLinkNoRedis: a program that imports only the root
// package and events (go list -deps of the two is what it links besides
// the runtime) depends on no Redis client; only events/redisdedup brings
// it in, as the module's listing shows.
func TestRootAndEventsLinkNoRedis(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", modulePath, modulePath+"/events").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for p := range strings.FieldsSeq(string(out)) {
		if strings.Contains(p, "redis") || strings.HasPrefix(p, "go.uber.org/atomic") {
			t.Errorf("a program importing the root package and events links %s", p)
		}
	}
	if !strings.Contains(string(out), modulePath+"/events\n") {
		t.Fatalf("go list did not list events:\n%s", out)
	}
	if _, ok := listed(t)["github.com/redis/go-redis/v9"]; !ok {
		t.Error("no package of the module depends on github.com/redis/go-redis/v9: has the check gone stale?")
	}
}
