package fake

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// hostRequest sends a request to srv with the Host (and Origin, when set)
// given, and returns the status, the answer's headers and its body.
func hostRequest(t *testing.T, srv *Server, method, path, host, origin, token, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(raw)
}

// TestLoopbackServerRefusesForeignHost: a fake listening on a loopback
// address answers a page whose DNS name was rebound to 127.0.0.1 (its
// requests carry the page's name as Host) with 403, no token and no data;
// loopback names and an allowed name work; no answer carries CORS.
func TestLoopbackServerRefusesForeignHost(t *testing.T) {
	srv := NewServer(WithDemoData(), WithAllowedHosts("fake.internal"))
	defer srv.Close()
	port := strings.TrimPrefix(srv.URL[strings.LastIndex(srv.URL, ":"):], ":")
	tokenBody := `{"grant_type":"client_credentials","client_id":"` + DefaultClientID + `","client_secret":"` + DefaultClientSecret + `"}`
	local := "127.0.0.1:" + port

	status, _, body := hostRequest(t, srv, "POST", "/oauth/token", local, "", "", tokenBody)
	token := between(body, `"access_token":"`, `"`)
	if status != 200 || token == "" {
		t.Fatalf("token with a loopback Host: %d %s", status, body)
	}
	data := "/report/v1/list"
	for _, tc := range []struct{ host, origin string }{
		{"rebind.attacker.example:" + port, ""},
		{"rebind.attacker.example", ""},
		{"127.0.0.1.attacker.example:" + port, ""},
		{"localhost.attacker.example:" + port, ""},
		{"10.0.0.5:" + port, ""},
		{local, "http://rebind.attacker.example:" + port},
		{local, "null"},
	} {
		status, hdr, body := hostRequest(t, srv, "POST", "/oauth/token", tc.host, tc.origin, "", tokenBody)
		if status != http.StatusForbidden || strings.Contains(body, "access_token") {
			t.Errorf("token, Host %q Origin %q: %d %s, want 403 and no token", tc.host, tc.origin, status, body)
		}
		if hdr.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("Host %q: CORS header %q", tc.host, hdr.Get("Access-Control-Allow-Origin"))
		}
		status, _, body = hostRequest(t, srv, "POST", data, tc.host, tc.origin, token, `{}`)
		if status != http.StatusForbidden || strings.Contains(body, "\"results\"") {
			t.Errorf("data, Host %q Origin %q: %d %.200s, want 403 and no data", tc.host, tc.origin, status, body)
		}
	}
	for _, tc := range []struct{ host, origin string }{
		{local, ""},
		{"localhost:" + port, ""},
		{"LOCALHOST.:" + port, ""},
		{"app.localhost:" + port, ""},
		{"127.0.0.2:" + port, ""},
		{"[::1]:" + port, ""},
		{"fake.internal:" + port, ""},
		{"fake.internal", "http://fake.internal:" + port},
		{local, "http://localhost:3000"},
	} {
		status, hdr, body := hostRequest(t, srv, "POST", data, tc.host, tc.origin, token, `{}`)
		if status != 200 || !strings.Contains(body, "\"results\"") {
			t.Errorf("data, Host %q Origin %q: %d %.200s, want 200", tc.host, tc.origin, status, body)
		}
		for k := range hdr {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("Host %q: CORS header %s", tc.host, k)
			}
		}
	}
	// A preflight gets no CORS either.
	req, _ := http.NewRequest("OPTIONS", srv.URL+data, nil)
	req.Header.Set("Origin", "http://localhost:3000")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for k := range resp.Header {
		if strings.HasPrefix(k, "Access-Control-") {
			t.Errorf("preflight: CORS header %s", k)
		}
	}
}
