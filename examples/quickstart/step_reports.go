package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/reports"
)

// reportsStep lists the reports, exports one through a consistent view as
// CSV (showing its first lines) and reads its chart data.
func reportsStep(ctx context.Context, c *partner.Client, w io.Writer) error {
	var list []reports.Report
	for r, err := range c.Reports.List(ctx, reports.ListParams{}) {
		if err != nil {
			return fmt.Errorf("listing reports: %w", err)
		}
		list = append(list, r)
	}
	if len(list) == 0 {
		fmt.Fprintln(w, "reports: no report to export")
		return nil
	}
	names := make([]string, len(list))
	pick := list[0]
	for i, r := range list {
		names[i] = fmt.Sprintf("%d %q", r.ID, r.Name)
		if r.ID == demo.ReportPartners {
			pick = r
		}
	}
	fmt.Fprintf(w, "reports: listed %d reports: %s\n", len(list), strings.Join(names, ", "))

	var csv bytes.Buffer
	n, err := c.Reports.ExportCSV(ctx, pick.ID, &csv, reports.ExportOptions{
		Wait: reports.WaitOptions{Interval: 50 * time.Millisecond},
	})
	if err != nil {
		return fmt.Errorf("exporting report %d: %w", pick.ID, err)
	}
	lines := strings.SplitN(csv.String(), "\n", 4)
	fmt.Fprintf(w, "reports: exported report %d through a view as CSV, %d rows; first lines:\n", pick.ID, n)
	for _, l := range lines[:min(3, len(lines))] {
		fmt.Fprintf(w, "reports:   %s\n", l)
	}

	charts, err := c.Reports.ChartData(ctx, pick.ID, reports.ChartDataParams{})
	if err != nil {
		return fmt.Errorf("reading chart data of report %d: %w", pick.ID, err)
	}
	for _, ch := range charts.Charts {
		groups := make([]string, 0, len(ch.Results))
		for _, r := range ch.Results {
			parts := make([]string, 0, r.Len())
			for _, v := range r.Values() {
				parts = append(parts, fmt.Sprint(v))
			}
			groups = append(groups, strings.Join(parts, "="))
		}
		fmt.Fprintf(w, "reports: chart %q (version %d): %s\n", ch.Name, ch.Version, strings.Join(groups, ", "))
	}
	return nil
}
