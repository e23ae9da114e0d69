package events

import "testing"

// TestMaskSecretPath: a log shows the last segment of a path as "***",
// and any other segment holding 16 or more URL-safe characters in a row
// (a secret in the wrong place); shorter runs stay readable.
func TestMaskSecretPath(t *testing.T) {
	run16, run15 := "abcdefghij-_1234", "abcdefghij-_123"
	for _, tt := range []struct{ in, want string }{
		{"/hook/SECRET", "/hook/***"},
		{"/hook/", "/hook/***"},
		{"/" + run16 + "/hook/x", "/***/hook/***"},
		{"/a." + run16 + ".b/hook/x", "/***/hook/***"},
		{"/" + run15 + "/hook/x", "/" + run15 + "/hook/***"},
		{"/a." + run15 + "." + run15 + "/x", "/a." + run15 + "." + run15 + "/***"},
	} {
		if got := maskSecretPath(tt.in); got != tt.want {
			t.Errorf("maskSecretPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
