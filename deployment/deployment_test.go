package deployment_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/deployment"
)

// TestConnectionLoggedWithoutSecrets: a Connection logged through the
// standard library's JSON and text handlers shows its secrets masked and
// the rest as it is.
func TestConnectionLoggedWithoutSecrets(t *testing.T) {
	c := deployment.Connection{BaseURL: "https://api.example.com", ClientID: "app", ClientSecret: "s3cret-value",
		SubscriptionKey: "key-value", Words: deployment.Words{EnvHeader: "x-acme-env"}}
	for name, h := range map[string]func(*bytes.Buffer) slog.Handler{
		"json": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
		"text": func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
	} {
		var b bytes.Buffer
		slog.New(h(&b)).Info("connecting", "conn", c)
		out := b.String()
		if strings.Contains(out, "s3cret-value") || strings.Contains(out, "key-value") {
			t.Errorf("%s: a secret shows: %s", name, out)
		}
		for _, want := range []string{"https://api.example.com", "app", "[redacted]", "x-acme-env"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: %q missing from %s", name, want, out)
			}
		}
	}
}
