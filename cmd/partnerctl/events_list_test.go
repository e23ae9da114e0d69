package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
)

// TestEventsListMasksCallbackSecrets: events list --json prints a callback
// URL the service returns with its secret segment as <secret>, and whole
// with --show-secrets. Neither the fake nor the deployed service returns
// webhook_settings in a listing, so a proxy in front of the fake answers
// the listing with one.
func TestEventsListMasksCallbackSecrets(t *testing.T) {
	t.Parallel()
	const secret = "Zq3XHc7RkPbW2mLyTn5VdA9sEf"
	srv := newFake(t)
	defer srv.Close()
	target, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/event/v1/subscriber" {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"items":[{"subscriber_id":"sub-1","name":"hook","objectids":[],"integration_id":"","filters":"",` +
				`"subscriber_type":"webhook","webhook_settings":{"callback_url":"https://hooks.example.com/partner/` + secret + `?team=a"}}]}`))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer svc.Close()
	c := newCLI(srv)
	c.base, c.env["PARTNER_BASE_URL"] = svc.URL, svc.URL

	r := c.must(t, "events", "list", "--json")
	if strings.Contains(r.stdout, secret) || !strings.Contains(r.stdout, `"callback_url": "https://hooks.example.com/partner/<secret>?team=<secret>"`) {
		t.Fatalf("events list --json:\n%s", r.stdout)
	}
	if r := c.must(t, "events", "list"); strings.Contains(r.stdout, secret) || !strings.Contains(r.stdout, "sub-1") {
		t.Fatalf("events list:\n%s", r.stdout)
	}
	r = c.must(t, "events", "list", "--json", "--show-secrets")
	if !strings.Contains(r.stdout, `"callback_url": "https://hooks.example.com/partner/`+secret+`?team=a"`) {
		t.Fatalf("events list --json --show-secrets:\n%s", r.stdout)
	}
}

func TestMaskCallbackURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"https://hooks.example.com/partner", "https://hooks.example.com/partner"},
		{"https://hooks.example.com/partner/Zq3XHc7RkPbW2mLyTn5VdA9sEf", "https://hooks.example.com/partner/<secret>"},
		{"http://127.0.0.1:8080/hooks/partner/abc_DEF-0123456789/", "http://127.0.0.1:8080/hooks/partner/<secret>/"},
		{"https://user:pw@hooks.example.com/a%20b/short?k=v&token=t", "https://user:<secret>@hooks.example.com/a%20b/short?k=<secret>&token=<secret>"},
		{"https://hooks.example.com/x#frag", "https://hooks.example.com/x"},
		{"not a url", "<secret>"},
		{"://", "<secret>"},
	} {
		if got := maskCallbackURL(tc.in); got != tc.want {
			t.Errorf("maskCallbackURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
