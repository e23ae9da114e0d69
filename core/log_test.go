package core

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
)

// recordLog is a slog.Handler that keeps every record, its attributes
// by key.
type recordLog struct {
	mu      sync.Mutex
	records []logRecord
}

type logRecord struct {
	msg   string
	attrs map[string]slog.Value
}

func (h *recordLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *recordLog) WithGroup(string) slog.Handler            { return h }

func (h *recordLog) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{msg: r.Message, attrs: map[string]slog.Value{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.Resolve()
		return true
	})
	h.mu.Lock()
	h.records = append(h.records, rec)
	h.mu.Unlock()
	return nil
}

// TestLogOneRecordPerAttempt: every attempt of a call ends in one debug
// record with the call's method, path and request id, the attempt's
// number, its status and the service's request id; a retried attempt's
// record carries the wait before the retry; nothing in them is a secret.
func TestLogOneRecordPerAttempt(t *testing.T) {
	const key = "sub-key-SECRET-42"
	var logs recordLog
	c, mt := newMockClient(t, func(cfg *Config) {
		cfg.Logger = slog.New(&logs)
		cfg.ServiceRequestIDHeader = "X-Svc-Request"
		cfg.SubscriptionKey = key
	})
	var waits []time.Duration
	c.testHookWait = func(d time.Duration) { waits = append(waits, d) }
	n := 0
	mt.RegisterResponder("GET", base+"/items/7", func(req *http.Request) (*http.Response, error) {
		n++
		resp := httpmock.NewStringResponse(503, `{"error":"busy"}`)
		if n == 3 {
			resp = httpmock.NewStringResponse(200, `{}`)
		} else {
			resp.Header.Set("Retry-After", "0")
		}
		// A server may echo a secret anywhere, its request id too.
		resp.Header.Set("X-Svc-Request", fmt.Sprintf("svc-%d %s", n, key))
		return resp, nil
	})
	var info ResponseInfo
	ctx := WithCallOptions(context.Background(), CallOptions{Capture: &info})
	if err := c.Do(ctx, &Request{Method: "GET", Path: "/items/7"}, nil); err != nil {
		t.Fatal(err)
	}
	if len(logs.records) != 3 || len(waits) != 2 {
		t.Fatalf("%d records and %d waits for 3 attempts, want 3 and 2: %+v", len(logs.records), len(waits), logs.records)
	}
	for i, rec := range logs.records {
		want := map[string]any{
			"method": "GET", "path": "/items/7", "attempt": int64(i + 1), "status": int64(503),
			"request_id":         info.RequestID,
			"service_request_id": fmt.Sprintf("svc-%d %s", i+1, redactedText),
		}
		msg := "partner: retrying request"
		if i == 2 {
			want["status"], msg = int64(200), "partner: request done"
		} else {
			want["wait"] = waits[i]
		}
		checkRecord(t, rec, msg, want, key)
	}
	if info.Attempts != 3 || info.RequestID == "" {
		t.Errorf("capture %+v, want 3 attempts and a request id", info)
	}
}

// checkRecord checks that rec is msg with the attributes of want (a wait
// only if want has one) and that none of its attributes shows secret.
func checkRecord(t *testing.T, rec logRecord, msg string, want map[string]any, secret string) {
	t.Helper()
	if rec.msg != msg {
		t.Errorf("record %q, want %q", rec.msg, msg)
	}
	for k, v := range want {
		if got, ok := rec.attrs[k]; !ok || got.Any() != v {
			t.Errorf("record %q: %s = %v, want %v", rec.msg, k, got, v)
		}
	}
	if _, ok := want["wait"]; !ok {
		if w, ok := rec.attrs["wait"]; ok {
			t.Errorf("record %q has a wait (%v)", rec.msg, w)
		}
	}
	for k, v := range rec.attrs {
		if strings.Contains(v.String(), secret) {
			t.Errorf("record %q: %s shows a secret: %v", rec.msg, k, v)
		}
	}
}
