package contract_test

import (
	"net/http"
	"testing"
)

// TestResponseHeadersChecked: an answer's header the contract declares
// required (the subscribe answer's Location, the authorization
// redirect's) breaks the contract when it is missing, with both checkers
// (serve compares them); present, it passes.
func TestResponseHeadersChecked(t *testing.T) {
	const (
		sub       = `{"subscriber_type": "webhook", "event": ["object.update"], "name": "n", "webhook_settings": {"callback_url": "https://example.com/hook"}}`
		authorize = "/oauth/authorize?response_type=code&client_id=c&redirect_uri=https%3A%2F%2Fexample.com%2Fcb&state=s"
	)
	location := func(v string) http.Header { return http.Header{"Location": {v}} }
	for _, tc := range []struct {
		name           string
		method, target string
		body           string
		status         int
		header         http.Header
		want           string // the violation's key, "" for none
	}{
		{"subscribe with Location", "POST", "/event/v1/subscriber", sub, 200, location("/event/v1/subscriber/s-1"), ""},
		{"subscribe without Location", "POST", "/event/v1/subscriber", sub, 200, nil, "WebhookRegistration"},
		{"subscribe refused without Location", "POST", "/event/v1/subscriber", sub, 400, nil, ""},
		{"authorize with Location", "GET", authorize, "", 302, location("https://example.com/cb?code=x&state=s"), ""},
		{"authorize without Location", "GET", authorize, "", 302, nil, "get-authorize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct := "application/json"
			answer := `{"subscriber_id": "s-1"}`
			if tc.status != 200 {
				ct, answer = "", ""
			}
			got := serveWith(t, nil, tc.header, tc.method, tc.target, tc.body, tc.status, ct, answer)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("violations %v, want none", got)
			case tc.want != "" && (len(got) != 1 || got[0].Key != tc.want):
				t.Errorf("violations %v, want one of %s", got, tc.want)
			}
		})
	}
}
