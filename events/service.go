// Package events is the /event/v1 area of the Partner Integration Service:
// webhook subscribers, the integrations and event kinds they can name, a
// builder for subscription filter expressions, and an http.Handler that
// receives deliveries.
//
// Subscribe a callback URL to the kinds of event you want, optionally
// restricted to an integration, to some objects, or by a Filter, with a
// subscriber secret that only the service will know:
//
//	secret := events.NewSecret()
//	id, err := c.Events.Subscribe(ctx, events.SubscribeParams{
//		Name:        "crm sync",
//		Events:      []events.Kind{events.KindObjectUpdate},
//		Filter:      events.In("stage", "closed", "won", "lost"),
//		CallbackURL: "https://hooks.example.com/partner", // registered as .../partner/<secret>
//		Secret:      secret,
//	})
//
// and serve the callback with a Handler that refuses, with 401, a request
// without the secret:
//
//	http.Handle("/partner/", &events.Handler{Secrets: events.NewSecretSet(secret), Deliver: func(ctx context.Context, d *events.Delivery) error {
//		...
//	}})
//
// # Serving deliveries
//
// A Handler answers 401 before it reads the body of a request without the
// secret, but how long a client may take to send a request, and how many
// connections it may hold, is the http.Server's business: a server with
// no timeouts lets a client that does not know the secret hold a
// connection forever by trickling a body, or by leaving a connection idle
// after its 401, and a cap on connections that refuses or delays
// newcomers lets it lock deliveries out by holding every connection.
// Serve a Handler with NewServer and LimitConns, as the Handler_server
// example does:
//
//	srv := events.NewServer(mux)
//	err := srv.Serve(events.LimitConns(srv, ln, 0))
//
// NewServer sets the timeouts: ReadHeaderTimeout 10 s (the request line
// and headers: a connection that sends nothing is closed after it),
// ReadTimeout 30 s (the whole request, body included: a delivery is at
// most Handler.MaxBodyBytes, 1 MiB by default), WriteTimeout 60 s (from
// the end of the headers to the end of the answer: make it ReadTimeout
// plus the longest Deliver takes), IdleTimeout 60 s (a keep-alive
// connection between requests) and MaxHeaderBytes 16 KiB, and serves
// HTTP/1.1 alone, with ServeTLS too (a delivery is one request). LimitConns
// serves at most DefaultMaxConns (256) connections at once and, when
// they are all open, closes one that waits for a request (idle, or
// silent since it was accepted) to take a newcomer, rather than refuse
// it or delay it: with every connection held idle, a delivery is still
// answered at once. `partnerctl events listen` and the webhook-receiver
// example serve with these values.
package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/internal/check"
	"github.com/partnerapi/partner-go/internal/paging"
	"github.com/partnerapi/partner-go/internal/plumbing"
)

// Service calls the /event/v1 operations. It is safe for concurrent use.
// A partner.Client has one as its Events field; New builds one over any
// core.Client.
type Service struct {
	t *core.Client
}

// New returns a Service that sends its requests through p, which
// authorizes them (core.Config.Tokens).
func New(p *core.Client) *Service { return &Service{t: p} }

// Subscribers iterates over the registered subscribers
// (GET /event/v1/subscriber). The service answers in one page, so the
// iteration makes one request.
func (s *Service) Subscribers(ctx context.Context) iter.Seq2[Subscriber, error] {
	return onePage(ctx, func(ctx context.Context) ([]Subscriber, error) {
		var out struct {
			Items []Subscriber `json:"items"`
		}
		err := s.t.Do(ctx, &core.Request{Op: "events.Subscribers", Method: http.MethodGet, Path: "/event/v1/subscriber"}, &out)
		return out.Items, err
	})
}

// Subscriber reads one subscriber, with the event kinds it subscribes to
// (GET /event/v1/subscriber/{id}, an operation the interface does not
// show but the service offers). An unknown id gives a 404 error.
func (s *Service) Subscriber(ctx context.Context, id string) (*Subscriber, error) {
	if id == "" {
		return nil, errors.New("partner: events: subscriber id is required")
	}
	return core.DoNew[Subscriber](ctx, s.t, &core.Request{Op: "events.Subscriber", Method: http.MethodGet, Route: core.PathOf("/event/v1/subscriber/{subscriber_id}", id)})
}

// SubscribeParams registers a webhook subscriber.
type SubscribeParams struct {
	// Name names the subscriber (required).
	Name string
	// Events are the kinds to subscribe to (at least one). Kinds this
	// package has no constant for are sent as they are: the service's set
	// is read at run time with Kinds.
	Events []Kind
	// CallbackURL is the absolute http or https URL deliveries are POSTed
	// to (required).
	CallbackURL string
	// Secret, when set, is added to CallbackURL as its last path segment
	// ("https://hooks.example.com/partner/SECRET"): give the same secret
	// to the receiving Handler's Secrets. Make it with NewSecret; errors
	// never show it.
	Secret Secret
	// Filter restricts the subscription to objects whose fields match it;
	// the zero Filter matches every object.
	Filter Filter
	// IntegrationID restricts the subscription to the objects of one
	// integration, when set.
	IntegrationID string
	// ObjectIDs restricts the subscription to these objects, when set.
	ObjectIDs []string
	// Type is the subscriber type; empty means SubscriberWebhook, the only
	// type the interface knows.
	Type SubscriberType
}

type subscribeBody struct {
	SubscriberType  SubscriberType  `json:"subscriber_type"`
	Event           []Kind          `json:"event"`
	Name            string          `json:"name"`
	Filters         string          `json:"filters,omitempty"`
	IntegrationID   string          `json:"integration_id,omitempty"`
	ObjectIDs       []string        `json:"object_ids,omitempty"`
	WebhookSettings WebhookSettings `json:"webhook_settings"`
}

// Subscribe registers a webhook subscriber (POST /event/v1/subscriber) and
// returns its id. The request is checked before it is sent; every problem
// found is reported in one error. A plain http callback URL to a host
// that is not a loopback address is refused unless the client allows
// insecure HTTP (partner.WithInsecureHTTP). With Secret set, the URL
// registered ends in the secret (see SubscribeParams.Secret), and an error
// answer that quotes that URL is returned with the secret as "***".
//
// Registration is not repeated after a failure that the service may have
// processed, so that no duplicate subscriber is created. Such an error
// says so: partner.IsOutcomeUnknown(err) is true. Then list the
// subscribers (Subscribers) and look for one with this name and callback
// before subscribing again.
func (s *Service) Subscribe(ctx context.Context, p SubscribeParams) (string, error) {
	body, err := p.body(s.t)
	if err != nil {
		return "", err
	}
	var out struct {
		SubscriberID string `json:"subscriber_id"`
	}
	if err := s.t.Do(ctx, &core.Request{Op: "events.Subscribe", Method: http.MethodPost, Path: "/event/v1/subscriber", JSON: body}, &out); err != nil {
		return "", hideSecret(err, p.Secret)
	}
	if out.SubscriberID == "" {
		return "", errors.New("partner: events: POST /event/v1/subscriber: the answer has no subscriber_id")
	}
	return out.SubscriberID, nil
}

func (r SubscribeParams) body(t *core.Client) (*subscribeBody, error) {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	typ := r.Type
	switch typ {
	case "":
		typ = SubscriberWebhook
	case SubscriberWebhook:
	default:
		bad("subscriber type %q is not supported (only %q)", typ, SubscriberWebhook)
	}
	if len(r.Events) == 0 {
		bad("at least one event kind is required")
	}
	for _, k := range r.Events {
		if k == "" || strings.ContainsAny(string(k), " \t\r\n") {
			bad("event kind %q is not a kind name", k)
		}
	}
	if strings.TrimSpace(r.Name) == "" {
		bad("name is required")
	}
	callback := r.CallbackURL
	if err := checkCallbackURL(t, r.CallbackURL); err != nil {
		bad("%v", err)
	} else if r.Secret != "" {
		if err := r.Secret.check(); err != nil {
			bad("%v", err)
		} else if callback, err = withSecret(r.CallbackURL, r.Secret); err != nil {
			bad("callback URL: %v", err)
		}
	}
	if err := r.Filter.Err(); err != nil {
		bad("%v", err)
	}
	if slices.Contains(r.ObjectIDs, "") {
		bad("object ids must not be empty")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("partner: events: %s", strings.Join(problems, "; "))
	}
	return &subscribeBody{
		SubscriberType:  typ,
		Event:           r.Events,
		Name:            r.Name,
		Filters:         r.Filter.String(),
		IntegrationID:   r.IntegrationID,
		ObjectIDs:       r.ObjectIDs,
		WebhookSettings: WebhookSettings{CallbackURL: callback},
	}, nil
}

func checkCallbackURL(t *core.Client, raw string) error {
	if raw == "" {
		return errors.New("callback URL is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("callback URL %q: %w", check.RedactedURL(raw), check.URLParseError(err))
	}
	if !check.IsHTTPURL(u) {
		return fmt.Errorf("callback URL %q is not an absolute http or https URL", check.RedactedURL(raw))
	}
	if check.PlainHTTPRefused(u, plumbing.Of(t).InsecureHTTPAllowed()) {
		return fmt.Errorf("callback URL %q is plain http to a host that is not a loopback address (allow it with partner.WithInsecureHTTP)", check.RedactedURL(raw))
	}
	return nil
}

// Unsubscribe removes a subscriber (DELETE /event/v1/subscriber/{id}, an
// operation the interface does not show but the service offers). The
// deployed service answers 200 with an empty body; 204 is accepted too. An
// unknown id gives a 404 error. It is done when the subscriber is gone:
// when an attempt may have removed it but its answer was lost (a dropped
// connection, a 5xx) and the retry finds no such subscriber, Unsubscribe
// returns nil.
func (s *Service) Unsubscribe(ctx context.Context, id string) error {
	if id == "" {
		return errors.New("partner: events: subscriber id is required")
	}
	return s.t.Do(ctx, &core.Request{
		Op:     "events.Unsubscribe",
		Method: http.MethodDelete, Route: core.PathOf("/event/v1/subscriber/{subscriber_id}", id), Idempotent: true,
	}, nil)
}

// Integrations iterates over the integrations a subscription can name
// (GET /event/v1/metadata/integration), in one request.
func (s *Service) Integrations(ctx context.Context) iter.Seq2[Integration, error] {
	return onePage(ctx, func(ctx context.Context) ([]Integration, error) {
		var out struct {
			Integrations []Integration `json:"integrations"`
		}
		err := s.t.Do(ctx, &core.Request{Op: "events.Integrations", Method: http.MethodGet, Path: "/event/v1/metadata/integration"}, &out)
		return out.Integrations, err
	})
}

// IntegrationSchema returns the JSON Schema of the object events of an
// integration (GET /event/v1/metadata/integration/{integration_id},
// operation GetObjectEventSchema of the deployed service): the fields the
// deliveries of object events carry for that integration's objects. As
// with Schema, the answer's "schema" member is returned when it has one
// (the deployed service's connector reads it there, and the fake sends
// it so), otherwise the answer untouched. An unknown integration gives a
// 404 error.
func (s *Service) IntegrationSchema(ctx context.Context, integrationID string) (*Schema, error) {
	if integrationID == "" {
		return nil, errors.New("partner: events: integration id is required")
	}
	return s.schema(ctx, "events.IntegrationSchema", "/event/v1/metadata/integration/{integration_id}", integrationID)
}

// Kinds iterates over the event kinds the service offers, with their
// descriptions (GET /event/v1/metadata/event), in one request.
func (s *Service) Kinds(ctx context.Context) iter.Seq2[KindInfo, error] {
	return onePage(ctx, func(ctx context.Context) ([]KindInfo, error) {
		var out struct {
			Events []KindInfo `json:"events"`
		}
		err := s.t.Do(ctx, &core.Request{Op: "events.Kinds", Method: http.MethodGet, Path: "/event/v1/metadata/event"}, &out)
		return out.Events, err
	})
}

// Schema returns the JSON Schema of the deliveries of an event kind
// (GET /event/v1/metadata/event/{event}, an operation the interface does
// not show but the service offers). The deployed service documents no
// shape for the answer: when it is an object with a "schema" member (as
// the fake sends it) that member is returned, otherwise the answer
// untouched. On the deployed service the schema depends on the kind and
// the integration; IntegrationSchema reads the schema of one
// integration's object events. An unknown kind gives a 404 error.
func (s *Service) Schema(ctx context.Context, kind Kind) (*Schema, error) {
	if kind == "" {
		return nil, errors.New("partner: events: event kind is required")
	}
	return s.schema(ctx, "events.Schema", "/event/v1/metadata/event/{event}", string(kind))
}

// Schema is a JSON Schema answer, whose shape the interface does not
// show: it is kept whole in Raw, as the reports package keeps its
// unpublished answers (reports.Metadata, reports.ChartMetadata).
type Schema struct {
	// Raw is the schema: the answer's "schema" member when it has one,
	// else the whole answer.
	Raw json.RawMessage
}

// schema reads a schema answer at path filled with id (operation op): its "schema" member when it has
// one, else the whole answer.
func (s *Service) schema(ctx context.Context, op, path, id string) (*Schema, error) {
	var raw json.RawMessage
	err := s.t.Do(ctx, &core.Request{Op: op, Method: http.MethodGet, Route: core.PathOf(path, id)}, &raw)
	if err != nil {
		return nil, err
	}
	var out struct {
		Schema json.RawMessage `json:"schema"`
	}
	if json.Unmarshal(raw, &out) == nil && len(out.Schema) > 0 {
		return &Schema{Raw: out.Schema}, nil
	}
	return &Schema{Raw: raw}, nil
}

// onePage turns a listing the service answers in one page into an
// iterator, through the SDK's one pager.
func onePage[T any](ctx context.Context, fetch func(context.Context) ([]T, error)) iter.Seq2[T, error] {
	return paging.Seq(ctx, struct{}{}, func(ctx context.Context, _ struct{}) (paging.Page[T, struct{}], error) {
		items, err := fetch(ctx)
		return paging.Page[T, struct{}]{Items: items, Last: true}, err
	})
}
