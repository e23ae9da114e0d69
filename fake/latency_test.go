package fake

import (
	"context"
	"net/http"
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
	for srv.faultPending() { // wait until the handler has taken the fault
		time.Sleep(5 * time.Millisecond)
	}
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
