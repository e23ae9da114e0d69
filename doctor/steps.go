package doctor

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// scimPage is the page size of the SCIM listing.
const scimPage = 100

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
	case len(list.Resources) == 0, len(list.Resources) < scimPage && (l.total < 0 || len(l.seen) >= l.total):
		// An empty page ends the list whatever totalResults says (the
		// next page would ask for the same startIndex again).
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
