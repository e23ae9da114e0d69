package core

import (
	"net/url"
	"testing"

	"github.com/partnerapi/partner-go/internal/check"
)

// TestPlainHTTPRule: plain http goes only to hosts that certainly are this
// machine, unless insecure HTTP is allowed; https always goes.
func TestPlainHTTPRule(t *testing.T) {
	for _, tc := range []struct {
		url     string
		refused bool
	}{
		{"http://localhost:8080/", false},
		{"HTTP://LocalHost:8080/", false},
		{"http://127.0.0.1/", false},
		{"http://127.9.8.7:1/", false},
		{"http://[::1]:8080/", false},
		{"http://[::ffff:127.0.0.1]/", false},
		{"https://api.example.com/", false},
		{"https://api.localhost/", false},
		{"http://api.example.com/", true},
		{"http://api.localhost/", true}, // DNS or a proxy may take it off the machine
		{"http://localhost./", true},    // likewise
		{"http://10.0.0.1/", true},
		{"http://[::2]/", true},
		{"http://localhost.example.com/", true},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := check.PlainHTTPRefused(u, false); got != tc.refused {
			t.Errorf("check.PlainHTTPRefused(%s) = %v, want %v", tc.url, got, tc.refused)
		}
		if check.PlainHTTPRefused(u, true) {
			t.Errorf("check.PlainHTTPRefused(%s) with insecure HTTP allowed = true", tc.url)
		}
		if !check.IsHTTPURL(u) {
			t.Errorf("check.IsHTTPURL(%s) = false", tc.url)
		}
	}
	for _, raw := range []string{"ftp://example.com/", "http:opaque", "/relative", "http:///path", "mailto:a@b.c"} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if check.IsHTTPURL(u) {
			t.Errorf("check.IsHTTPURL(%s) = true", raw)
		}
	}
}
