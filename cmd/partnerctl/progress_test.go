package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestProgressLine draws a bar as a terminal would get it: the label, the
// amount and the rate; the percentage once the total is known; nothing at
// all off a terminal.
func TestProgressLine(t *testing.T) {
	t.Parallel()
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

	// A resumed export shows its total, and its rate counts this run's
	// rows only: 1,000 rows after 1,000,000 in 2 seconds are 500 rows/s.
	buf.Reset()
	ticks.Store(0)
	p = clocked.newProgress(&buf, "report 9", 0, false)
	p.Resume(1_000_000, 1_001_000)
	p.Set(1_001_000)
	p.Done(nil)
	if out := buf.String(); !strings.Contains(out, "1,001,000 rows / 1,001,000 rows") || !strings.Contains(out, "500 rows/s") {
		t.Errorf("resumed bar: %q", out)
	}

	// A file's name that drives a terminal is shown escaped.
	buf.Reset()
	p = a.newProgress(&buf, "upload "+hostile+".csv", 10, true)
	p.Done(nil)
	if out := buf.String(); strings.Contains(out, "\x1b]0;") || strings.ContainsAny(out, "\a\u202e\u009b") || !strings.Contains(out, `\x1b]0;pwned`) {
		t.Errorf("label with terminal controls drawn as %q", out)
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

// TestProgressAfterInterrupt stops a bar as Ctrl-C does: the terminal
// echoes ^C after the bar's line, the command stops the bar and prints
// why. The screen then holds the bar's last state on one clean line and
// the message on the next, not the bar redrawn from the echo's column
// ("rereport 7 ...").
func TestProgressAfterInterrupt(t *testing.T) {
	t.Parallel()
	scr := &screen{drawn: make(chan struct{}, 1)}
	a := &app{isTerminal: func(io.Writer) bool { return true }}
	// The writer newProgress gives a terminal, of mpb's default width.
	p := a.newBar(&barWriter{out: scr, fd: -1, moves: true}, "report 7", 10_000, false)
	p.Set(5_000)
	<-scr.drawn             // a frame showing 5,000 rows is on the screen
	scr.Write([]byte("^C")) // the terminal's echo, at the cursor
	p.Done(errors.New("context canceled"))
	scr.Write([]byte("partnerctl: interrupted: context canceled\n"))

	lines, err := scr.lines()
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 3 || lines[2] != "" {
		t.Fatalf("screen after Ctrl-C: %q, want the bar, the message and the cursor's empty line", lines)
	}
	if !strings.HasPrefix(lines[0], "report 7 ") || strings.Count(lines[0], "report 7") != 1 ||
		!strings.Contains(lines[0], "5,000 rows / 10,000 rows") || !strings.Contains(lines[0], "50%") {
		t.Errorf("bar line after Ctrl-C: %q", lines[0])
	}
	if lines[1] != "partnerctl: interrupted: context canceled" {
		t.Errorf("message line after Ctrl-C: %q", lines[1])
	}
}

// screen is a terminal screen for the sequences a progress bar writes:
// text, carriage return, line feed (to the next line's start, as a
// terminal's output processing makes it), cursor up (ESC [ n A) and erase
// to the end of the screen (ESC [ J). drawn gets a value once a frame
// showing 5,000 rows was written.
type screen struct {
	mu       sync.Mutex
	rows     [][]byte
	row, col int
	err      error
	drawn    chan struct{}
}

func (s *screen) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < len(b); i++ {
		for len(s.rows) <= s.row {
			s.rows = append(s.rows, nil)
		}
		switch c := b[i]; c {
		case '\r':
			s.col = 0
		case '\n':
			s.row, s.col = s.row+1, 0
		case 0x1b:
			end := bytes.IndexAny(b[i:], "AJ")
			if end < 0 || b[i+1] != '[' {
				s.err = fmt.Errorf("escape sequence %q", b[i:])
				return len(b), nil
			}
			seq := b[i+2 : i+end]
			if b[i+end] == 'J' {
				s.rows[s.row] = s.rows[s.row][:min(s.col, len(s.rows[s.row]))]
				s.rows = s.rows[:s.row+1]
			} else {
				n, err := strconv.Atoi(string(seq))
				if err != nil {
					s.err = fmt.Errorf("cursor up %q", seq)
				}
				s.row = max(0, s.row-n)
			}
			i += end
		default:
			line := s.rows[s.row]
			for len(line) <= s.col {
				line = append(line, ' ')
			}
			line[s.col] = c
			s.rows[s.row], s.col = line, s.col+1
		}
	}
	if bytes.Contains(b, []byte("5,000 rows")) {
		select {
		case s.drawn <- struct{}{}:
		default:
		}
	}
	return len(b), nil
}

// lines returns the screen's lines, the cursor's included, or the
// sequence written that a screen does not take.
func (s *screen) lines() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	var out []string
	for i, r := range s.rows {
		if i <= s.row || len(r) > 0 {
			out = append(out, string(r))
		}
	}
	for len(out) <= s.row {
		out = append(out, "")
	}
	return out, nil
}
