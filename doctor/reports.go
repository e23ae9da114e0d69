package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"time"
)

// dataPages bounds the pages of report data read: rows are many.
const dataPages = 3

// reports lists the reports page by page, then reads the first one's
// data, charts and metadata.
func (p *prober) reports(ctx context.Context) error {
	c := p.add(&Check{Name: "reports: list and paging", Operation: "getReports"})
	seen := map[string]bool{}
	var first string
	ended := false
	for page := 0; page < p.maxPages && !ended; page++ {
		a, err := p.call(ctx, http.MethodPost, "/report/v1/list", nil, pageBody(page, 100))
		if err != nil {
			return err
		}
		if !p.judge(c, a, http.StatusOK) {
			return nil
		}
		var l struct {
			EndOfList *bool `json:"endOfList"`
			Results   []struct {
				ID json.Number `json:"id"`
			} `json:"results"`
		}
		if json.Unmarshal(a.body, &l) != nil {
			break
		}
		fresh := 0
		for _, r := range l.Results {
			if first == "" {
				first = r.ID.String()
			}
			if !seen[r.ID.String()] {
				seen[r.ID.String()], fresh = true, fresh+1
			}
		}
		switch {
		case l.EndOfList != nil && *l.EndOfList, len(l.Results) == 0:
			ended = true
		case fresh == 0:
			c.diverge(Divergence{Operation: a.op, Member: "/endOfList", Fake: "true on the last page",
				Deployment: fmt.Sprintf("false, and page %d brings no report not already listed: the list does not end", page+1)})
			ended = true
		}
	}
	if !ended {
		c.note(fmt.Sprintf("read %d reports in %d pages; not followed further", len(seen), p.maxPages))
	} else {
		c.note(fmt.Sprintf("%d reports; the list ends", len(seen)))
	}
	if p.stop != "" {
		return nil
	}
	return p.reportReads(ctx, first)
}

func pageBody(number, size int) map[string]any {
	return map[string]any{"page": map[string]int{"number": number, "size": size}}
}

// reportReads reads the data, charts and metadata of a report.
func (p *prober) reportReads(ctx context.Context, id string) error {
	type read struct{ name, path string }
	reads := []read{{"chart data", "chart-data"}, {"chart metadata", "chart-metadata"}, {"metadata", "metadata"}, {"data schema", "data-schema"}}
	if id == "" {
		p.add(&Check{Name: "report data", Status: Skipped, Note: "the list holds no report"})
		for _, r := range reads {
			p.add(&Check{Name: "report " + r.name, Status: Skipped, Note: "the list holds no report"})
		}
		return nil
	}
	if err := p.dataPages(ctx, "report data", "/report/v1/"+url.PathEscape(id)+"/data"); err != nil || p.stop != "" {
		return err
	}
	for _, r := range reads {
		c := p.add(&Check{Name: "report " + r.name})
		a, err := p.call(ctx, http.MethodPost, "/report/v1/"+url.PathEscape(id)+"/"+r.path, nil, map[string]any{})
		if err != nil {
			return err
		}
		c.Operation = a.op
		p.judge(c, a, http.StatusOK)
		if p.stop != "" {
			return nil
		}
	}
	return nil
}

// dataPages reads pages of rows until endOfList, at most dataPages. A
// page that brings the rows of the page before again, as of a deployment
// that pages otherwise, diverges: the rows would never end.
func (p *prober) dataPages(ctx context.Context, name, path string) error {
	c := p.add(&Check{Name: name + ": pages"})
	var prev []any
	for page := range dataPages {
		a, err := p.call(ctx, http.MethodPost, path, nil, pageBody(page, 100))
		if err != nil {
			return err
		}
		c.Operation = a.op
		if !p.judge(c, a, http.StatusOK) {
			return nil
		}
		var d struct {
			EndOfList *bool `json:"endOfList"`
			Results   []any `json:"results"`
		}
		if json.Unmarshal(a.body, &d) != nil || d.EndOfList != nil && *d.EndOfList || len(d.Results) == 0 {
			c.note(fmt.Sprintf("the rows end on page %d", page+1))
			return nil
		}
		if reflect.DeepEqual(d.Results, prev) {
			c.diverge(Divergence{Operation: a.op, Member: "/endOfList", Fake: "true on the last page",
				Deployment: fmt.Sprintf("false, and page %d brings the rows of page %d again: the rows do not end", page+1, page)})
			return nil
		}
		prev = d.Results
	}
	c.note(fmt.Sprintf("read %d pages; not followed further", dataPages))
	return nil
}

// view reads a prepared view: the one Config names, or one prepared for
// the first report when Config.PrepareView says so.
func (p *prober) view(ctx context.Context) error {
	id := strconv.FormatInt(p.cfg.ViewID, 10)
	if p.cfg.ViewID == 0 {
		if !p.cfg.PrepareView {
			p.add(&Check{Name: "report view", Status: Skipped, Note: "no view given, and preparing one (a write) was not asked for"})
			return nil
		}
		prepared, err := p.prepareView(ctx)
		if err != nil || prepared == "" {
			return err
		}
		id = prepared
	}
	for _, r := range []struct{ name, suffix string }{{"status", "/status"}, {"metadata", ""}} {
		c := p.add(&Check{Name: "report view " + r.name})
		a, err := p.call(ctx, http.MethodGet, "/report/v1/view/"+id+r.suffix, nil, nil)
		if err != nil {
			return err
		}
		c.Operation = a.op
		p.judge(c, a, http.StatusOK)
		if p.stop != "" {
			return nil
		}
	}
	status, err := p.waitView(ctx, id)
	if err != nil || p.stop != "" {
		return err
	}
	if status != "SUCCESS" {
		p.add(&Check{Name: "report view data: pages", Status: Skipped,
			Note: fmt.Sprintf("the view was not ready within %s (viewStatus %s)", viewWait, status)})
		return nil
	}
	return p.dataPages(ctx, "report view data", "/report/v1/view/"+id+"/data")
}

// viewWait bounds the wait for a view to be ready; viewPoll is the time
// between two reads of its status.
const (
	viewWait = 2 * time.Minute
	viewPoll = 2 * time.Second
)

// waitView reads a view's status until it is SUCCESS, FAILED or DELETED,
// for at most viewWait, and returns the last one read.
func (p *prober) waitView(ctx context.Context, id string) (string, error) {
	deadline := time.Now().Add(viewWait)
	for {
		a, err := p.call(ctx, http.MethodGet, "/report/v1/view/"+id+"/status", nil, nil)
		if err != nil {
			return "", err
		}
		var v struct {
			ViewStatus string `json:"viewStatus"`
		}
		if a.status != http.StatusOK || json.Unmarshal(a.body, &v) != nil {
			return "unreadable", nil
		}
		switch v.ViewStatus {
		case "SUCCESS", "FAILED", "DELETED":
			return v.ViewStatus, nil
		}
		if time.Now().Add(viewPoll).After(deadline) {
			return v.ViewStatus, nil
		}
		t := time.NewTimer(viewPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", ctx.Err()
		case <-t.C:
		}
	}
}

// prepareView prepares a view of the first report, the write
// Config.PrepareView allows.
func (p *prober) prepareView(ctx context.Context) (string, error) {
	c := p.add(&Check{Name: "report view: prepare (asked for)", Operation: "prepareExport"})
	a, err := p.call(ctx, http.MethodPost, "/report/v1/list", nil, pageBody(0, 1))
	if err != nil {
		return "", err
	}
	var l struct {
		Results []struct {
			ID json.Number `json:"id"`
		} `json:"results"`
	}
	if a.status != http.StatusOK || json.Unmarshal(a.body, &l) != nil || len(l.Results) == 0 {
		c.Status, c.Note = Skipped, "no report to prepare a view of"
		return "", nil
	}
	a, err = p.call(ctx, http.MethodPost, "/report/v1/view/"+url.PathEscape(l.Results[0].ID.String())+"/prepare_export", nil, map[string]any{})
	if err != nil {
		return "", err
	}
	if !p.judge(c, a, http.StatusOK) {
		return "", nil
	}
	var v struct {
		ViewID json.Number `json:"viewId"`
	}
	if json.Unmarshal(a.body, &v) != nil || v.ViewID == "" {
		return "", nil
	}
	return v.ViewID.String(), nil
}
