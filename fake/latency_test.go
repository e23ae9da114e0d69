package fake

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestCloseEndsInjectedLatency checks that Close does not wait out an
// injected latency whose client hung up before its body was read (net/http
// does not cancel such a request's context).
func TestCloseEndsInjectedLatency(t *testing.T) {
	srv := NewServer()
	srv.InjectFault(Fault{Method: http.MethodPost, Path: "/bulk/v1/bulkload", Latency: time.Hour, Times: 1})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/bulk/v1/bulkload?integration_id=x", strings.NewReader("a,b\n1,2\n"))
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	waitUntil(t, "the handler takes the fault", func() bool { return !srv.faultPending() })
	cancel()
	<-errc
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close is waiting out the injected latency")
	}
}

// faultPending reports whether an injected fault is still waiting for a request.
func (f *Fake) faultPending() bool {
	f.faults.mu.Lock()
	defer f.faults.mu.Unlock()
	return len(f.faults.faults) > 0
}

// answerSeen records what a handler did with its answer.
type answerSeen struct {
	http.ResponseWriter
	wrote    bool // WriteHeader or Write was called
	hijacked bool
}

func (a *answerSeen) WriteHeader(code int) { a.wrote = true; a.ResponseWriter.WriteHeader(code) }
func (a *answerSeen) Write(p []byte) (int, error) {
	a.wrote = true
	return a.ResponseWriter.Write(p)
}
func (a *answerSeen) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	a.hijacked = true
	return http.NewResponseController(a.ResponseWriter).Hijack()
}
func (a *answerSeen) Flush()                      { http.NewResponseController(a.ResponseWriter).Flush() }
func (a *answerSeen) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// TestAbandonedAnswerSendsNothing checks that an answer the fake gives up
// on while it is injected latency or a slow body (its client went away,
// or Close) closes the connection: a handler that returned without
// writing would send an empty 200, which a contract check (or a client
// still there) takes for the service's answer. A test that cancels its
// requests in flight and closes the fake once done hit this.
func TestAbandonedAnswerSendsNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault Fault
		stop  string // "close" or "cancel"
	}{
		{"latency, close", Fault{Latency: time.Hour}, "close"},
		{"latency, client gone", Fault{Latency: time.Hour}, "cancel"},
		{"slow body, close", Fault{Dribble: time.Hour}, "close"},
		{"slow body, client gone", Fault{Dribble: time.Hour}, "cancel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen *answerSeen
			returned := make(chan struct{})
			srv := NewServer(WithMiddleware(func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/report/v1/view/1/status" {
						next.ServeHTTP(w, r)
						return
					}
					seen = &answerSeen{ResponseWriter: w}
					defer close(returned)
					next.ServeHTTP(seen, r)
				})
			}))
			defer srv.Close()
			ft := tc.fault
			ft.Method, ft.Path, ft.Times = http.MethodGet, "/report/v1/view/1/status", 1
			srv.InjectFault(ft)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/report/v1/view/1/status", nil)
			req.Header.Set("Authorization", "Bearer "+token(t, srv))
			got := make(chan *http.Response, 1)
			go func() {
				// A connection of its own: net/http sends a request
				// again when a reused connection closes unanswered.
				tr := &http.Transport{}
				defer tr.CloseIdleConnections()
				resp, err := (&http.Client{Transport: tr}).Do(req)
				if err == nil && tc.fault.Latency > 0 {
					resp.Body.Close()
					got <- resp
				}
				if err == nil && tc.fault.Dribble > 0 {
					// The headers and the first piece are in: the
					// handler waits in its pause.
					got <- resp
				}
				close(got)
			}()
			if tc.fault.Latency > 0 {
				waitUntil(t, "the handler takes the fault", func() bool { return !srv.faultPending() })
			} else if resp := <-got; resp != nil {
				defer resp.Body.Close()
			}
			switch tc.stop {
			case "close":
				srv.Fake.Close()
			case "cancel":
				cancel()
			}
			<-returned
			if seen.wrote && tc.fault.Latency > 0 || !seen.hijacked {
				t.Errorf("the handler wrote %v, closed the connection %v; want nothing written and the connection closed", seen.wrote, seen.hijacked)
			}
			if resp, ok := <-got; ok && resp != nil {
				t.Errorf("the client got %s", resp.Status)
			}
		})
	}
}

// token returns a bearer token of the fake's default client.
func token(t *testing.T, srv *Server) string {
	t.Helper()
	resp, err := http.PostForm(srv.URL+"/oauth/token", url.Values{"grant_type": {"client_credentials"},
		"client_id": {DefaultClientID}, "client_secret": {DefaultClientSecret}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	return tok.AccessToken
}
