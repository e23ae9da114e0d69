package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress draws a one-line progress bar on a terminal: a count with its
// rate, and a bar with a percentage when the total is known. It redraws at
// most every redrawEvery. A nil *progress draws nothing, so commands call
// it unconditionally; newProgress returns nil when stderr is not a
// terminal.
type progress struct {
	w     io.Writer
	label string
	bytes bool  // count bytes (else rows)
	total int64 // 0: unknown
	now   func() time.Time

	mu     sync.Mutex
	start  time.Time
	last   time.Time
	n      int64
	width  int // of the last line drawn, to blank it out
	closed bool
}

const redrawEvery = 100 * time.Millisecond

// newProgress returns a progress bar on stderr, or nil when stderr is not
// a terminal.
func (a *app) newProgress(w io.Writer, label string, total int64, bytes bool) *progress {
	if !a.isTerminal(w) {
		return nil
	}
	return &progress{w: w, label: label, bytes: bytes, total: total, now: time.Now, start: time.Now()}
}

// Set records that n units are done.
func (p *progress) Set(n int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n = n
	if now := p.now(); now.Sub(p.last) >= redrawEvery {
		p.last = now
		p.draw()
	}
}

// SetTotal sets the total once it is known, turning the count into a bar.
func (p *progress) SetTotal(total int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = total
}

// enabled reports whether the bar draws at all.
func (p *progress) enabled() bool { return p != nil }

// Add records n more units.
func (p *progress) Add(n int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	v := p.n + n
	p.mu.Unlock()
	p.Set(v)
}

// Done draws the final state and ends the line.
func (p *progress) Done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	p.draw()
	fmt.Fprintln(p.w)
}

func (p *progress) draw() {
	elapsed := p.now().Sub(p.start).Seconds()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(p.n) / elapsed
	}
	var b strings.Builder
	b.WriteString(p.label)
	if p.total > 0 {
		frac := min(float64(p.n)/float64(p.total), 1)
		const width = 24
		full := int(frac * width)
		done := p.amount(float64(p.n))
		if !p.bytes {
			done = groupDigits(p.n)
		}
		fmt.Fprintf(&b, " [%s%s] %3.0f%% %s/%s", strings.Repeat("=", full), strings.Repeat(" ", width-full),
			frac*100, done, p.amount(float64(p.total)))
	} else {
		fmt.Fprintf(&b, " %s", p.amount(float64(p.n)))
	}
	fmt.Fprintf(&b, "  %s/s", p.amount(rate))
	line := b.String()
	pad := max(p.width-len(line), 0)
	p.width = len(line)
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
}

// amount formats a count of bytes (1.2 MB) or rows (12,345 rows).
func (p *progress) amount(v float64) string {
	if !p.bytes {
		return groupDigits(int64(v)) + " rows"
	}
	units := []string{"B", "kB", "MB", "GB", "TB"}
	i := 0
	for v >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", v, units[i])
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
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
