package fake

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/partnerapi/partner-go/internal/fakeserver/eventfilter"
	"github.com/partnerapi/partner-go/internal/fakeserver/fakehttp"
)

// DeliveryPolicy says how the fake sends webhook deliveries; zero fields
// take the defaults each field names.
//
// When an object changes, the fake works out which kinds of event the
// change is (object.create; object.update, which is also
// object.stage_change when the top-level "stage" field changed, and also
// the referral kind (Connection().Words.ReferralEvent) when an opportunity's referral
// field (Connection().Words.ReferralField) was set; object.delete) and queues one
// delivery for every subscriber that wants the change:
//
//   - its event kinds name one of the change's kinds, or object.all (which
//     stands for the four object.* kinds, not the referral kind);
//   - its integration_id, when set, is the object's integration;
//   - its object_ids, when set, hold the object's id;
//   - its filters, when set, match the object's fields (after the change;
//     before it, for a delete).
//
// A subscriber gets one delivery per change, however many of the change's
// kinds it names, as the deployed service's connector fires one trigger
// per change: a stage change reaches an object.all subscriber once. The
// delivery is of the most specific kind the subscriber wants: the
// referral kind, then object.stage_change, then object.update. The kind
// shows in the delivery log (DeliveryAttempt.Event) and, with
// WithDeliveryEnvelope, in the delivery's event member.
//
// Each subscriber has its own queue, worked by one goroutine while it is
// not empty, so its deliveries arrive in the order the changes happened
// and a failing callback holds back only its own subscriber. A delivery
// is a POST of one flat JSON object whose members are the fields of the
// object by dotted name, all as strings (numbers and booleans as text,
// lists as JSON), as the deployed service sends them. WithDeliveryEnvelope
// adds the fake's own envelope members. A 2xx answer delivers it. A
// network error, 408, 429 or 5xx is retried with exponential backoff (a
// Retry-After in seconds is honoured, up to MaxBackoff) until
// DeliveryPolicy.Attempts attempts were made; any other answer fails the
// delivery at once. Every retry sends the same body.
//
// Each subscriber's queue is bounded by MaxQueue deliveries waiting
// behind the one in flight. When it is full, a new delivery for that
// subscriber is dropped, not sent: it shows in the delivery log as one
// DeliveryAttempt with Attempt 0 and Dropped and Final set, and the
// deliveries already queued keep their order. A receiver that is down
// for long thus costs the fake bounded memory, and a test sees exactly
// which events it lost.
//
// Backoff waits use real time, not the fake's Clock; timestamps (the
// occurred_at member, DeliveryAttempt.Time) come from the Clock.
type DeliveryPolicy struct {
	// Attempts is the number of attempts per delivery, the first included
	// (default 5).
	Attempts int
	// Backoff is the wait after the first failed attempt; it doubles after
	// each further failure (default 1s).
	Backoff time.Duration
	// MaxBackoff caps the wait between attempts (default 30s).
	MaxBackoff time.Duration
	// Timeout bounds one attempt (default 10s).
	Timeout time.Duration
	// MaxQueue is the number of deliveries a subscriber may have waiting
	// behind the one in flight (default 1000); further ones are dropped.
	MaxQueue int
}

// defaultDeliveryPolicy is used for the zero fields of a DeliveryPolicy.
var defaultDeliveryPolicy = DeliveryPolicy{
	Attempts: 5, Backoff: time.Second, MaxBackoff: 30 * time.Second, Timeout: 10 * time.Second, MaxQueue: 1000,
}

// WithDeliveryEnvelope makes the fake add its own envelope members to
// each delivery, beside the object's fields: event, subscriber_id,
// delivery_id (kept by retries), object_id, occurred_at (RFC 3339) and
// integration_id when the object has one; they win over object fields of
// the same name. The deployed service documents no envelope: this is the
// fake's extension, for tests that want to tell deliveries apart. GET
// /event/v1/metadata/event/{event} then describes the envelope too.
func WithDeliveryEnvelope() Option { return func(f *Fake) { f.deploy.envelope = true } }

// WithDeliveryPolicy sets how webhook deliveries are sent and retried.
// Tests usually shorten the backoff:
//
//	fake.NewServer(fake.WithDeliveryPolicy(fake.DeliveryPolicy{Backoff: time.Millisecond}))
func WithDeliveryPolicy(p DeliveryPolicy) Option {
	return func(f *Fake) { f.events.policy = p }
}

// maxDeliveryLog caps the delivery log; the oldest attempts go first.
const maxDeliveryLog = 10000

// DeliveryAttempt is one attempt to deliver an event to a subscriber.
type DeliveryAttempt struct {
	DeliveryID   string
	SubscriberID string
	Event        string
	ObjectID     string
	// URL is the subscriber's callback URL with whatever may be secret
	// shown as "***": a password, every query value, and each path
	// segment of 16 or more letters, digits, '-' and '_' (where a
	// receiver puts a secret token). Err shows the URL the same way.
	URL string
	// Attempt counts the attempts of this delivery, from 1; it is 0 for
	// a delivery that was Dropped.
	Attempt int
	// Time is the fake's clock when the attempt was sent.
	Time time.Time
	// Status is the HTTP status of the answer; 0 when none came.
	Status int
	// Err says why no answer came (connection refused, timeout, ...).
	Err string
	// Delivered is true when the callback answered 2xx.
	Delivered bool
	// Final is true when no further attempt follows: delivered, failed
	// for good, or out of attempts. A failed attempt that is not retried
	// because its subscriber was removed or the fake closed is not Final.
	Final bool
	// Dropped is true when the delivery was never sent because its
	// subscriber's queue was full (see DeliveryPolicy.MaxQueue).
	Dropped bool
	// Payload is the body that was sent.
	Payload map[string]string
	// Redelivery is true when the attempt repeats a delivery its
	// receiver had answered 2xx, sent by a Fault.Redeliver.
	Redelivery bool
	// AnswerDropped is true when a Fault.DropAnswer dropped the
	// receiver's answer to the attempt: Status is then 0, and Err says
	// which status was dropped.
	AnswerDropped bool
}

// evDeliveryState is the delivery half of eventsStore, guarded by its mu.
type evDeliveryState struct {
	policy  DeliveryPolicy
	client  *http.Client
	ctx     context.Context // cancelled by Close
	cancel  context.CancelFunc
	wg      sync.WaitGroup // delivery workers
	log     []DeliveryAttempt
	pending int           // deliveries queued or in flight
	idle    chan struct{} // closed while pending == 0
	stopped bool
	// testHookBackoff, set by the package's tests before any delivery, is
	// called with each wait between attempts instead of waiting it.
	testHookBackoff func(time.Duration)
}

type evJob struct {
	id, event, objectID, url string
	logURL                   string // url as the delivery log shows it (maskCallbackURL)
	payload                  map[string]string
	body                     []byte
}

func (f *Fake) initDeliveries() {
	d := &f.events.evDeliveryState
	p := &d.policy
	if p.Attempts <= 0 {
		p.Attempts = defaultDeliveryPolicy.Attempts
	}
	if p.Backoff <= 0 {
		p.Backoff = defaultDeliveryPolicy.Backoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = max(defaultDeliveryPolicy.MaxBackoff, p.Backoff)
	}
	if p.Timeout <= 0 {
		p.Timeout = defaultDeliveryPolicy.Timeout
	}
	if p.MaxQueue <= 0 {
		p.MaxQueue = defaultDeliveryPolicy.MaxQueue
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // the address checked is the one connected to
	tr.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: f.dialControl}).DialContext
	d.client = &http.Client{
		Transport: tr,
		Timeout:   p.Timeout,
		// A redirect is an answer like any other non-2xx: not followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.idle = make(chan struct{})
	close(d.idle)
}

// stopDeliveries drops queued deliveries, abandons those in flight and
// waits for the workers to end. Close calls it.
func (f *Fake) stopDeliveries() {
	f.events.mu.Lock()
	f.events.stopped = true
	for _, s := range f.events.subs {
		f.dropDeliveriesLocked(s)
	}
	f.events.mu.Unlock()
	f.events.cancel()
	f.events.wg.Wait()
	f.events.client.CloseIdleConnections()
}

// removeSubscriber deletes a subscriber and drops its queued deliveries.
func (f *Fake) removeSubscriber(id string) bool {
	f.events.mu.Lock()
	defer f.events.mu.Unlock()
	s, ok := f.events.subs[id]
	if !ok {
		return false
	}
	delete(f.events.subs, id)
	s.gone = true
	f.dropDeliveriesLocked(s)
	return true
}

func (f *Fake) dropDeliveriesLocked(s *evSubscriber) {
	f.addPendingDeliveriesLocked(-len(s.queue))
	s.queue = nil
}

func (f *Fake) addPendingDeliveriesLocked(n int) {
	d := &f.events.evDeliveryState
	was := d.pending
	d.pending += n
	switch {
	case was == 0 && d.pending > 0:
		d.idle = make(chan struct{})
	case was > 0 && d.pending == 0:
		close(d.idle)
	}
}

// WaitDeliveries blocks until no webhook delivery is queued or in flight
// (retries included), or ctx is done. Call it after changing objects to
// let their deliveries settle; then Deliveries shows every attempt.
func (f *Fake) WaitDeliveries(ctx context.Context) error {
	for {
		f.events.mu.Lock()
		pending, idle := f.events.pending, f.events.idle
		f.events.mu.Unlock()
		if pending == 0 {
			return nil
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Deliveries returns the delivery log: every attempt to deliver a
// webhook, oldest first (at most the latest 10000).
func (f *Fake) Deliveries() []DeliveryAttempt {
	f.events.mu.Lock()
	defer f.events.mu.Unlock()
	out := slices.Clone(f.events.log)
	for i := range out {
		out[i].Payload = maps.Clone(out[i].Payload)
	}
	return out
}

// ResetDeliveries empties the delivery log.
func (f *Fake) ResetDeliveries() {
	f.events.mu.Lock()
	defer f.events.mu.Unlock()
	f.events.log = nil
}

// eventsObjectChanged is the object store observer that queues deliveries.
func (f *Fake) eventsObjectChanged(c objectChange) {
	kinds := f.changeKinds(c)
	if len(kinds) == 0 {
		return
	}
	var fields map[string]string // the object's fields as text, built once
	f.events.mu.Lock()
	defer f.events.mu.Unlock()
	if f.events.stopped || len(f.events.subs) == 0 {
		return
	}
	for _, s := range f.sortedSubscribersLocked() {
		kind, ok := s.kindOf(kinds)
		if !ok || !s.matches(c.Object) {
			continue
		}
		if fields == nil {
			fields = map[string]string{}
			for k, v := range flatten(c.Object.Fields) {
				fields[k], _ = eventfilter.Text(v)
			}
		}
		f.enqueueDeliveryLocked(s, f.newDelivery(s, kind, c, fields))
	}
}

// changeKinds returns the kinds of event the change c is, the most
// specific first: one delivery per subscriber carries the first of them
// it wants (kindOf).
func (f *Fake) changeKinds(c objectChange) []string {
	switch c.Kind {
	case changeCreate:
		return []string{eventObjectCreate}
	case changeUpdate:
		var kinds []string
		if rf := f.deploy.words.ReferralField(); c.Object.Type == "opportunity" && slices.Contains(c.Changed, rf) {
			if v, ok := c.Object.Field(rf); ok && v != nil && v != "" {
				kinds = append(kinds, f.deploy.words.ReferralEvent())
			}
		}
		if slices.Contains(c.Changed, "stage") {
			kinds = append(kinds, eventObjectStageChange)
		}
		return append(kinds, eventObjectUpdate)
	case changeDelete:
		return []string{eventObjectDelete}
	}
	return nil
}

// objectAllKinds are the kinds an object.all subscriber gets.
var objectAllKinds = []string{eventObjectCreate, eventObjectUpdate, eventObjectDelete, eventObjectStageChange}

// kindOf returns the first of kinds (a change's, most specific first)
// that s subscribes to, by name or through object.all.
func (s *evSubscriber) kindOf(kinds []string) (string, bool) {
	all := slices.Contains(s.Events, eventObjectAll)
	for _, k := range kinds {
		if slices.Contains(s.Events, k) || all && slices.Contains(objectAllKinds, k) {
			return k, true
		}
	}
	return "", false
}

// matches reports whether a change of o passes s's integration, object
// ids and filters.
func (s *evSubscriber) matches(o Object) bool {
	if s.IntegrationID != "" && s.IntegrationID != o.IntegrationID {
		return false
	}
	if len(s.ObjectIDs) > 0 && !slices.Contains(s.ObjectIDs, o.ID) {
		return false
	}
	return s.filter == nil || s.filter.Match(o.Fields)
}

func (f *Fake) newDelivery(s *evSubscriber, kind string, c objectChange, fields map[string]string) evJob {
	j := evJob{id: newID("dlv_", 8), event: kind, objectID: c.Object.ID, url: s.CallbackURL, logURL: s.logURL}
	j.payload = maps.Clone(fields)
	if !f.deploy.envelope {
		j.body, _ = json.Marshal(j.payload) // a map of strings always encodes
		return j
	}
	j.payload["event"] = kind
	j.payload["subscriber_id"] = s.ID
	j.payload["delivery_id"] = j.id
	j.payload["object_id"] = c.Object.ID
	j.payload["occurred_at"] = wireTime(c.At)
	if c.Object.IntegrationID != "" {
		j.payload["integration_id"] = c.Object.IntegrationID
	} else {
		delete(j.payload, "integration_id")
	}
	j.body, _ = json.Marshal(j.payload) // a map of strings always encodes
	return j
}

// enqueueDeliveryLocked queues j for s and starts s's worker if it is
// idle; a full queue drops j (see DeliveryPolicy.MaxQueue).
func (f *Fake) enqueueDeliveryLocked(s *evSubscriber, j evJob) {
	if len(s.queue) >= f.events.policy.MaxQueue {
		a := j.attempt(s, 0, f.clock.Now())
		a.Dropped, a.Final, a.Err = true, true, "subscriber queue full: delivery dropped"
		f.logDeliveryLocked(a)
		return
	}
	s.queue = append(s.queue, j)
	f.addPendingDeliveriesLocked(1)
	if !s.active {
		s.active = true
		f.events.wg.Add(1)
		go f.deliverQueue(s)
	}
}

// deliverQueue works s's queue until it is empty.
func (f *Fake) deliverQueue(s *evSubscriber) {
	defer f.events.wg.Done()
	for {
		f.events.mu.Lock()
		if len(s.queue) == 0 || s.gone || f.events.stopped {
			s.active = false
			f.events.mu.Unlock()
			return
		}
		j := s.queue[0]
		s.queue[0] = evJob{}
		s.queue = s.queue[1:]
		f.events.mu.Unlock()

		f.deliverAttempts(s, j)

		f.events.mu.Lock()
		f.addPendingDeliveriesLocked(-1)
		f.events.mu.Unlock()
	}
}

// deliverAttempts makes the attempts of one delivery.
func (f *Fake) deliverAttempts(s *evSubscriber, j evJob) {
	p := f.events.policy
	wait := p.Backoff
	redelivered, redelivery := false, false
	var acted []string // the faults that acted on this delivery
	for attempt := 1; ; attempt++ {
		a := j.attempt(s, attempt, f.clock.Now())
		a.Redelivery = redelivery
		status, retryAfter, err := f.postDelivery(j)
		a.Status = status
		if err != nil {
			a.Err = err.Error()
		}
		a.Delivered = status >= 200 && status < 300
		redelivery = false
		if status != 0 {
			ft := f.faults.takeDelivery(s.path, a.Delivered, redelivered, acted)
			if ft != nil {
				acted = append(acted, ft.ID)
			}
			switch {
			case ft == nil:
			case ft.DropAnswer:
				a.AnswerDropped, a.Status, a.Delivered, retryAfter = true, 0, false, 0
				a.Err = fmt.Sprintf("injected fault %s: the answer (%d) was dropped", ft.ID, status)
				status = 0
			default: // Redeliver
				redelivered, redelivery = true, true
			}
		}

		f.events.mu.Lock()
		abandoned := s.gone || f.events.ctx.Err() != nil
		redelivery = redelivery && !abandoned
		retry := !a.Delivered && !abandoned && attempt < p.Attempts && retryableDelivery(status) && !errors.Is(err, errSelfCallback)
		a.Final = !redelivery && (a.Delivered || (!retry && !abandoned))
		f.logDeliveryLocked(a)
		f.events.mu.Unlock()
		if redelivery {
			continue // at once: the receiver has answered
		}
		if !retry {
			return
		}

		d := min(wait, p.MaxBackoff)
		if retryAfter > 0 {
			d = min(retryAfter, p.MaxBackoff)
		}
		if !f.backoff(d) {
			return
		}
		wait = min(2*wait, p.MaxBackoff)
		if f.subscriberGone(s) {
			return
		}
	}
}

// backoff waits d before a delivery's next attempt and reports false when
// Close ended the wait.
func (f *Fake) backoff(d time.Duration) bool {
	if hook := f.events.testHookBackoff; hook != nil {
		hook(d)
		return f.events.ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-f.events.ctx.Done():
		return false
	}
}

// attempt returns the log entry of attempt n of j.
func (j evJob) attempt(s *evSubscriber, n int, at time.Time) DeliveryAttempt {
	return DeliveryAttempt{
		DeliveryID: j.id, SubscriberID: s.ID, Event: j.event, ObjectID: j.objectID, URL: j.logURL,
		Attempt: n, Time: at, Payload: j.payload,
	}
}

// logDeliveryLocked appends a to the delivery log, keeping its latest
// maxDeliveryLog entries.
func (f *Fake) logDeliveryLocked(a DeliveryAttempt) {
	f.events.log = append(f.events.log, a)
	if n := len(f.events.log) - maxDeliveryLog; n > 0 {
		f.events.log = slices.Delete(f.events.log, 0, n)
	}
}

func (f *Fake) subscriberGone(s *evSubscriber) bool {
	f.events.mu.Lock()
	defer f.events.mu.Unlock()
	return s.gone
}

// retryableDelivery reports whether an attempt that got status (0: no
// answer) is worth repeating.
func retryableDelivery(status int) bool {
	return status == 0 || status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// postDelivery sends one attempt and returns the answer's status and Retry-After.
func (f *Fake) postDelivery(j evJob) (int, time.Duration, error) {
	req, err := http.NewRequestWithContext(f.events.ctx, http.MethodPost, j.url, bytes.NewReader(j.body))
	if err != nil {
		return 0, 0, err
	}
	if adminPath(req.URL.Path) {
		return 0, 0, fmt.Errorf("%s: %w", j.logURL, errSelfCallback)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", fakehttp.DeliveryUserAgent)
	resp, err := f.events.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			masked := *ue
			masked.URL = j.logURL
			err = &masked
		}
		return 0, 0, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	var retryAfter time.Duration
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
		retryAfter = time.Duration(secs) * time.Second
	}
	return resp.StatusCode, retryAfter, nil
}

// minSecretSegment is the length from which a callback URL's path
// segment of letters, digits, '-' and '_' counts as a secret token.
const minSecretSegment = 16

// maskCallbackURL returns a callback URL as the delivery log shows it:
// the userinfo's password, every query value and every path segment of
// minSecretSegment or more letters, digits, '-' and '_' (where a receiver
// puts a secret token) masked as "***". A URL that does not parse shows
// as "***".
func maskCallbackURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "***"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "***")
	}
	// Masked in the escaped path, where "*" stays as it is.
	segs := strings.Split(u.EscapedPath(), "/")
	for i, seg := range segs {
		if len(seg) >= minSecretSegment && strings.Trim(seg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == "" {
			segs[i] = "***"
		}
	}
	u.RawPath = strings.Join(segs, "/")
	if u.Path, err = url.PathUnescape(u.RawPath); err != nil {
		return "***"
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"***"}
		}
		u.RawQuery = q.Encode()
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}
