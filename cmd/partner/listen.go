package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/partnerapi/partner-go/events"
)

// received is one delivery as the listener got it, with the outcome of
// forwarding it.
type received struct {
	Delivery *events.Delivery
	// Forward is the status the forward URL answered (0: not forwarded
	// or no answer); ForwardErr says why a forward failed.
	Forward    int
	ForwardErr error
}

// receiver hosts an events.Handler on a listener and hands each delivery
// to a channel; with a forward URL it also POSTs the delivery there and
// answers the service as the forward answered (see forwardOne).
type receiver struct {
	forward string
	client  *http.Client
	out     chan<- received
	srv     *http.Server
	done    chan struct{} // closed by stop
}

// startReceiver serves deliveries at path on ln until stop is called.
func startReceiver(ln net.Listener, path, forward string, out chan<- received) *receiver {
	rc := &receiver{forward: forward, client: &http.Client{Timeout: 30 * time.Second}, out: out, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.Handle("POST "+path, &events.Handler{Deliver: rc.deliver})
	rc.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go rc.srv.Serve(ln)
	return rc
}

func (rc *receiver) deliver(ctx context.Context, d *events.Delivery) error {
	r := received{Delivery: d}
	if rc.forward != "" {
		r.Forward, r.ForwardErr = rc.forwardOne(ctx, d)
	}
	select {
	case rc.out <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-rc.done:
		return errors.New("the listener is stopping")
	}
	return r.ForwardErr
}

// forwardOne POSTs the delivery to the forward URL. A 4xx or 5xx answer
// becomes an *events.StatusError with that status and Retry-After, so the
// service is answered as the forward answered and retries as it decides;
// no answer becomes 502 Bad Gateway, another non-2xx answer 500.
func (rc *receiver) forwardOne(ctx context.Context, d *events.Delivery) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rc.forward, bytes.NewReader(d.Raw))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := rc.client.Do(req)
	if err != nil {
		return 0, &events.StatusError{Status: http.StatusBadGateway, Err: err}
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, &events.StatusError{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"),
			Err: fmt.Errorf("forward answered %s", resp.Status)}
	}
	return resp.StatusCode, nil
}

func (rc *receiver) stop(ctx context.Context) error {
	close(rc.done)
	return rc.srv.Shutdown(ctx)
}

// printDelivery writes a delivery as one line of JSON: its body as it was
// received, compacted.
func printDelivery(w io.Writer, d *events.Delivery) error {
	var b bytes.Buffer
	if err := json.Compact(&b, d.Raw); err != nil {
		return err
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// hookPath returns an unguessable callback path: the interface shows no
// signing of deliveries, so the path is what keeps strangers out.
func hookPath() string {
	b := make([]byte, 12)
	rand.Read(b)
	return "/hooks/" + hex.EncodeToString(b)
}
