package core

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// TestJoinedURLAsParsed: the URL of a request to the base URL and a path
// (joined to the base URL parsed once, when the path reads the same
// escaped) is the URL net/http makes of the whole text, field for field,
// and so is the request's Host, whatever the base URL and the path hold.
func TestJoinedURLAsParsed(t *testing.T) {
	t.Parallel()
	bases := []string{"https://api.example.com", "https://api.example.com/", "http://127.0.0.1:8080/gw/partner",
		"http://[::1]:80/", "http://h:/x/", "https://user:p%40ss@h/p", "https://h/a%20b/", "https://h/p?q=1", "https://h/p#f"}
	paths := []string{"/api/scim/v2/Users/2819c223-7f76-453a-919d-413861904646", "/api/scim/v2/Users/%2E%2E",
		"/a/x%20y", "/a/ü", "/report/v1/list?x=1", "/a/b;c=d", "/a/$&+,:;=@~_.-", "relative/path", "/", "",
		"/a!b*(c)'", "/a#b", "/a/%zz"}
	for _, b := range bases {
		bu, err := url.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		c := New(Config{BaseURL: bu})
		for _, p := range paths {
			want, wantErr := http.NewRequest("GET", c.base+strings.TrimPrefix(p, "/"), nil)
			got, err := c.httpRequest(context.Background(), "GET", nil, p)
			if (err != nil) != (wantErr != nil) {
				t.Errorf("%s + %s: error %v, parsed: %v", b, p, err, wantErr)
				continue
			}
			if err != nil {
				continue
			}
			if !reflect.DeepEqual(got.URL, want.URL) || got.Host != want.Host {
				t.Errorf("%s + %s: URL %#v, Host %q; parsed %#v, Host %q", b, p, got.URL, got.Host, want.URL, want.Host)
			}
		}
	}
}
