package check

import (
	"testing"

	"golang.org/x/net/http/httpguts"
)

func TestHeaderName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"X-Request-Id", true},
		{"x-env", true},
		{"Ocp-Apim-Subscription-Key", true},
		{"A", true},
		{"0", true},
		{"!#$%&'*+-.^_`|~", true}, // every tchar that is not a letter or digit
		{"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", true},
		{"", false},
		{"X Request", false},
		{"X-Request-Id:", false},
		{"X-Request-Id\r\nX-Evil", false},
		{"X\tTab", false},
		{"X\x00", false},
		{"X\x7f", false},
		{"Größe", false},
		{"X-\u00e9", false},
		{"\xff", false},
	} {
		if got := HeaderName(tc.name); got != tc.ok {
			t.Errorf("HeaderName(%q) = %v, want %v", tc.name, got, tc.ok)
		}
	}
	// Each delimiter of RFC 9110 section 5.6.2, and every byte outside the
	// visible ASCII range, ends a token.
	for _, b := range []byte("\"(),/:;<=>?@[\\]{}") {
		if HeaderName("X" + string(b)) {
			t.Errorf("HeaderName accepts the delimiter %q", b)
		}
	}
	for b := range 256 {
		visible := b > 0x20 && b < 0x7f
		if !visible && HeaderName("X"+string([]byte{byte(b)})) {
			t.Errorf("HeaderName accepts byte %#x", b)
		}
	}
}

// FuzzHeaderName holds HeaderName to net/http's own rule
// (golang.org/x/net/http/httpguts, which net/http vendors), which the
// SDK does not link.
func FuzzHeaderName(f *testing.F) {
	for _, s := range []string{"X-Request-Id", "", "a b", "ü", "\x7f", "!#$%&'*+-.^_`|~", "a:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := HeaderName(s), httpguts.ValidHeaderFieldName(s); got != want {
			t.Errorf("HeaderName(%q) = %v, httpguts says %v", s, got, want)
		}
	})
}
