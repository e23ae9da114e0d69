package doctor

import (
	"fmt"
	"strings"
)

// String is the report as text, one check a line, each divergence under
// its check, then the count of each outcome:
//
//	diverged  reports: list and paging (getReports)
//	          /results/[]/name: the fake answers a member of type string; the deployment answered none
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "doctor: %s\n", r.BaseURL)
	count := map[Status]int{}
	for _, c := range r.Checks {
		count[c.Status]++
		name := c.Name
		if c.Operation != "" && !strings.Contains(name, c.Operation) {
			name += " (" + c.Operation + ")"
		}
		if c.Note != "" {
			name += ": " + c.Note
		}
		fmt.Fprintf(&b, "%-9s %s\n", c.Status, name)
		for _, d := range c.Divergences {
			op := ""
			if d.Operation != c.Operation {
				op = d.Operation + " "
			}
			fmt.Fprintf(&b, "%-9s %s%s: the fake answers %s; the deployment answered %s\n", "", op, d.Member, d.Fake, d.Deployment)
		}
	}
	fmt.Fprintf(&b, "%d passed, %d diverged, %d skipped, %d failed\n", count[Passed], count[Diverged], count[Skipped], count[Failed])
	return b.String()
}
