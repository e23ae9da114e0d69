package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &progress{w: &buf, label: "upload a.csv", bytes: true, total: 4_000_000, now: func() time.Time { return now }, start: now}
	now = now.Add(2 * time.Second)
	p.Set(1_000_000)
	p.Set(1_500_000) // within redrawEvery of the last draw: not drawn
	now = now.Add(2 * time.Second)
	p.Set(2_000_000)
	p.Done()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\r")[1:]
	want := []string{
		"upload a.csv [======                  ]  25% 1.0 MB/4.0 MB  500.0 kB/s",
		"upload a.csv [============            ]  50% 2.0 MB/4.0 MB  500.0 kB/s",
		"upload a.csv [============            ]  50% 2.0 MB/4.0 MB  500.0 kB/s",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	var off *progress // stderr is not a terminal: every call is a no-op
	off.Set(1)
	off.SetTotal(2)
	off.Done()

	if got := groupDigits(1234567); got != "1,234,567" {
		t.Fatalf("groupDigits = %s", got)
	}
	if got := groupDigits(-1000); got != "-1,000" {
		t.Fatalf("groupDigits = %s", got)
	}
}
