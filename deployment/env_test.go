package deployment_test

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/deployment"
)

// env is a getenv over a map.
func env(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

// server is the three variables that name a deployment, with vars added.
func server(vars map[string]string) map[string]string {
	m := map[string]string{"PARTNER_BASE_URL": "https://api.example.com", "PARTNER_CLIENT_ID": "app", "PARTNER_CLIENT_SECRET": "s3cret-value"}
	maps.Copy(m, vars)
	return m
}

// TestFromEnvReadsEveryVariable: each documented variable lands in its
// field of the Connection.
func TestFromEnvReadsEveryVariable(t *testing.T) {
	c, err := deployment.FromEnv(env(server(map[string]string{
		"PARTNER_ENV": "sandbox-eu.app.example.com", "PARTNER_ENV_HEADER": "x-acme-env", "PARTNER_PORTAL_WORD": "acme_portal",
		"PARTNER_SUBSCRIPTION_KEY": "key-value", "PARTNER_SUBSCRIPTION_KEY_HEADER": "x-gateway-key",
	})))
	if err != nil {
		t.Fatal(err)
	}
	want := deployment.Connection{BaseURL: "https://api.example.com", ClientID: "app", ClientSecret: "s3cret-value",
		SubscriptionKey: "key-value", Environment: "sandbox-eu.app.example.com",
		Words: deployment.Words{EnvHeader: "x-acme-env", PortalWord: "acme_portal", SubscriptionKeyHeader: "x-gateway-key"}}
	if c != want {
		t.Errorf("FromEnv = %#v, want %#v", c, want)
	}
}

// TestFromEnvNotSet: with none of the three server variables FromEnv
// returns ErrNotSet, and the other variables' values for a fake to speak.
func TestFromEnvNotSet(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"empty environment": {},
		"words only": {"PARTNER_ENV_HEADER": "x-acme-env", "PARTNER_PORTAL_WORD": "acme_portal", "PARTNER_SUBSCRIPTION_KEY": "k",
			"PARTNER_ENV": "sandbox.example.com"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := deployment.FromEnv(env(vars))
			if err != deployment.ErrNotSet || !errors.Is(err, deployment.ErrNotSet) {
				t.Fatalf("FromEnv = %v, want ErrNotSet", err)
			}
			if c.BaseURL != "" || c.ClientID != "" || c.ClientSecret != "" {
				t.Errorf("no deployment named, but the Connection names one: %v", c)
			}
			if c.Words.EnvHeader != vars["PARTNER_ENV_HEADER"] || c.Words.PortalWord != vars["PARTNER_PORTAL_WORD"] ||
				c.SubscriptionKey != vars["PARTNER_SUBSCRIPTION_KEY"] || c.Environment != vars["PARTNER_ENV"] {
				t.Errorf("the other variables are lost: %v", c)
			}
		})
	}
}

// TestFromEnvRefuses: a missing or malformed variable is an *EnvError
// that names it, says what to do, and never repeats a secret.
func TestFromEnvRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		vars    map[string]string
		wantVar string
		want    string // in the message
	}{
		{"base URL alone", map[string]string{"PARTNER_BASE_URL": "https://api.example.com"},
			"PARTNER_CLIENT_ID", "PARTNER_CLIENT_ID is not set (nor is PARTNER_CLIENT_SECRET), but PARTNER_BASE_URL is: set all of"},
		{"credentials without base URL", map[string]string{"PARTNER_CLIENT_ID": "app", "PARTNER_CLIENT_SECRET": "s3cret-value"},
			"PARTNER_BASE_URL", "PARTNER_BASE_URL is not set, but PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET are"},
		{"secret missing", map[string]string{"PARTNER_BASE_URL": "https://api.example.com", "PARTNER_CLIENT_ID": "app"},
			"PARTNER_CLIENT_SECRET", "or none"},
		{"base URL not a URL", server(map[string]string{"PARTNER_BASE_URL": "https://api.example.com:port"}),
			"PARTNER_BASE_URL", "does not parse as a URL"},
		{"base URL without scheme", server(map[string]string{"PARTNER_BASE_URL": "api.example.com"}),
			"PARTNER_BASE_URL", `"api.example.com" is not an absolute http(s) URL`},
		{"base URL of another scheme", server(map[string]string{"PARTNER_BASE_URL": "ftp://api.example.com"}),
			"PARTNER_BASE_URL", "is not an absolute http(s) URL"},
		{"base URL with credentials", server(map[string]string{"PARTNER_BASE_URL": "https://app:s3cret-value@api.example.com"}),
			"PARTNER_BASE_URL", "must not carry credentials"},
		{"base URL with a query", server(map[string]string{"PARTNER_BASE_URL": "https://api.example.com/?subscription-key=key-value"}),
			"PARTNER_BASE_URL", "must not have a query"},
		{"secret with a line break", server(map[string]string{"PARTNER_CLIENT_SECRET": "s3cret-value\n"}),
			"PARTNER_CLIENT_SECRET", "contains a line break"},
		{"environment with a scheme", server(map[string]string{"PARTNER_ENV": "https://sandbox.example.com", "PARTNER_ENV_HEADER": "x-acme-env"}),
			"PARTNER_ENV", "is not a host name"},
		{"environment without its header", server(map[string]string{"PARTNER_ENV": "sandbox.example.com"}),
			"PARTNER_ENV_HEADER", "PARTNER_ENV_HEADER is not set, but PARTNER_ENV is"},
		{"header not a token", server(map[string]string{"PARTNER_ENV_HEADER": "x acme env"}),
			"PARTNER_ENV_HEADER", `"x acme env" is not a header name`},
		{"header Authorization", server(map[string]string{"PARTNER_ENV_HEADER": "authorization"}),
			"PARTNER_ENV_HEADER", "must not name Authorization"},
		{"portal word with a dot", server(map[string]string{"PARTNER_PORTAL_WORD": "acme.portal"}),
			"PARTNER_PORTAL_WORD", "is not one word"},
		{"key with a line break", server(map[string]string{"PARTNER_SUBSCRIPTION_KEY": "key-value\r\n"}),
			"PARTNER_SUBSCRIPTION_KEY", "contains a line break"},
		{"key header not a token", server(map[string]string{"PARTNER_SUBSCRIPTION_KEY_HEADER": "key:header"}),
			"PARTNER_SUBSCRIPTION_KEY_HEADER", "is not a header name"},
		{"malformed word without a deployment", map[string]string{"PARTNER_PORTAL_WORD": "acme portal"},
			"PARTNER_PORTAL_WORD", "is not one word"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := deployment.FromEnv(env(tc.vars))
			var e *deployment.EnvError
			if !errors.As(err, &e) {
				t.Fatalf("FromEnv = %v, %v; want an *EnvError", c, err)
			}
			if e.Var != tc.wantVar || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q (Var %s), want Var %s and %q", err, e.Var, tc.wantVar, tc.want)
			}
			if errors.Is(err, deployment.ErrNotSet) {
				t.Errorf("error %q is ErrNotSet", err)
			}
			for _, secret := range []string{"s3cret-value", "key-value"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q repeats a secret", err)
				}
			}
			if c != (deployment.Connection{}) {
				t.Errorf("FromEnv returned %v with its error", c)
			}
		})
	}
}

// TestFromEnvPlainHTTP: plain http goes only to this machine, where
// tokens do not travel in clear, by partner.New's rule (internal/check).
func TestFromEnvPlainHTTP(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080"} {
		c, err := deployment.FromEnv(env(server(map[string]string{"PARTNER_BASE_URL": u})))
		if err != nil || c.BaseURL != u {
			t.Errorf("FromEnv with %s = %v, %v", u, c, err)
		}
	}
	_, err := deployment.FromEnv(env(server(map[string]string{"PARTNER_BASE_URL": "http://api.example.com"})))
	if err == nil || err.Error() != `PARTNER_BASE_URL "http://api.example.com" must be an https URL (plain http only to this machine: localhost or a loopback address): tokens would travel in clear` {
		t.Errorf("plain http to another host: %v", err)
	}
}
