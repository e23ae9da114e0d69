package fake

import "testing"

// TestMaskCallbackURL: the delivery log shows a callback URL without what
// may be secret, and the rest as it is.
func TestMaskCallbackURL(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"http://127.0.0.1:8080/down", "http://127.0.0.1:8080/down"},
		{"https://hooks.example.com/partner/NB2HI4DTHIXS6ZTPN5RGC4RO", "https://hooks.example.com/partner/***"},
		{"https://hooks.example.com/A1b2C3d4E5f6G7h8/partner", "https://hooks.example.com/***/partner"},
		{"https://hooks.example.com/partner-integration/x", "https://hooks.example.com/***/x"},
		{"https://hooks.example.com/p%20q/x", "https://hooks.example.com/p%20q/x"},
		{"https://user:pa55@hooks.example.com/p?token=abc&tenant=7#frag", "https://user:%2A%2A%2A@hooks.example.com/p?tenant=%2A%2A%2A&token=%2A%2A%2A"},
		{"://bad", "***"},
	} {
		if got := maskCallbackURL(tt.in); got != tt.want {
			t.Errorf("maskCallbackURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
