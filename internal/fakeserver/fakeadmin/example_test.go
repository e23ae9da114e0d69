package fakeadmin_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/fakeserver/fakeadmin"
)

// A test written in another language drives the fake over HTTP through
// the admin API; here the same calls are made from Go.
func ExampleNew() {
	a := fakeadmin.New(func() *fake.Fake { return fake.New(fake.WithDemoData()) })
	defer a.Close()
	ts := httptest.NewServer(a)
	defer ts.Close()
	a.SetURL(ts.URL)

	// call sends one admin request and returns the answer's status and body.
	call := func(method, path, body string) (int, string) {
		req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		if err != nil {
			log.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			log.Fatal(err)
		}
		return resp.StatusCode, strings.TrimSpace(string(b))
	}

	// Make the next report listing fail with a 503.
	status, body := call("POST", "/_fake/faults", `{"method":"POST","path":"/report/v1/list","status":503,"times":1}`)
	fmt.Println(status, body, len(a.Fake().Faults()))

	// Back to the start state.
	status, _ = call("POST", "/_fake/reset", "")
	fmt.Println(status, len(a.Fake().Faults()))

	_, body = call("GET", "/_fake/faults", "")
	fmt.Println(body)
	// Output:
	// 201 {"id":"fault-1"} 1
	// 204 0
	// []
}
