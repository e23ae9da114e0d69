package export

// sim runs the plan of an export of a view of rows rows in pages of
// size rows, round by round: every request sent in a round is answered
// at the start of the next, and the reader reads each page as soon as it
// is in. It returns the requests sent, the page requests past the last
// page among them, and the rounds taken.
func sim(rows, size int64, limit int) (reqs, past, rounds int) {
	p := newPlan(limit, size)
	out := p.sends()
	// The pages answered, up to well past the last: the reader stops at
	// the last page, so those past it are never looked up.
	in := make([]bool, rows/size+64)
	for rounds = 1; rounds < 10000; rounds++ {
		reqs += len(out)
		for _, rq := range out {
			first := rq.page * size
			if !rq.probe && rq.page > 0 && first >= rows {
				past++
			}
			if rq.probe {
				n := 0
				if first < rows {
					n = 1
				}
				p.probed(rq.page, n, first == rows-1 || first >= rows, true)
				continue
			}
			p.headers()
			n := int(max(0, min(size, rows-first)))
			p.paged(rq.page, n, first+size >= rows)
			if rq.page < int64(len(in)) {
				in[rq.page] = true
			}
		}
		for in[p.cur] {
			if (p.cur+1)*size >= rows {
				return reqs, past, rounds
			}
			p.cur++
		}
		out = p.sends()
	}
	panic("no end")
}
