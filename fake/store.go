package fake

import (
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/fakeserver/eventfilter"
)

// Object is a record of the partner platform: an opportunity, an
// account, ... Fields nest; a dotted name such as
// "sales_details.crm_opportunity_id" addresses a nested member.
type Object struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type"`
	// Fields holds the object's data as JSON values (string, float64,
	// bool, nil, []any, map[string]any).
	Fields map[string]any `json:"fields,omitempty"`
	// IntegrationID is the integration that loaded the object, if any.
	IntegrationID string    `json:"integration_id,omitempty"`
	Created       time.Time `json:"-"`
	Modified      time.Time `json:"-"`
}

// Field returns the value at a dotted field name.
func (o Object) Field(name string) (any, bool) { return eventfilter.Lookup(o.Fields, name) }

// Change kinds of objectChange.
const (
	changeCreate = "create"
	changeUpdate = "update"
	changeDelete = "delete"
)

// objectChange tells the observers of the object store what happened.
type objectChange struct {
	Kind   string // changeCreate, changeUpdate, changeDelete
	Object Object // the object after the change (before it, for a delete)
	// Before holds the fields before an update (nil for a create).
	Before map[string]any
	// Changed lists the dotted names of the fields whose value changed.
	Changed []string
	At      time.Time
}

type objectStore struct {
	mu        sync.RWMutex
	objects   map[string]*Object
	observers []func(objectChange)
}

func (s *objectStore) init() { s.objects = map[string]*Object{} }

// onObjectChange registers fn to be called, in order and outside any lock,
// after each change of an object.
func (f *Fake) onObjectChange(fn func(objectChange)) {
	f.objects.mu.Lock()
	defer f.objects.mu.Unlock()
	f.objects.observers = append(f.objects.observers, fn)
}

func (f *Fake) notify(c objectChange) {
	f.objects.mu.RLock()
	obs := slices.Clone(f.objects.observers)
	f.objects.mu.RUnlock()
	for _, fn := range obs {
		fn(c)
	}
}

// AddObject stores o (an id is generated when o.ID is empty) and returns
// its id. An object with the same id is replaced.
func (f *Fake) AddObject(o Object) string {
	now := f.clock.Now()
	o = o.clone()
	if o.ID == "" {
		o.ID = newID("obj_", 8)
	}
	if o.Fields == nil {
		o.Fields = map[string]any{}
	}
	o.Created, o.Modified = now, now
	f.objects.mu.Lock()
	f.objects.objects[o.ID] = &o
	f.objects.mu.Unlock()
	f.notify(objectChange{Kind: changeCreate, Object: o.clone(), Changed: flatKeys(o.Fields), At: now})
	return o.ID
}

// Object returns a copy of the object with id.
func (f *Fake) Object(id string) (Object, bool) {
	f.objects.mu.RLock()
	defer f.objects.mu.RUnlock()
	o, ok := f.objects.objects[id]
	if !ok {
		return Object{}, false
	}
	return o.clone(), true
}

// Objects returns copies of the objects of a type ("" for every type),
// ordered by id.
func (f *Fake) Objects(typ string) []Object {
	f.objects.mu.RLock()
	defer f.objects.mu.RUnlock()
	var out []Object
	for _, o := range f.objects.objects {
		if typ == "" || o.Type == typ {
			out = append(out, o.clone())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// UpdateObject sets fields, given by dotted name, on the object with id and
// reports whether it exists. Observers hear of the change only when a
// value actually changed.
func (f *Fake) UpdateObject(id string, fields map[string]any) bool {
	_, ok := f.updateObject(id, func(o *Object) {
		for k, v := range fields {
			setPath(o.Fields, k, v)
		}
	})
	return ok
}

// updateObject applies edit to the stored object and notifies observers
// of what changed. It returns the object after the edit.
func (f *Fake) updateObject(id string, edit func(o *Object)) (Object, bool) {
	now := f.clock.Now()
	f.objects.mu.Lock()
	o, ok := f.objects.objects[id]
	if !ok {
		f.objects.mu.Unlock()
		return Object{}, false
	}
	before := deepCopy(o.Fields).(map[string]any)
	edit(o)
	changed := diffKeys(before, o.Fields)
	if len(changed) > 0 {
		o.Modified = now
	}
	after := o.clone()
	f.objects.mu.Unlock()
	if len(changed) > 0 {
		f.notify(objectChange{Kind: changeUpdate, Object: after.clone(), Before: before, Changed: changed, At: now})
	}
	return after, true
}

// DeleteObject removes the object with id and reports whether it existed.
func (f *Fake) DeleteObject(id string) bool {
	f.objects.mu.Lock()
	o, ok := f.objects.objects[id]
	delete(f.objects.objects, id)
	f.objects.mu.Unlock()
	if ok {
		f.notify(objectChange{Kind: changeDelete, Object: o.clone(), At: f.clock.Now()})
	}
	return ok
}

func (o Object) clone() Object {
	c := o
	if o.Fields != nil {
		c.Fields = deepCopy(o.Fields).(map[string]any)
	}
	return c
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, x := range t {
			s[i] = deepCopy(x)
		}
		return s
	default:
		return v
	}
}

// setPath writes a dotted name into nested maps, creating the maps on the
// way; a nil value deletes the member.
func setPath(m map[string]any, name string, v any) {
	head, rest, found := strings.Cut(name, ".")
	if !found {
		if v == nil {
			delete(m, name)
		} else {
			m[name] = v
		}
		return
	}
	sub, ok := m[head].(map[string]any)
	if !ok {
		sub = map[string]any{}
		m[head] = sub
	}
	setPath(sub, rest, v)
}

// flatten returns the leaves of nested maps by dotted name.
func flatten(m map[string]any) map[string]any {
	out := map[string]any{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			out[prefix+k] = v
		}
	}
	walk("", m)
	return out
}

func flatKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(flatten(m)))
}

func diffKeys(before, after map[string]any) []string {
	a, b := flatten(before), flatten(after)
	var out []string
	for k, v := range b {
		if old, ok := a[k]; !ok || !reflect.DeepEqual(old, v) {
			out = append(out, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Integration is a configured integration of a partner system (a CRM
// sync): bulk loads and event subscriptions name it. The service's listing
// (GET /event/v1/metadata/integration) shows ID, Type, Name and
// Description; ObjectType and KeyField are the integration's
// configuration, which the admin API lists (GET /_fake/integrations).
type Integration struct {
	ID          string `json:"id,omitempty"`
	Type        string `json:"type,omitempty"` // integration_type, e.g. "CRM"
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// ObjectType is the type of the objects its bulk loads write.
	ObjectType string `json:"object_type,omitempty"`
	// KeyField is the dotted field name bulk rows are matched on: a row
	// updates the stored object whose field has the row's value, or
	// creates one.
	KeyField string `json:"key_field,omitempty"`
}

type integrationStore struct {
	mu   sync.RWMutex
	byID map[string]Integration
}

func (s *integrationStore) init() { s.byID = map[string]Integration{} }

// AddIntegration stores in (an id is generated when in.ID is empty) and
// returns its id.
func (f *Fake) AddIntegration(in Integration) string {
	if in.ID == "" {
		in.ID = newID("int_", 6)
	}
	f.integ.mu.Lock()
	defer f.integ.mu.Unlock()
	f.integ.byID[in.ID] = in
	return in.ID
}

// Integration returns the integration with id.
func (f *Fake) Integration(id string) (Integration, bool) {
	f.integ.mu.RLock()
	defer f.integ.mu.RUnlock()
	in, ok := f.integ.byID[id]
	return in, ok
}

// Integrations returns every integration, ordered by id.
func (f *Fake) Integrations() []Integration {
	f.integ.mu.RLock()
	defer f.integ.mu.RUnlock()
	out := slices.Collect(maps.Values(f.integ.byID))
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (f *Fake) seedCoreDemo() {
	f.AddIntegration(Integration{
		ID: demo.OpportunityIntegration, Type: "CRM", Name: "Demo CRM opportunities",
		Description: "Opportunities synced from the demo CRM", ObjectType: "opportunity", KeyField: "sales_details.crm_opportunity_id",
	})
	f.AddIntegration(Integration{
		ID: demo.AccountIntegration, Type: "CRM", Name: "Demo CRM accounts",
		Description: "Accounts synced from the demo CRM", ObjectType: "account", KeyField: "account_info.external_account_id",
	})
	for i, o := range []struct{ id, name, stage string }{
		{demo.Opportunity1, "Acme renewal", "prospecting"},
		{demo.Opportunity2, "Globex expansion", "negotiation"},
		{demo.Opportunity3, "Initech pilot", "closed"},
	} {
		f.AddObject(Object{ID: o.id, Type: "opportunity", IntegrationID: demo.OpportunityIntegration, Fields: map[string]any{
			"name": o.name, "stage": o.stage, "amount": float64(10000 * (i + 1)),
			"sales_details": map[string]any{"partner": "P1"},
		}})
	}
	for _, a := range []struct{ id, name string }{{demo.Account1, "Acme Corp"}, {demo.Account2, "Globex Inc"}} {
		f.AddObject(Object{ID: a.id, Type: "account", IntegrationID: demo.AccountIntegration, Fields: map[string]any{
			"name": a.name, "account_info": map[string]any{"industry": "manufacturing"},
		}})
	}
}
