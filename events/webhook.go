package events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/partnerapi/partner-go/internal/plumbing"
)

// Delivery is one event delivered to a webhook: a POST whose body is one
// JSON object. The deployed service sends a flat object whose members are
// the changed object's fields as strings; its schema is per event kind and
// integration (Service.Schema). No envelope member is documented, so
// every member goes to Fields, and the typed fields below are filled only
// when the body happens to carry the member named in their comment as a
// string (package fake adds them with fake.WithDeliveryEnvelope).
//
// Deliveries may come more than once. When a body carries a delivery id, a
// receiver that must not act twice can skip the ids it has seen;
// otherwise it must make its work idempotent: an upsert keyed by a field
// that identifies the object, such as its external id. A flat body carries
// the object's fields only, so the service's own object id is in it only
// when one of those fields holds it.
type Delivery struct {
	// Event is the kind of the event (member "event"), when present;
	// else, from a Handler with Routes, the kind its path names.
	Event Kind
	// SubscriberID is the subscriber the delivery is for
	// ("subscriber_id"), when present; else, from a Handler with Routes,
	// the subscriber its path names.
	SubscriberID string
	// DeliveryID identifies the delivery ("delivery_id"), when present;
	// retries of it keep it.
	DeliveryID string
	// ObjectID is the object the event is about ("object_id"), when
	// present.
	ObjectID string
	// OccurredAt is when the event happened ("occurred_at" in RFC 3339),
	// when present; the zero time otherwise.
	OccurredAt time.Time
	// IntegrationID is the object's integration ("integration_id"), when
	// present.
	IntegrationID string
	// Fields holds every member of the body by name, those above
	// included: for object events, the fields of the object by dotted
	// name ("sales_details.partner"). A member that is not a string is
	// kept as its JSON text (10000, true, [...]); null as "".
	Fields map[string]string
	// Raw is the body as it was received.
	Raw []byte
}

// Decode unmarshals the delivery's body into v, for a receiver that
// knows the schema of its event kind and integration.
func (d *Delivery) Decode(v any) error { return json.Unmarshal(d.Raw, v) }

// ParseDelivery decodes a delivery body, for receivers that do not use
// Handler. Any JSON object is a delivery: every member goes to Fields, and
// the typed fields are filled from the members that carry them when those
// are present and well-formed (strings; occurred_at in RFC 3339). Only a
// body that is not a JSON object is an error.
func ParseDelivery(body []byte) (*Delivery, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil || members == nil {
		if err == nil {
			err = errors.New("null")
		}
		return nil, fmt.Errorf("partner: events: delivery is not a JSON object: %w", err)
	}
	d := &Delivery{Fields: make(map[string]string, len(members)), Raw: body}
	for name, raw := range members {
		d.Fields[name] = memberText(raw)
		var dst *string
		switch name {
		case "event":
			dst = (*string)(&d.Event)
		case "subscriber_id":
			dst = &d.SubscriberID
		case "delivery_id":
			dst = &d.DeliveryID
		case "object_id":
			dst = &d.ObjectID
		case "integration_id":
			dst = &d.IntegrationID
		case "occurred_at":
			if s, ok := rawString(raw); ok {
				if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
					d.OccurredAt = t
				}
			}
		}
		if dst != nil {
			if s, ok := rawString(raw); ok {
				*dst = s
			}
		}
	}
	return d, nil
}

// memberText returns a member's string, or its JSON text when it is not a
// string ("" for null).
func memberText(raw json.RawMessage) string {
	if s, ok := rawString(raw); ok {
		return s
	}
	if t := bytes.TrimSpace(raw); !bytes.Equal(t, []byte("null")) {
		return string(t)
	}
	return ""
}

// DefaultMaxDeliveryBytes is the body size Handler accepts when
// MaxBodyBytes is zero.
const DefaultMaxDeliveryBytes = 1 << 20

// Handler is an http.Handler that receives webhook deliveries: mount it at
// the path of a subscriber's callback URL, or, with Secrets, at the
// subtree below it ("/partner/" for "https://hooks.example.com/partner").
//
// It first requires the last segment of the request's path to be one of
// Secrets (SecretSet.Allows: constant-time comparisons) and answers 401
// otherwise, before it looks at the method or reads the body. Subscribe
// puts the secret there (SubscribeParams.Secret). The secret shows in no
// answer, no log record and no span: the path is logged with its last
// segment, and any other holding 16 or more URL-safe characters in a row,
// as "***", and the span carries no path.
//
// It accepts POST requests whose body is a JSON object of at most
// MaxBodyBytes, decodes the delivery with ParseDelivery and calls Deliver
// with the request's context. It does nothing else per delivery: no
// request of its own, no state kept but Dedup's. The Content-Type is not checked: the
// deployed service does not document the one it sends, and a delivery
// refused for its header would be lost, since a 4xx is not retried. It
// answers
//
//   - 204 No Content when Deliver returns nil;
//   - 400 Bad Request when the body is not a JSON object, 401
//     Unauthorized without a secret of Secrets, 405 for a method other
//     than POST (with Allow: POST), 413 for a body over the limit: the
//     service has no reason to retry;
//   - 500 Internal Server Error when Deliver returns an error, so that the
//     service sends the delivery again later; or the Status of a
//     *StatusError in that error's chain, with its Retry-After.
//
// Error answers carry a short plain-text reason; the error Deliver
// returned is logged to Logger, never sent back. The interface shows no
// signing of deliveries: the secret in the path is what keeps others out
// (docs/reliability.md says what that protects against and what not).
//
// A Handler without Secrets refuses every request with 500 and logs why,
// unless Insecure is set: forgetting the secret is a receiver that does
// not work, not one that anybody can deliver to.
//
// With Dedup set, a delivery already handled inside Dedup's window is
// answered 204 without calling Deliver again (see Dedup).
//
// Handler bounds what it reads of one request, not how long a client may
// take to send it: the http.Server around it sets that (see the package
// documentation's "Serving deliveries").
type Handler struct {
	// Deliver handles one delivery. It may run concurrently for different
	// deliveries.
	Deliver func(ctx context.Context, d *Delivery) error
	// MaxBodyBytes caps the body (default DefaultMaxDeliveryBytes).
	MaxBodyBytes int64
	// Logger, when set, receives a record for each refused or failed
	// delivery (without its body).
	Logger *slog.Logger
	// Secrets are the subscriber secrets a delivery's path must end in.
	// An empty set refuses every delivery; nil refuses every request
	// with 500 unless Insecure is set.
	Secrets *SecretSet
	// Insecure, with no Secrets, accepts deliveries on any path: anyone
	// who can reach the receiver can deliver. It is for receivers that
	// only the service can reach (a private network, a test) and is
	// ignored when Secrets is set.
	Insecure bool
	// Dedup, when set, answers a delivery that was already handled
	// inside its window with 204, without calling Deliver (nil: every
	// delivery is passed on).
	Dedup *Dedup
	// TracerProvider receives the span of each delivery
	// ("partner.events.Handler", with the event kind: kind server, or
	// internal behind a handler that opened the request's server span,
	// such as otelhttp.NewHandler); nil means the global provider.
	// Service.NewHandler sets the client's.
	TracerProvider trace.TracerProvider
	// MeterProvider receives http.server.request.duration of the
	// deliveries whose server span the Handler opens (behind an
	// instrumented handler, that handler records it); nil means the
	// client's meter provider for a Handler from Service.NewHandler,
	// else the global provider.
	MeterProvider metric.MeterProvider
	// Routes, when set, name the kind and subscriber of a delivery by
	// the path it came to: Deliver finds them in Delivery.Event and
	// Delivery.SubscriberID where the body does not carry them.
	Routes *Routes

	meter metric.Meter // the client's, from Service.NewHandler
}

// NewHandler returns a Handler that calls deliver, whose spans go to the
// client's tracer provider (partner.WithTracerProvider), as the client's
// own do; the global provider when the client has none. Set its Secrets
// (or Insecure) before serving: without them it refuses every request.
func (s *Service) NewHandler(deliver func(ctx context.Context, d *Delivery) error) *Handler {
	p := plumbing.Of(s.t)
	return &Handler{Deliver: deliver, TracerProvider: p.TracerProvider(), meter: p.Meter()}
}

// ServeHTTP receives one delivery.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w, r, dt := h.traceDelivery(w, r)
	defer dt.end()
	if h.Secrets == nil && !h.Insecure {
		h.fail(r, w, http.StatusInternalServerError, "receiver not configured",
			errors.New("events: Handler has no Secrets: set Secrets, or Insecure to accept deliveries without a secret"))
		return
	}
	if h.Secrets != nil && !h.Secrets.Allows(r) {
		h.fail(r, w, http.StatusUnauthorized, "unauthorized", nil)
		return
	}
	dt.allowed = true
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.fail(r, w, http.StatusMethodNotAllowed, "deliveries are POSTed", nil)
		return
	}
	limit := h.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxDeliveryBytes
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			h.fail(r, w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a delivery is at most %d bytes", limit), nil)
			return
		}
		h.fail(r, w, http.StatusBadRequest, "reading the delivery failed", err)
		return
	}
	d, err := ParseDelivery(body)
	if err != nil {
		h.fail(r, w, http.StatusBadRequest, strings.TrimPrefix(err.Error(), "partner: events: "), nil)
		return
	}
	sub, route := h.Routes.subscriberPath(r.URL.Path, h.Secrets != nil)
	route.fill(d)
	dt.delivery(d)
	if h.Deliver == nil {
		h.fail(r, w, http.StatusInternalServerError, "delivery not handled", errors.New("events: Handler.Deliver is nil"))
		return
	}
	if h.Dedup != nil {
		h.serveOnce(w, r, sub, d)
		return
	}
	h.answer(w, r, h.Deliver(r.Context(), d))
}

// answer writes the answer to a delivery Deliver returned err for.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil {
		status := http.StatusInternalServerError
		var se *StatusError
		if errors.As(err, &se) && se.Status >= 400 && se.Status <= 599 {
			status = se.Status
			if se.RetryAfter != "" {
				w.Header().Set("Retry-After", se.RetryAfter)
			}
		}
		h.fail(r, w, status, "delivery not handled", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// StatusError is an error a Handler's Deliver returns to choose the
// answer: Status (a 4xx or 5xx; others give 500) and, when set, the
// Retry-After header. Whether the service sends the delivery again for a
// given status is not documented by the interface; a 5xx is the safe way
// to ask for it. A relay such as `partnerctl events listen --forward` passes
// on its target's answer this way.
type StatusError struct {
	Status     int    // the answer's status: 400-599
	RetryAfter string // the Retry-After header, in seconds or an HTTP date; "" for none
	Err        error  // why; logged to Handler.Logger, never sent
}

// Error returns Err's text, or "delivery answered STATUS" without one.
func (e *StatusError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("delivery answered %d", e.Status)
	}
	return e.Err.Error()
}

// Unwrap returns Err.
func (e *StatusError) Unwrap() error { return e.Err }

func (h *Handler) fail(r *http.Request, w http.ResponseWriter, status int, reason string, err error) {
	if h.Logger != nil {
		path := r.URL.Path
		if h.Secrets != nil {
			path = maskSecretPath(path)
		}
		attrs := []slog.Attr{slog.Int("status", status), slog.String("reason", reason), slog.String("path", path)}
		if err != nil {
			attrs = append(attrs, slog.String("error", err.Error()))
		}
		h.Logger.LogAttrs(r.Context(), slog.LevelWarn, "partner: events: delivery refused", attrs...)
	}
	http.Error(w, reason, status)
}

// rawString returns the string a JSON member holds. Strings without
// escapes, the usual case, are taken as they are; the decoder that split
// the object has already checked their syntax.
func rawString(raw json.RawMessage) (string, bool) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw[1 : n-1]), true
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err == nil
}
