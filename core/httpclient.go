package core

// The HTTP client under the pipeline: its default timeouts, and the
// stall timeout of answer bodies. send.go holds the call's redirect rule
// and transport.

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// Default timeouts of the HTTP client New builds when Config.HTTPClient is
// nil. A client given through Config.HTTPClient keeps its own.
const (
	DefaultDialTimeout           = 10 * time.Second
	DefaultTLSHandshakeTimeout   = 10 * time.Second
	DefaultResponseHeaderTimeout = 60 * time.Second
	// DefaultStallTimeout is the longest an answer's body may send
	// nothing while it is read (Config.StallTimeout). It applies to every
	// client, one given through Config.HTTPClient too.
	DefaultStallTimeout = 60 * time.Second
	// DefaultIdleConnTimeout closes a pooled connection idle this long,
	// below the idle timeouts of common load balancers and NAT gateways
	// (60s and more), which drop a connection without telling either end.
	DefaultIdleConnTimeout = 30 * time.Second
	// DefaultHTTP2PingInterval and DefaultHTTP2PingTimeout are the
	// health check of an HTTP/2 connection: a ping after that long
	// without a frame, and the connection is closed when the ping gets
	// no answer within the timeout.
	DefaultHTTP2PingInterval = 15 * time.Second
	DefaultHTTP2PingTimeout  = 10 * time.Second
)

// serviceOnlyHeaders names the headers that must not follow a redirect to
// another host.
func (cfg *Config) serviceOnlyHeaders() []string {
	names := []string{cfg.EnvHeader, cfg.SubscriptionKeyHeader}
	for k := range cfg.Header {
		names = append(names, k)
	}
	return names
}

// stallBody fails a Read that receives nothing for stall: a timer armed
// while Read waits cancels the attempt's context. Time spent outside
// Read (the caller writing what it read to a slow disk) does not count.
type stallBody struct {
	rc      io.ReadCloser
	timer   *time.Timer
	stall   time.Duration
	cancel  context.CancelCauseFunc
	stalled atomic.Bool
}

func newStallBody(rc io.ReadCloser, stall time.Duration, cancel context.CancelCauseFunc) *stallBody {
	b := &stallBody{rc: rc, stall: stall, cancel: cancel}
	b.timer = time.AfterFunc(time.Hour, b.fire)
	b.timer.Stop()
	return b
}

func (b *stallBody) fire() {
	b.stalled.Store(true)
	b.cancel(ErrAnswerStalled)
}

func (b *stallBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return b.rc.Read(p)
	}
	b.timer.Reset(b.stall)
	n, err := b.rc.Read(p)
	b.timer.Stop()
	if b.stalled.Load() {
		return n, fmt.Errorf("%w (%v)", ErrAnswerStalled, b.stall)
	}
	return n, err
}

func (b *stallBody) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}
