package doctor

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/partnerapi/partner-go/deployment"
)

// scimPage is the page size of the SCIM listing.
const scimPage = 100

// dataPages bounds the pages of report data read: rows are many.
const dataPages = 3

// scim lists the users page by page, reads the first and one that does
// not exist.
func (p *prober) scim(ctx context.Context) error {
	c := p.add(&Check{Name: "SCIM users: list and paging", Operation: "searchViaGet"})
	l := &scimListing{seen: map[string]bool{}, total: -1}
	for page := 0; page < p.maxPages && !l.ended; page++ {
		more, err := p.scimPage(ctx, c, l, page)
		if err != nil || !more {
			return err
		}
	}
	if !l.ended {
		c.note(fmt.Sprintf("read %d users in %d pages; not followed further", len(l.seen), p.maxPages))
	} else if !l.repeated {
		c.note(fmt.Sprintf("%d users; the list ends", len(l.seen)))
		if l.total >= 0 && l.total != len(l.seen) {
			c.diverge(Divergence{Operation: "searchViaGet", Member: "/totalResults", Fake: strconv.Itoa(len(l.seen)) + " (the users listed)", Deployment: strconv.Itoa(l.total)})
		}
	}
	return p.scimGet(ctx, l.first)
}

// scimListing is the SCIM listing so far: the users seen, the first
// one, the last totalResults (-1 before any), and whether it ended, on
// a page that brought no new user (repeated) or the last page.
type scimListing struct {
	seen            map[string]bool
	first           string
	total           int
	ended, repeated bool
}

// add counts a listed user: 1 when it is new.
func (l *scimListing) add(id string) int {
	if l.first == "" {
		l.first = id
	}
	if l.seen[id] {
		return 0
	}
	l.seen[id] = true
	return 1
}

// scimPage reads one page of the listing into l; more is false when the
// answer could not be read on.
func (p *prober) scimPage(ctx context.Context, c *Check, l *scimListing, page int) (more bool, err error) {
	start := len(l.seen) + 1
	a, err := p.call(ctx, http.MethodGet, "/api/scim/v2/Users", url.Values{"startIndex": {strconv.Itoa(start)}, "count": {strconv.Itoa(scimPage)}}, nil)
	if err != nil {
		return false, err
	}
	judge := p.judge
	if page == 0 {
		judge = p.firstRead
	}
	if !judge(c, a, http.StatusOK) {
		return false, nil
	}
	var list struct {
		TotalResults *int `json:"totalResults"`
		StartIndex   *int `json:"startIndex"`
		Resources    []struct {
			ID string `json:"id"`
		} `json:"Resources"`
	}
	if json.Unmarshal(a.body, &list) != nil {
		return false, nil // Findings named it
	}
	if list.StartIndex != nil && *list.StartIndex != start {
		c.diverge(Divergence{Operation: a.op, Member: "/startIndex", Fake: strconv.Itoa(start) + " (the startIndex asked for)", Deployment: strconv.Itoa(*list.StartIndex)})
	}
	if list.TotalResults != nil {
		l.total = *list.TotalResults
	}
	fresh := 0
	for _, r := range list.Resources {
		fresh += l.add(r.ID)
	}
	switch {
	case len(list.Resources) > 0 && fresh == 0:
		c.diverge(Divergence{Operation: a.op, Member: "/Resources", Fake: "the users from startIndex on",
			Deployment: fmt.Sprintf("page %d brings no user not already listed (startIndex %d)", page+1, start)})
		l.ended, l.repeated = true, true
	case len(list.Resources) < scimPage && (l.total < 0 || len(l.seen) >= l.total):
		l.ended = true
	}
	return true, nil
}

// scimGet reads a listed user and one that does not exist.
func (p *prober) scimGet(ctx context.Context, id string) error {
	c := p.add(&Check{Name: "SCIM users: get", Operation: "getUser"})
	if id == "" {
		c.Status, c.Note = Skipped, "the list holds no user"
	} else {
		a, err := p.call(ctx, http.MethodGet, "/api/scim/v2/Users/"+url.PathEscape(id), nil, nil)
		if err != nil {
			return err
		}
		if p.judge(c, a, http.StatusOK) {
			var u struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(a.body, &u) == nil && u.ID != id {
				c.diverge(Divergence{Operation: a.op, Member: "/id", Fake: strconv.Quote(id) + " (the id asked for)", Deployment: strconv.Quote(u.ID)})
			}
		}
	}
	if p.stop != "" {
		return nil
	}
	e := p.add(&Check{Name: "SCIM users: a user that does not exist", Operation: "getUser"})
	a, err := p.call(ctx, http.MethodGet, "/api/scim/v2/Users/"+url.PathEscape("doctor-no-such-user-"+rand.Text()), nil, nil)
	if err != nil {
		return err
	}
	p.judge(e, a, http.StatusNotFound)
	return nil
}

// attribute checks a user's attribute, when Config names one.
func (p *prober) attribute(ctx context.Context) error {
	c := p.add(&Check{Name: "attribute check", Operation: "check-attribute"})
	if p.cfg.UserEmail == "" || p.cfg.Attribute == "" {
		c.Status, c.Note = Skipped, "no user e-mail and attribute given"
		return nil
	}
	body := map[string]any{"email": p.cfg.UserEmail, "namespace": p.cfg.Namespace,
		"filter_value": map[string]any{"attribute": p.cfg.Attribute, "value": []string{}}}
	a, err := p.call(ctx, http.MethodPost, "/users/v1/check-attribute", nil, body)
	if err != nil {
		return err
	}
	p.judge(c, a, http.StatusCreated)
	return nil
}

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

// dataPages reads pages of rows until endOfList, at most dataPages.
func (p *prober) dataPages(ctx context.Context, name, path string) error {
	c := p.add(&Check{Name: name + ": pages"})
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

// externalIDs reads the external ids of the object Config names.
func (p *prober) externalIDs(ctx context.Context) error {
	c := p.add(&Check{Name: "external ids of an object", Operation: "get_external_id"})
	if p.cfg.ObjectID == "" {
		c.Status, c.Note = Skipped, "no object given"
		return nil
	}
	a, err := p.call(ctx, http.MethodGet, "/app/v1/object/"+url.PathEscape(p.cfg.ObjectID)+"/external_id", nil, nil)
	if err != nil {
		return err
	}
	if !p.judge(c, a, http.StatusOK) {
		return nil
	}
	var ids struct {
		ExternalIDs []struct {
			FieldName string `json:"field_name"`
		} `json:"external_ids"`
	}
	if json.Unmarshal(a.body, &ids) == nil {
		want := p.words().ReferralField()
		for _, f := range ids.ExternalIDs {
			if strings.HasSuffix(f.FieldName, ".referral_id") && f.FieldName != want {
				p.wordCheck("words: referral field", a.op, "/external_ids/[]/field_name", want, f.FieldName)
			}
		}
	}
	return nil
}

// bulkStatus reads the status of an execution of the integration Config
// names, or the answer to one that does not exist.
func (p *prober) bulkStatus(ctx context.Context) error {
	c := p.add(&Check{Name: "bulk status", Operation: "status"})
	if p.cfg.IntegrationID == "" {
		c.Status, c.Note = Skipped, "no integration given"
		return nil
	}
	exec, want := p.cfg.ExecutionID, http.StatusOK
	if exec == "" {
		exec, want = "doctor-no-such-execution-"+rand.Text(), http.StatusNotFound
		c.Name = "bulk status: an execution that does not exist"
	}
	a, err := p.call(ctx, http.MethodGet, "/bulk/v1/status/"+url.PathEscape(p.cfg.IntegrationID), url.Values{"execution_id": {exec}}, nil)
	if err != nil {
		return err
	}
	p.judge(c, a, want)
	return nil
}

// subscribers lists the subscribers and reads the first.
func (p *prober) subscribers(ctx context.Context) error {
	c := p.add(&Check{Name: "subscribers", Operation: "ListSubscribers"})
	a, err := p.call(ctx, http.MethodGet, "/event/v1/subscriber", nil, nil)
	if err != nil {
		return err
	}
	if !p.judge(c, a, http.StatusOK) {
		return nil
	}
	var l struct {
		Items []struct {
			ID string `json:"subscriber_id"`
		} `json:"items"`
	}
	r := p.add(&Check{Name: "subscriber", Operation: "ReadSubscriber"})
	if json.Unmarshal(a.body, &l) != nil || len(l.Items) == 0 || l.Items[0].ID == "" {
		r.Status, r.Note = Skipped, "no subscriber listed"
		return nil
	}
	a, err = p.call(ctx, http.MethodGet, "/event/v1/subscriber/"+url.PathEscape(l.Items[0].ID), nil, nil)
	if err != nil {
		return err
	}
	p.judge(r, a, http.StatusOK)
	return nil
}

// integrations lists the integrations, reads the first one's schema and
// holds the audit field it lists to the words.
func (p *prober) integrations(ctx context.Context) error {
	c := p.add(&Check{Name: "integrations", Operation: "GetIntegrationList"})
	a, err := p.call(ctx, http.MethodGet, "/event/v1/metadata/integration", nil, nil)
	if err != nil {
		return err
	}
	if !p.judge(c, a, http.StatusOK) {
		return nil
	}
	var l struct {
		Integrations []struct {
			ID string `json:"integration_id"`
		} `json:"integrations"`
	}
	s := p.add(&Check{Name: "integration schema", Operation: "GetObjectEventSchema"})
	if json.Unmarshal(a.body, &l) != nil || len(l.Integrations) == 0 || l.Integrations[0].ID == "" {
		s.Status, s.Note = Skipped, "no integration listed"
		return nil
	}
	a, err = p.call(ctx, http.MethodGet, "/event/v1/metadata/integration/"+url.PathEscape(l.Integrations[0].ID), nil, nil)
	if err != nil {
		return err
	}
	if !p.judge(s, a, http.StatusOK) {
		return nil
	}
	var sch struct {
		Schema struct {
			Properties map[string]any `json:"properties"`
		} `json:"schema"`
	}
	want := p.words().AuditField()
	var audit []string
	if json.Unmarshal(a.body, &sch) == nil {
		for _, k := range slices.Sorted(maps.Keys(sch.Schema.Properties)) {
			if strings.HasSuffix(k, ".integration_status") {
				audit = append(audit, k)
			}
		}
	}
	switch {
	case len(audit) == 0:
		p.add(&Check{Name: "words: audit field", Operation: a.op, Status: Skipped, Note: "the integration's schema lists no audit field (<portal>.integration_status)"})
	case slices.Contains(audit, want):
		p.add(&Check{Name: "words: audit field", Operation: a.op, Note: want + " is listed"})
	default:
		p.wordCheck("words: audit field", a.op, "/schema/properties", want, strings.Join(audit, ", "))
	}
	return nil
}

// eventKinds lists the event kinds, reads the first one's schema and
// holds the referral kind to the words.
func (p *prober) eventKinds(ctx context.Context) error {
	c := p.add(&Check{Name: "event kinds", Operation: "GetEventList"})
	a, err := p.call(ctx, http.MethodGet, "/event/v1/metadata/event", nil, nil)
	if err != nil {
		return err
	}
	if !p.judge(c, a, http.StatusOK) {
		return nil
	}
	var l struct {
		Events []struct {
			Name string `json:"name"`
		} `json:"events"`
	}
	_ = json.Unmarshal(a.body, &l)
	var names, referral []string
	for _, e := range l.Events {
		names = append(names, e.Name)
		if strings.HasSuffix(e.Name, "_referral_submit") {
			referral = append(referral, e.Name)
		}
	}
	want := p.words().ReferralEvent()
	switch {
	case slices.Contains(names, want):
		p.add(&Check{Name: "words: referral event kind", Operation: a.op, Note: want + " is listed"})
	case len(referral) == 0:
		p.wordCheck("words: referral event kind", a.op, "/events/[]/name", want, "no referral kind")
	default:
		p.wordCheck("words: referral event kind", a.op, "/events/[]/name", want, strings.Join(referral, ", "))
	}
	s := p.add(&Check{Name: "event schema", Operation: "GetEventSchema"})
	if len(names) == 0 || names[0] == "" {
		s.Status, s.Note = Skipped, "no event kind listed"
		return nil
	}
	a, err = p.call(ctx, http.MethodGet, "/event/v1/metadata/event/"+url.PathEscape(names[0]), nil, nil)
	if err != nil {
		return err
	}
	p.judge(s, a, http.StatusOK)
	return nil
}

// wordCheck records a word the deployment lists otherwise than the
// client's words say.
func (p *prober) wordCheck(name, op, member, want, got string) {
	c := p.add(&Check{Name: name, Operation: op})
	c.diverge(Divergence{Operation: op, Member: member, Fake: want + " (the words given: " + p.wordsSource() + ")", Deployment: got})
}

// standInPortal is the interface's stand-in portal word, the fake's
// unless it is given another.
const standInPortal = "partner_portal"

// words are the client's words, the portal word the stand-in when none
// was given.
func (p *prober) words() deployment.Words {
	w := p.cfg.Connection.Words
	if w.PortalWord == "" {
		w.PortalWord = standInPortal
	}
	return w
}

// wordsSource says where the portal word came from.
func (p *prober) wordsSource() string {
	if p.cfg.Connection.Words.PortalWord == "" {
		return "none, so the interface's stand-in " + standInPortal
	}
	return "portal word " + p.cfg.Connection.Words.PortalWord
}
