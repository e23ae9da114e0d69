package redact

import (
	"net/url"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://admin:pw@host/x":     "https://admin:xxxxx@host/x",
		"ftp://admin:pw@host":         "ftp://admin:xxxxx@host",
		"https://host/x":              "https://host/x",
		"https://admin:pw@host/%zz":   "https://xxxxx@host/%zz",
		"https://admin:p@w@host:99/x": "https://admin:xxxxx@host:99/x",
		"admin:pw@host":               "xxxxx@host",
		"http://a:pw@h\x7f/":          "http://xxxxx@h\x7f/",
	} {
		if got := URL(raw); got != want {
			t.Errorf("URL(%q) = %q, want %q", raw, got, want)
		}
		if strings.Contains(URL(raw), "pw") {
			t.Errorf("URL(%q) keeps the password", raw)
		}
	}
}

// badURL does not parse (a variable: a constant would be flagged).
var badURL = "https://admin:pw@host/%zz"

func TestError(t *testing.T) {
	_, err := url.Parse(badURL)
	if err == nil || strings.Contains(Error(err).Error(), "pw") {
		t.Fatalf("Error(%v) = %v", err, Error(err))
	}
}
