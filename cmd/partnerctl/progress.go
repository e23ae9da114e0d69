package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"
)

// progress draws a progress bar on a terminal with mpb, which fits the
// line to the terminal's width (read again as the window changes) and
// computes the rate and the time left: the label, the count (a bar, a
// percentage and the time left once the total is known), and the average
// rate. A nil *progress draws nothing, so commands call it
// unconditionally; newProgress returns nil when w is not a terminal.
type progress struct {
	p     *mpb.Progress
	bar   *mpb.Bar
	total atomic.Int64 // 0: unknown
	// base is the count the run started from (a resumed export's rows
	// before it): the rate counts what this run did.
	base atomic.Int64
}

// newProgress returns a progress bar on w counting bytes or rows, with the
// total when it is known (else 0), or nil when w is not a terminal or is
// one that cannot move the cursor (TERM=dumb: an editor's shell buffer, a
// CI log).
func (a *app) newProgress(w io.Writer, label string, total int64, bytes bool) *progress {
	if !a.isTerminal(w) || a.dumbTerminal() {
		return nil
	}
	return a.newBar(newBarWriter(w), label, total, bytes)
}

// dumbTerminal reports whether TERM says the terminal moves no cursor.
func (a *app) dumbTerminal() bool {
	return a.getenv != nil && a.getenv("TERM") == "dumb"
}

// newBar returns a progress bar drawn by cw. The label (a file's name)
// goes through termSafe.
func (a *app) newBar(cw *barWriter, label string, total int64, bytes bool) *progress {
	// The caller decided cw draws on a terminal: refresh as on one.
	pr := &progress{p: mpb.New(mpb.WithConsoleWriter(cw), mpb.WithAutoRefresh())}
	pr.total.Store(total)
	known := func() bool { return pr.total.Load() > 0 }
	amount := func(n int64) string { return groupDigits(n) + " rows" }
	rate := func(r float64) string { return fmt.Sprintf("%.0f rows/s", r) }
	if bytes {
		amount = func(n int64) string { return fmt.Sprintf("% .1f", decor.SizeB1000(n)) }
		rate = func(r float64) string { return fmt.Sprintf("% .1f/s", decor.SizeB1000(int64(r))) }
	}
	now := a.now
	if now == nil {
		now = time.Now
	}
	start := now()
	// The average rate since the bar started, the final count included
	// (mpb's own average reads 0 once the bar completes), of this run's
	// count only.
	speed := decor.Any(func(s decor.Statistics) string {
		el := now().Sub(start).Seconds()
		done := s.Current - pr.base.Load()
		if el <= 0 || done <= 0 {
			return ""
		}
		return rate(float64(done) / el)
	})
	count := decor.Any(func(s decor.Statistics) string {
		if !known() {
			return amount(s.Current)
		}
		return amount(s.Current) + " / " + amount(s.Total)
	})
	// The bar starts without a total, so that mpb never completes it on
	// its own (it would ignore every later SetTotal, and Done would wait
	// for a count that may never come); Done completes it.
	pr.bar = pr.p.New(0, mpb.BarStyle(),
		mpb.PrependDecorators(decor.Name(termSafe(label)+" ", decor.WCSyncSpaceR), count),
		mpb.AppendDecorators(
			decor.Any(func(s decor.Statistics) string {
				if !known() {
					return ""
				}
				return fmt.Sprintf("%3d%%", min(100, 100*s.Current/max(s.Total, 1)))
			}, decor.WC{W: 5}),
			decor.Name("  "), speed,
			// The time left, once there is a total to reach, at this
			// run's average rate.
			decor.Any(func(s decor.Statistics) string {
				done := s.Current - pr.base.Load()
				if !known() || s.Completed || s.Aborted || done <= 0 {
					return ""
				}
				el := now().Sub(start)
				return time.Duration(float64(el) / float64(done) * float64(max(s.Total-s.Current, 0))).Round(time.Second).String()
			}, decor.WC{W: 8}),
		),
	)
	pr.SetTotal(total)
	return pr
}

// Set records that n units are done.
func (p *progress) Set(n int64) {
	if p != nil {
		p.bar.SetCurrent(n)
	}
}

// SetTotal sets the total once it is known, turning the count into a bar.
func (p *progress) SetTotal(total int64) {
	if p != nil && total > 0 {
		p.total.Store(total)
		p.bar.SetTotal(total, false)
	}
}

// Resume says the run goes on after done units, of total (0: unknown):
// the count starts at done, and the rate counts from there.
func (p *progress) Resume(done, total int64) {
	if p != nil {
		p.base.Store(done)
		p.bar.SetCurrent(done)
		p.SetTotal(total)
	}
}

// enabled reports whether the bar draws at all.
func (p *progress) enabled() bool { return p != nil }

// Done draws the final state and ends the line: complete after success,
// left where it stopped after err.
func (p *progress) Done(err error) {
	if p == nil {
		return
	}
	if err != nil {
		p.bar.Abort(false)
	} else {
		p.bar.SetTotal(-1, true)
	}
	p.p.Wait()
}

// barWriter is the terminal writer of a progress bar. On a terminal,
// each frame goes back to the start of the line, up over the lines of the
// frame before, clears to the end of the screen and draws the bar, in one
// write. Going back to the start of the line matters when the terminal
// wrote after the bar: Ctrl-C echoes ^C after the bar's line, and a frame
// drawn from there would keep the echo's columns on the bar's line and
// run past the terminal's width ("rereport 7 ..."). Elsewhere the frames
// follow each other, one line each.
type barWriter struct {
	bytes.Buffer // the frame being drawn
	out          io.Writer
	fd           int  // the terminal's, to read its size, else -1
	moves        bool // whether frames move the cursor
	lines        int  // the lines of the frame drawn last
	frame        []byte
}

func newBarWriter(out io.Writer) *barWriter {
	w := &barWriter{out: out, fd: -1}
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		w.fd, w.moves = int(f.Fd()), true
	}
	return w
}

// IsTerminal reports whether the bar can read the terminal's width.
func (w *barWriter) IsTerminal() bool { return w.fd >= 0 }

// GetTermSize returns the terminal's width and height.
func (w *barWriter) GetTermSize() (width, height int, err error) {
	return term.GetSize(w.fd)
}

// Flush draws the frame buffered, of the given number of lines, over the
// frame before.
func (w *barWriter) Flush(lines int) error {
	w.frame = w.frame[:0]
	if w.moves {
		w.frame = append(w.frame, '\r')
		if w.lines > 0 {
			w.frame = fmt.Appendf(w.frame, "\x1b[%dA", w.lines)
		}
		w.frame = append(w.frame, "\x1b[J"...)
	}
	w.frame = append(w.frame, w.Bytes()...)
	w.Reset()
	w.lines = lines
	_, err := w.out.Write(w.frame)
	return err
}

// groupDigits writes n with thousands separators: 1,234,567.
func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
