package events

import "encoding/json"

// Kind names a kind of event, such as "object.update". The service lists
// the kinds it offers with Service.Kinds; kinds are open strings:
// names this package has no constant for are sent and kept as they are.
type Kind string

// Event kinds of the service.
const (
	// KindObjectAll matches every object event: a subscriber of it gets
	// object.create, object.update, object.delete and object.stage_change
	// deliveries, each under its own name.
	KindObjectAll         Kind = "object.all"
	KindObjectCreate      Kind = "object.create"
	KindObjectUpdate      Kind = "object.update"
	KindObjectDelete      Kind = "object.delete"
	KindObjectStageChange Kind = "object.stage_change"
	KindReportSubmit      Kind = "report.submit"
	// KindPartnerPortalReferralSubmit is sent when an opportunity is
	// submitted to the partner portal as a referral. "partner_portal" is
	// the interface's neutral stand-in: the deployed service spells the
	// kind with its own portal word, object.<portal>_referral_submit, so
	// against a deployment use Kind("object.<portal>_referral_submit").
	KindPartnerPortalReferralSubmit Kind = "object.partner_portal_referral_submit"
)

// SubscriberType is how a subscriber receives its events.
type SubscriberType string

// SubscriberWebhook is the only subscriber type of the interface: events
// are POSTed to a callback URL.
const SubscriberWebhook SubscriberType = "webhook"

// Subscriber is a registered event subscriber, as GET /event/v1/subscriber
// and GET /event/v1/subscriber/{id} return it.
type Subscriber struct {
	ID   string `json:"subscriber_id"`
	Name string `json:"name"`
	// ObjectIDs restricts the subscription to these objects, when set.
	ObjectIDs []string `json:"objectids"`
	// IntegrationID restricts the subscription to the objects of one
	// integration, when set.
	IntegrationID string `json:"integration_id"`
	// Filters is the subscription's filter expression (see Filter).
	Filters string         `json:"filters"`
	Type    SubscriberType `json:"subscriber_type"`
	// Events are the subscribed kinds (member "event"). The deployed
	// service returns them when it reads one subscriber
	// (GET /event/v1/subscriber/{id}); listings may leave them empty.
	Events []Kind `json:"event,omitempty"`
	// Webhook holds the callback URL when the service returns it; the
	// deployed service's read does not.
	Webhook *WebhookSettings `json:"webhook_settings,omitempty"`
}

// UnmarshalJSON decodes a subscriber. The interface spells the object ids
// "objectids" when it returns a subscriber and "object_ids" when it
// registers one; one published description of the deployed service
// spells the integration "integraion_id". Every spelling is accepted; when
// both spellings of a member are present the correct one wins.
func (s *Subscriber) UnmarshalJSON(b []byte) error {
	type plain Subscriber
	var v struct {
		plain
		ObjectIDs2     []string `json:"object_ids"`
		IntegrationID2 *string  `json:"integraion_id"`
		IntegrationID1 *string  `json:"integration_id"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Subscriber(v.plain)
	if s.ObjectIDs == nil {
		s.ObjectIDs = v.ObjectIDs2
	}
	// The outer integration_id shadows the embedded one.
	switch {
	case v.IntegrationID1 != nil:
		s.IntegrationID = *v.IntegrationID1
	case v.IntegrationID2 != nil:
		s.IntegrationID = *v.IntegrationID2
	}
	return nil
}

// WebhookSettings says where a webhook subscriber receives its events.
type WebhookSettings struct {
	// CallbackURL is the absolute http(s) URL deliveries are POSTed to.
	CallbackURL string `json:"callback_url"`
}

// Integration is a configured integration of a partner system, as
// GET /event/v1/metadata/integration lists it.
type Integration struct {
	ID          string `json:"integration_id"`
	Type        string `json:"integration_type"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// KindInfo describes an event kind, as GET /event/v1/metadata/event
// lists it.
type KindInfo struct {
	Name        Kind   `json:"name"`
	Description string `json:"description"`
}
