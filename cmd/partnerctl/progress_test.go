package main

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestProgressLine draws a bar as a terminal would get it: the label, the
// amount and the rate; the percentage once the total is known; nothing at
// all off a terminal.
func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	a := &app{isTerminal: func(io.Writer) bool { return true }}
	p := a.newProgress(&buf, "upload a.csv", 4_000_000, true)
	p.Set(1_000_000)
	p.Set(4_000_000)
	p.Done(nil)
	out := buf.String()
	for _, want := range []string{"upload a.csv", "4.0 MB / 4.0 MB", "100%"} {
		if !strings.Contains(out, want) {
			t.Errorf("bytes bar %q lacks %q", out, want)
		}
	}

	buf.Reset()
	p = a.newProgress(&buf, "report 7", 0, false)
	p.Set(1234)
	p.Done(errors.New("stopped"))
	if out := buf.String(); !strings.Contains(out, "report 7") || !strings.Contains(out, "1,234 rows") ||
		strings.Contains(out, "%") {
		t.Errorf("rows count without a total: %q", out)
	}

	// A success before the count reached a known total (an upload the
	// service answered before reading all of it) ends the bar too.
	buf.Reset()
	p = a.newProgress(&buf, "upload b.csv", 4_000_000, true)
	p.Set(1_000_000)
	p.Done(nil)
	if out := buf.String(); !strings.Contains(out, "1.0 MB / 1.0 MB") || !strings.Contains(out, "100%") {
		t.Errorf("bar ended below its total: %q", out)
	}

	// The rate counts the final rows: at 100% it is the average of the
	// whole run, not 0.
	buf.Reset()
	var ticks atomic.Int32 // the bar's goroutine reads the clock too
	clocked := &app{isTerminal: func(io.Writer) bool { return true }, now: func() time.Time {
		if ticks.Add(1) == 1 {
			return time.Unix(0, 0) // the start
		}
		return time.Unix(2, 0)
	}}
	p = clocked.newProgress(&buf, "report 8", 1000, false)
	p.Set(1000)
	p.Done(nil)
	if out := buf.String(); !strings.Contains(out, "100%") || !strings.Contains(out, "500 rows/s") || strings.Contains(out, " 0 rows/s") {
		t.Errorf("rate at 100%%: %q", out)
	}

	off := (&app{isTerminal: func(io.Writer) bool { return false }}).newProgress(&buf, "x", 1, true)
	if off != nil {
		t.Fatal("a bar off a terminal")
	}
	off.Set(1) // a nil bar: every call is a no-op
	off.SetTotal(2)
	off.Done(nil)

	if got := groupDigits(1234567); got != "1,234,567" {
		t.Fatalf("groupDigits = %s", got)
	}
	if got := groupDigits(-1000); got != "-1,000" {
		t.Fatalf("groupDigits = %s", got)
	}
}
