package text

import "testing"

func TestLevenshtein(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"list", "list", 0}, {"lsit", "list", 2},
		{"deactivat", "deactivate", 1}, {"deactivat", "reactivate", 2}, {"kitten", "sitting", 3},
	} {
		for _, p := range [][2]string{{tc.a, tc.b}, {tc.b, tc.a}} {
			if got := Levenshtein(p[0], p[1]); got != tc.want {
				t.Errorf("Levenshtein(%q, %q) = %d, want %d", p[0], p[1], got, tc.want)
			}
		}
	}
}
