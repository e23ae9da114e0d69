package doctor

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/partnerapi/partner-go/deployment"
)

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
