package repocheck

import (
	"os/exec"
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

// TestFakeLinksNoExcelize: a test binary importing the fake does not link
// the spreadsheet library the command line writes with, and the fake's
// own test binary does not either: its tests read the workbooks excelize
// wrote from fake/testdata.
func TestFakeLinksNoExcelize(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-test", "-deps", "./fake").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), modulePath+"/fake\n") {
		t.Fatalf("go list did not list the fake:\n%s", out)
	}
	if strings.Contains(string(out), "excelize") {
		t.Errorf("package fake or its tests depend on excelize:\n%s", out)
	}
	if !deps(t, modulePath+"/cmd/partnerctl")["github.com/xuri/excelize/v2"] {
		t.Error("cmd/partnerctl does not depend on github.com/xuri/excelize/v2: has the check gone stale?")
	}
}
