package fake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/partnerapi/partner-go/internal/fakeserver/eventfilter"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// This file is the events area of the fake: webhook subscribers, event
// kinds and their schemas, and the integrations listing. Deliveries are in
// events_delivery.go, the filter language in events_filter.go.

// Event kinds the fake knows. It sends the object.* kinds when objects
// change; it lists report.submit and accepts subscriptions to it, but
// never sends it. Beside these it knows the referral kind of its portal
// word (Connection().Words.ReferralEvent; eventPartnerPortalReferralSubmit by default).
const (
	eventObjectAll         = "object.all"
	eventObjectCreate      = "object.create"
	eventObjectUpdate      = "object.update"
	eventObjectDelete      = "object.delete"
	eventObjectStageChange = "object.stage_change"
	eventReportSubmit      = "report.submit"
	// eventPartnerPortalReferralSubmit is the referral kind with the
	// interface's word: an opportunity was submitted to the partner
	// portal as a referral. A deployment spells it with its own portal
	// word (see WithWords).
	eventPartnerPortalReferralSubmit = "object.partner_portal_referral_submit"
)

type evKind struct{ name, description string }

var eventKinds = []evKind{
	{eventObjectAll, "Every change of an object: created, updated, stage changed, deleted."},
	{eventObjectCreate, "An object was created."},
	{eventObjectUpdate, "Fields of an object changed, including its audit status and external IDs."},
	{eventObjectDelete, "An object was deleted."},
	{eventObjectStageChange, "The stage field of an object changed."},
	{eventReportSubmit, "A report was submitted."},
}

// eventKinds returns the kinds the fake offers: the fixed ones and the
// referral kind of its portal word.
func (f *Fake) eventKinds() []evKind {
	return append(slices.Clip(eventKinds), evKind{f.deploy.words.ReferralEvent(),
		"An opportunity was submitted to the partner portal as a referral: its " + f.deploy.words.ReferralField() + " field was set."})
}

// referralHint explains the refusal of a referral kind of another portal
// word: the fake, like a deployment, knows only its own.
func (f *Fake) referralHint(kind string) string {
	if !strings.HasPrefix(kind, "object.") || !strings.HasSuffix(kind, "_referral_submit") {
		return ""
	}
	return " (the fake's referral kind is " + f.deploy.words.ReferralEvent() + ", after its portal word; a test of another deployment sets the word with fake.WithWords)"
}

func (f *Fake) knownEventKind(name string) bool {
	return slices.ContainsFunc(f.eventKinds(), func(k evKind) bool { return k.name == name })
}

// EventSubscriber is a registered webhook subscriber, as tests inspect it.
type EventSubscriber struct {
	ID            string
	Name          string
	Events        []string
	Filters       string
	IntegrationID string
	ObjectIDs     []string
	CallbackURL   string
	Created       time.Time
}

// eventsStore holds the state of the events area.
type eventsStore struct {
	mu   sync.Mutex
	subs map[string]*evSubscriber
	seq  int // creation order of subscribers

	evDeliveryState
}

// evSubscriber is a stored subscriber and its delivery queue.
type evSubscriber struct {
	EventSubscriber
	seq    int
	filter *eventfilter.Filter // nil without filters
	logURL string              // CallbackURL as the delivery log shows it
	path   string              // CallbackURL's path, which a delivery fault's Path matches
	queue  []evJob
	active bool // a worker is delivering its queue
	gone   bool // unsubscribed: queued deliveries are dropped
}

// registerEvents registers the routes of the events area and starts
// listening to object changes.
func (f *Fake) registerEvents() {
	f.events.subs = map[string]*evSubscriber{}
	f.initDeliveries()
	f.onObjectChange(f.eventsObjectChanged)
	f.closers = append(f.closers, f.stopDeliveries)

	f.handle("GET /event/v1/subscriber", scopeEvents, f.listSubscribers)
	f.handle("POST /event/v1/subscriber", scopeEvents, f.createSubscriber)
	f.handle("GET /event/v1/subscriber/{subscriber_id}", scopeEvents, f.getSubscriber)
	f.handle("DELETE /event/v1/subscriber/{subscriber_id}", scopeEvents, f.deleteSubscriber)
	f.handle("GET /event/v1/metadata/integration", scopeEvents, f.listEventIntegrations)
	f.handle("GET /event/v1/metadata/integration/{integration_id}", scopeEvents, f.getIntegrationSchema)
	f.handle("GET /event/v1/metadata/event", scopeEvents, f.listEventKinds)
	f.handle("GET /event/v1/metadata/event/{event}", scopeEvents, f.getEventSchema)
}

// seedEventsDemo adds the events part of the demo data set. The demo
// integrations (demo.OpportunityIntegration, demo.AccountIntegration) come
// from the core data set; no subscriber is seeded, since its callback
// would point nowhere.
func (f *Fake) seedEventsDemo() {}

// Subscribers returns the registered subscribers, oldest first.
func (f *Fake) Subscribers() []EventSubscriber {
	f.events.mu.Lock()
	defer f.events.mu.Unlock()
	subs := f.sortedSubscribersLocked()
	out := make([]EventSubscriber, len(subs))
	for i, s := range subs {
		out[i] = s.EventSubscriber.clone()
	}
	return out
}

// sortedSubscribersLocked returns the stored subscribers, oldest first.
func (f *Fake) sortedSubscribersLocked() []*evSubscriber {
	subs := slices.Collect(maps.Values(f.events.subs))
	slices.SortFunc(subs, func(a, b *evSubscriber) int { return a.seq - b.seq })
	return subs
}

func (s EventSubscriber) clone() EventSubscriber {
	s.Events = slices.Clone(s.Events)
	s.ObjectIDs = slices.Clone(s.ObjectIDs)
	return s
}

// Wire types of the events area.
type (
	evWireSubscriber struct {
		SubscriberID   string   `json:"subscriber_id"`
		Name           string   `json:"name"`
		ObjectIDs      []string `json:"objectids"`
		IntegrationID  string   `json:"integration_id"`
		Filters        string   `json:"filters"`
		SubscriberType string   `json:"subscriber_type"`
	}
	// evWireSubscriberDetail is the answer of GET /event/v1/subscriber/{id},
	// an operation the deployed service offers beyond the interface text:
	// the listing's members and the subscribed kinds, no webhook_settings.
	// The integration goes in integration_id, or in integraion_id with
	// withMisspelledIntegrationID.
	evWireSubscriberDetail struct {
		SubscriberID   string   `json:"subscriber_id"`
		Name           string   `json:"name"`
		ObjectIDs      []string `json:"objectids"`
		IntegrationID  *string  `json:"integration_id,omitempty"`
		Integraion     *string  `json:"integraion_id,omitempty"` // sic: withMisspelledIntegrationID
		Filters        string   `json:"filters"`
		SubscriberType string   `json:"subscriber_type"`
		Event          []string `json:"event"`
	}
	evWebhookSettings struct {
		CallbackURL string `json:"callback_url"`
	}
	evSubscribeRequest struct {
		SubscriberType  *string            `json:"subscriber_type"`
		Event           evKinds            `json:"event"`
		Name            string             `json:"name"`
		Filters         string             `json:"filters"`
		IntegrationID   string             `json:"integration_id"`
		ObjectIDs       []string           `json:"object_ids"`
		WebhookSettings *evWebhookSettings `json:"webhook_settings"`
	}
	evWireIntegration struct {
		IntegrationID   string `json:"integration_id"`
		IntegrationType string `json:"integration_type"`
		Description     string `json:"description"`
		Name            string `json:"name"`
	}
	evWireKind struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
)

func (s *evSubscriber) wire() evWireSubscriber {
	ids := s.ObjectIDs
	if ids == nil {
		ids = []string{}
	}
	return evWireSubscriber{
		SubscriberID: s.ID, Name: s.Name, ObjectIDs: ids, IntegrationID: s.IntegrationID,
		Filters: s.Filters, SubscriberType: "webhook",
	}
}

func (f *Fake) listSubscribers(w http.ResponseWriter, r *http.Request) {
	subs := f.Subscribers()
	items := make([]evWireSubscriber, len(subs))
	for i, s := range subs {
		items[i] = (&evSubscriber{EventSubscriber: s}).wire()
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}

// createSubscriber registers a webhook subscriber. subscriber_type may be
// left out (it defaults to webhook); every other rule of the interface is
// checked, and all violations are reported in one 400 message. The 200
// answer's Location names the subscriber (DELETE it to unsubscribe).
func (f *Fake) createSubscriber(w http.ResponseWriter, r *http.Request) {
	var req evSubscribeRequest
	if !f.decodeWrite(w, r, &req) {
		return
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if req.SubscriberType != nil && *req.SubscriberType != "webhook" {
		bad("subscriber_type must be webhook, not %q", *req.SubscriberType)
	}
	if len(req.Event) == 0 {
		bad("event must name at least one event kind")
	}
	for _, e := range req.Event {
		if !f.knownEventKind(e) {
			bad("event kind %q is not defined%s", e, f.referralHint(e))
		}
	}
	if strings.TrimSpace(req.Name) == "" {
		bad("name is required")
	}
	switch {
	case req.WebhookSettings == nil || req.WebhookSettings.CallbackURL == "":
		bad("webhook_settings.callback_url is required")
	default:
		if err := f.evCheckCallbackURL(r.Context(), req.WebhookSettings.CallbackURL); err != nil {
			bad("webhook_settings.callback_url %v", err)
		}
	}
	var filter *eventfilter.Filter
	if strings.TrimSpace(req.Filters) != "" {
		var err error
		if filter, err = eventfilter.Parse(req.Filters); err != nil {
			bad("filters: %v", strings.TrimPrefix(err.Error(), "filter: "))
		}
	}
	if req.IntegrationID != "" {
		if _, ok := f.Integration(req.IntegrationID); !ok {
			bad("integration_id %q is not defined", req.IntegrationID)
		}
	}
	if slices.Contains(req.ObjectIDs, "") {
		bad("object_ids must not hold an empty id")
	}
	if len(problems) > 0 {
		writeError(w, http.StatusBadRequest, "invalid_request", "%s", strings.Join(problems, "; "))
		return
	}

	s := &evSubscriber{
		EventSubscriber: EventSubscriber{
			ID:            newID("sub_", 8),
			Name:          req.Name,
			Events:        slices.Compact(slices.Sorted(slices.Values(req.Event))),
			Filters:       req.Filters,
			IntegrationID: req.IntegrationID,
			ObjectIDs:     slices.Clone(req.ObjectIDs),
			CallbackURL:   req.WebhookSettings.CallbackURL,
			Created:       f.clock.Now(),
		},
		filter: filter,
		logURL: maskCallbackURL(req.WebhookSettings.CallbackURL),
	}
	if u, err := url.Parse(s.CallbackURL); err == nil { // checked above
		s.path = u.Path
	}
	f.events.mu.Lock()
	f.events.seq++
	s.seq = f.events.seq
	f.events.subs[s.ID] = s
	f.events.mu.Unlock()
	// The connector's webhook triggers delete their subscription through
	// the Location of this answer (conn def: Subscribe, its webhook trigger): the
	// subscriber's path, relative to the request's URL.
	w.Header().Set("Location", "/event/v1/subscriber/"+url.PathEscape(s.ID))
	writeJSON(w, http.StatusOK, map[string]string{"subscriber_id": s.ID})
}

func (f *Fake) evCheckCallbackURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without Go's "parse" and the URL again
		}
		return fmt.Errorf("is not a URL: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q must be an absolute http or https URL", raw)
	case u.Host == "":
		return fmt.Errorf("%q has no host", raw)
	}
	return f.checkSelfCallback(ctx, u)
}

func (f *Fake) getSubscriber(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("subscriber_id")
	f.events.mu.Lock()
	s, ok := f.events.subs[id]
	var d evWireSubscriberDetail
	if ok {
		l := s.wire()
		d = evWireSubscriberDetail{SubscriberID: l.SubscriberID, Name: l.Name, ObjectIDs: l.ObjectIDs,
			Filters: l.Filters, SubscriberType: l.SubscriberType, Event: slices.Clone(s.Events)}
		if f.deploy.misspellIntegration {
			d.Integraion = &l.IntegrationID
		} else {
			d.IntegrationID = &l.IntegrationID
		}
	}
	f.events.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "subscriber %q not found", id)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// withMisspelledIntegrationID makes the subscriber read
// (GET /event/v1/subscriber/{id}) spell its integration member
// integraion_id, as one of the deployed service's published descriptions
// does, instead of integration_id. The listing keeps integration_id.
func withMisspelledIntegrationID() Option {
	return func(f *Fake) { f.deploy.misspellIntegration = true }
}

// deleteSubscriber removes a subscriber; deliveries queued for it are
// dropped, and an attempt in flight finishes but is not retried. It
// answers 200 with an empty body, as the deployed service does.
func (f *Fake) deleteSubscriber(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("subscriber_id")
	if !f.removeSubscriber(id) {
		writeError(w, http.StatusNotFound, "not_found", "subscriber %q not found", id)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (f *Fake) listEventIntegrations(w http.ResponseWriter, r *http.Request) {
	ins := f.Integrations()
	out := make([]evWireIntegration, len(ins))
	for i, in := range ins {
		out[i] = evWireIntegration{IntegrationID: in.ID, IntegrationType: in.Type, Description: in.Description, Name: in.Name}
	}
	writeJSON(w, http.StatusOK, map[string]any{"integrations": out})
}

// getIntegrationSchema answers GET
// /event/v1/metadata/integration/{integration_id}, the schema of the
// integration's object events: {"schema": {...}} (integrationSchema);
// 404 for an unknown integration.
func (f *Fake) getIntegrationSchema(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("integration_id")
	in, ok := f.Integration(id)
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "integration %q is not defined", id)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"schema": f.integrationSchema(in)})
}

// integrationSchema is the JSON Schema of the object events of in: the
// object.all schema (eventSchema), titled after the integration, whose
// properties name the fields the fake knows for in's ObjectType (its key
// field, the fields SetBulkFieldKind declared and the audit field), each
// as text, as deliveries carry them.
func (f *Fake) integrationSchema(in Integration) map[string]any {
	sch := eventSchema(eventObjectAll, f.deploy.envelope)
	sch["title"] = in.ID
	sch["description"] = "Object events of integration " + in.ID + " (" + in.ObjectType + " objects)."
	props := sch["properties"].(map[string]any)
	field := func(name, desc string) {
		if _, ok := props[name]; !ok { // envelope members win, as in deliveries
			props[name] = map[string]any{"type": "string", "description": desc}
		}
	}
	for name, kind := range f.fieldKinds(in.ObjectType) {
		field(name, "A "+string(kind)+" field of the object, as text.")
	}
	if in.KeyField != "" {
		field(in.KeyField, "The key field bulk loads of the integration match objects on.")
	}
	field(f.deploy.words.AuditField(), "The integration status the audit operation writes.")
	return sch
}

func (f *Fake) listEventKinds(w http.ResponseWriter, r *http.Request) {
	kinds := f.eventKinds()
	out := make([]evWireKind, len(kinds))
	for i, k := range kinds {
		out[i] = evWireKind{Name: k.name, Description: k.description}
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": out})
}

// getEventSchema answers GET /event/v1/metadata/event/{event} with the
// JSON Schema of the deliveries of that kind: {"schema": {...}}.
func (f *Fake) getEventSchema(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("event")
	if !f.knownEventKind(name) {
		writeError(w, http.StatusNotFound, "not_found", "event %q is not defined%s", name, f.referralHint(name))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"schema": eventSchema(name, f.deploy.envelope)})
}

// eventSchema is the JSON Schema of the deliveries of kind name: a flat
// object of the object's fields as strings, with the fake's envelope
// members when envelope is set.
func eventSchema(name string, envelope bool) map[string]any {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	if !envelope {
		return map[string]any{
			"$schema":              "https://json-schema.org/draft/2020-12/schema",
			"title":                name,
			"type":                 "object",
			"properties":           map[string]any{},
			"additionalProperties": str("A field of the changed object by dotted name, as text."),
		}
	}
	props := map[string]any{
		"event":         str("The event kind."),
		"subscriber_id": str("The subscriber the delivery is for."),
		"delivery_id":   str("Identifies the delivery; a retried delivery keeps its id."),
		"occurred_at": map[string]any{
			"type": "string", "format": "date-time", "description": "When the event happened (RFC 3339).",
		},
	}
	required := []string{"event", "subscriber_id", "delivery_id", "occurred_at"}
	if strings.HasPrefix(name, "object.") {
		props["object_id"] = str("The object the event is about.")
		props["integration_id"] = str("The integration of the object, when it has one.")
		required = append(required, "object_id")
	}
	if name == eventObjectAll {
		props["event"].(map[string]any)["enum"] = []string{eventObjectCreate, eventObjectUpdate, eventObjectDelete, eventObjectStageChange}
	} else {
		props["event"].(map[string]any)["const"] = name
	}
	return map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"title":                name,
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": str("A field of the object by dotted name, as text."),
	}
}

// evKinds is the event member of a subscribe body: an array of kinds, as
// the interface has it, or one kind as a string, as the connector sends it
// (its Subscribe and referral subscribe bodies declare a string).
type evKinds []string

// UnmarshalJSON reads an array of strings or one string.
func (k *evKinds) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*k = evKinds{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return &memberError{`member "event" must be an event kind (a string) or an array of event kinds`}
	}
	*k = many
	return nil
}
