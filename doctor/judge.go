package doctor

import (
	_ "embed"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/partnerapi/partner-go/internal/contract"
)

// object is an object of an answer and the listed members it holds
// (contract.Exchange.Objects).
type object = contract.Object

// profileJSON is what the fake answers with its demo data, by operation:
// for each kind of object (a JSON pointer, array items as "[]"), the
// members it holds in every one, with their JSON types. TestProfile
// writes it from a run against the fake and fails while it is stale.
//
//go:embed profile.json
var profileJSON []byte

// profile is profileJSON read: operation, then object path, then member
// name to type.
type profile map[string]map[string]map[string]string

func loadProfile() (profile, error) {
	var p profile
	err := json.Unmarshal(profileJSON, &p)
	return p, err
}

// judge holds an answer to what the fake answers: the status want, then
// the contract's declared answer (contract.Exchange.Findings) and the
// members the fake always sends (profile.json). It reports whether the
// answer came with status want, so that its body can be read. A 401 or
// 403 is a refusal of the credentials, which ends the run.
func (p *prober) judge(c *Check, a *answer, want int) bool {
	if a.status != want {
		if a.status == http.StatusUnauthorized || a.status == http.StatusForbidden {
			p.refuse(c, a, a.op+" was refused")
			return false
		}
		c.diverge(Divergence{Operation: a.op, Member: "status", Fake: strconv.Itoa(want), Deployment: p.statusText(a)})
		return false
	}
	if a.x.FakeShape(a.status) {
		if _, ok := a.json().(map[string]any); !ok {
			c.diverge(Divergence{Operation: a.op, Member: "body", Fake: "a JSON object", Deployment: "a body that is not one"})
		}
		c.note("the service publishes no shape of this answer (the fake's is its own): status and JSON checked")
		return true
	}
	for _, f := range a.x.Findings(a.status, a.header, a.body) {
		c.diverge(Divergence{Operation: a.op, Member: collapse(f.At), Fake: f.Want, Deployment: p.redact(f.Got)})
	}
	objs := a.x.Objects(a.status, a.body)
	if p.cfg.record != nil {
		p.cfg.record(a.op, objs)
	}
	p.presence(c, a.op, objs)
	return true
}

// presence: each object holds the members the fake sends in every object
// of its kind.
func (p *prober) presence(c *Check, op string, objs []object) {
	kinds := p.profile[op]
	for _, o := range objs {
		want := kinds[o.Path]
		for _, name := range slices.Sorted(maps.Keys(want)) {
			if _, ok := o.Members[name]; !ok {
				c.diverge(Divergence{Operation: op, Member: strings.TrimSuffix(o.Path, "/") + "/" + escapeToken(name),
					Fake: "a member of type " + want[name] + " (in every answer)", Deployment: "none"})
			}
		}
	}
}

// statusText is an answer's status and what its body says.
func (p *prober) statusText(a *answer) string {
	s := strconv.Itoa(a.status)
	if m := p.message(a); m != "" {
		s += " " + strconv.Quote(m)
	}
	return s
}

// collapse writes a JSON pointer's array indices as "[]", so that a
// divergence of every item of a list is named once.
func collapse(at string) string {
	if !strings.HasPrefix(at, "/") || at == "/" {
		return at
	}
	tokens := strings.Split(at[1:], "/")
	for i, t := range tokens {
		if t != "" && strings.Trim(t, "0123456789") == "" {
			tokens[i] = "[]"
		}
	}
	return "/" + strings.Join(tokens, "/")
}

// escapeToken escapes a JSON pointer's token (RFC 6901).
func escapeToken(t string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(t)
}
