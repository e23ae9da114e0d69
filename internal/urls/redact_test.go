package urls

import (
	"net/url"
	"strings"
	"testing"
)

func TestRedacted(t *testing.T) {
	for raw, want := range map[string]string{
		"https://admin:pw@host/x":     "https://admin:xxxxx@host/x",
		"ftp://admin:pw@host":         "ftp://admin:xxxxx@host",
		"https://host/x":              "https://host/x",
		"https://admin:pw@host/%zz":   "https://xxxxx@host/%zz",
		"https://admin:p@w@host:99/x": "https://admin:xxxxx@host:99/x",
		"admin:pw@host":               "xxxxx@host",
		"http://a:pw@h\x7f/":          "http://xxxxx@h\x7f/",
	} {
		if got := Redacted(raw); got != want {
			t.Errorf("Redacted(%q) = %q, want %q", raw, got, want)
		}
		if strings.Contains(Redacted(raw), "pw") {
			t.Errorf("Redacted(%q) keeps the password", raw)
		}
	}
}

// badURL does not parse (a variable: a constant would be flagged).
var badURL = "https://admin:pw@host/%zz"

func TestParseError(t *testing.T) {
	_, err := url.Parse(badURL)
	if err == nil || strings.Contains(ParseError(err).Error(), "pw") {
		t.Fatalf("ParseError(%v) = %v", err, ParseError(err))
	}
}
