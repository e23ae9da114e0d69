package fakehttp

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "localhost:8080": true, "LocalHost.": true, "a.b.localhost:1": true,
		"127.0.0.1": true, "127.1.2.3:80": true, "[::1]:8080": true, "::1": true,
		"": false, "example.com": false, "localhost.example.com": false, "127.0.0.1.example": false,
		"10.0.0.1": false, "[::2]:80": false, "0.0.0.0:80": false, "notlocalhost": false,
	} {
		if got := LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
	if !LoopbackAddr(&net.TCPAddr{IP: net.IPv6loopback}) || LoopbackAddr(&net.TCPAddr{IP: net.IPv4zero}) {
		t.Error("LoopbackAddr")
	}
}

func TestLocalOnly(t *testing.T) {
	h := LocalOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }), []string{" Fake.Internal "})
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{"127.0.0.1:8080", "", 204},
		{"fake.internal:8080", "", 204},
		{"rebind.attacker.example:8080", "", 403},
		{"127.0.0.1:8080", "http://rebind.attacker.example:8080", 403},
		{"127.0.0.1:8080", "http://localhost:3000", 204},
		{"127.0.0.1:8080", "null", 403},
	} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = tc.host
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("Host %q Origin %q: %d, want %d", tc.host, tc.origin, rec.Code, tc.want)
		}
	}
}
