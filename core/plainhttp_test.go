package core

import (
	"net/url"
	"testing"

	"github.com/partnerapi/partner-go/internal/urls"
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
		if got := urls.PlainHTTPRefused(u, false); got != tc.refused {
			t.Errorf("urls.PlainHTTPRefused(%s) = %v, want %v", tc.url, got, tc.refused)
		}
		if urls.PlainHTTPRefused(u, true) {
			t.Errorf("urls.PlainHTTPRefused(%s) with insecure HTTP allowed = true", tc.url)
		}
		if !urls.IsHTTPURL(u) {
			t.Errorf("urls.IsHTTPURL(%s) = false", tc.url)
		}
	}
	for _, raw := range []string{"ftp://example.com/", "http:opaque", "/relative", "http:///path", "mailto:a@b.c"} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if urls.IsHTTPURL(u) {
			t.Errorf("urls.IsHTTPURL(%s) = true", raw)
		}
	}
}
