package check

import (
	"net/url"
	"strings"
	"testing"
)

func TestRedactedURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://admin:pw@host/x":     "https://admin:xxxxx@host/x",
		"ftp://admin:pw@host":         "ftp://admin:xxxxx@host",
		"https://host/x":              "https://host/x",
		"https://admin:pw@host/%zz":   "https://xxxxx@host/%zz",
		"https://admin:p@w@host:99/x": "https://admin:xxxxx@host:99/x",
		"admin:pw@host":               "xxxxx@host",
		"http://a:pw@h\x7f/":          "http://xxxxx@h\x7f/",
	} {
		if got := RedactedURL(raw); got != want {
			t.Errorf("RedactedURL(%q) = %q, want %q", raw, got, want)
		}
		if strings.Contains(RedactedURL(raw), "pw") {
			t.Errorf("RedactedURL(%q) keeps the password", raw)
		}
	}
}

// badURL does not parse (a variable: a constant would be flagged).
var badURL = "https://admin:pw@host/%zz"

func TestURLParseError(t *testing.T) {
	_, err := url.Parse(badURL)
	if err == nil || strings.Contains(URLParseError(err).Error(), "pw") {
		t.Fatalf("URLParseError(%v) = %v", err, URLParseError(err))
	}
}
