package fake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Fault makes the fake misbehave on matching requests, or on its webhook
// deliveries (Redeliver, DropAnswer).
type Fault struct {
	// ID names the fault once injected ("fault-1", ...), for RemoveFault.
	// Faults reports it; InjectFault ignores the ID it is given.
	ID string

	// Method matches the request method; "" matches any.
	Method string
	// Path matches the request path, with path.Match wildcards:
	// "/report/v1/*/data". "" matches any.
	Path string
	// PageSize, when not 0, matches only requests whose JSON body asks
	// for page PageNumber of PageSize items ({"page":{"number":N,
	// "size":S}}, as the paged report routes read it; a body without a
	// page asks for page 0 of 100): a fault on one request of a paged
	// read, whichever order its requests arrive in. A body that is not
	// such JSON matches no PageSize. The body is read ahead of the
	// handler only while a fault with a PageSize whose Method and Path
	// match the request is in force, and handed to the handler as it
	// came. 0 matches any request.
	PageSize   int64
	PageNumber int64
	// Times is how many matching requests the fault applies to; 0 or less
	// means every one until ClearFaults.
	Times int

	// Status answers with this status and an error body instead of
	// handling the request.
	Status int
	// RetryAfter is sent as the Retry-After header with Status.
	RetryAfter string
	// Message is the error message sent with Status.
	Message string
	// Latency delays the request before anything else happens.
	Latency time.Duration
	// Drop closes the connection without answering and without handling
	// the request.
	Drop bool
	// DropAfter handles the request (its effects happen) and then closes
	// the connection without sending the answer.
	DropAfter bool
	// Truncate handles the request and sends its answer's status and
	// headers, with the full Content-Length, but only the first half of
	// its body before closing the connection: the client reads an
	// unexpected EOF in the middle of a (usually 2xx) body.
	Truncate bool
	// Dribble handles the request and sends its answer's body in pieces
	// of 16 bytes, waiting Dribble between two pieces: a slow server.
	Dribble time.Duration

	// Redeliver and DropAnswer make the fault act on the fake's webhook
	// deliveries instead of the requests it serves, so that a test can
	// exercise a receiver's duplicate guard (events.Dedup). Such a fault
	// matches the attempts of a delivery that got an answer: Method
	// matches the delivery's POST, and Path the path of the subscriber's
	// callback URL; PageSize and the effects above do not apply. Times
	// counts the attempts it acted on, which the delivery log marks
	// (DeliveryAttempt.Redelivery, DeliveryAttempt.AnswerDropped). A
	// fault with both acts as DropAnswer.
	//
	// Redeliver sends a delivery its receiver answered 2xx once more, at
	// once and with the same body (the same delivery_id with
	// WithDeliveryEnvelope), as a service that lost its record of the
	// answer would; a delivery is redelivered at most once.
	Redeliver bool
	// DropAnswer drops the receiver's answer to an attempt, as if the
	// connection had broken before it arrived: the receiver has handled
	// the delivery, and the fake takes the attempt as failed without an
	// answer and retries it under its DeliveryPolicy, with the same body.
	// Its Times counts attempts, the retries of one delivery included:
	// Fault{DropAnswer: true, Times: 5} drops the answers to all five
	// attempts of the first delivery under the default policy, which then
	// gives up on it. Set OncePerDelivery to drop one answer in each of
	// Times deliveries.
	DropAnswer bool
	// OncePerDelivery makes a Redeliver or DropAnswer fault act on at most
	// one attempt of each delivery, so that its Times counts distinct
	// deliveries: Fault{DropAnswer: true, Times: 5, OncePerDelivery: true}
	// drops the first answer of each of the next five deliveries, each
	// then retried once. Redeliver acts once per delivery in any case.
	OncePerDelivery bool
}

// forDelivery reports whether ft acts on deliveries, not on requests.
func (ft *Fault) forDelivery() bool { return ft.Redeliver || ft.DropAnswer }

// requestedPage is the page a paged request asks for (Fault.PageSize).
type requestedPage struct{ number, size int64 }

type faultStore struct {
	mu     sync.Mutex
	faults []*faultState
	next   int // the number of the last fault id given
}

type faultState struct {
	Fault
	left int // remaining uses; -1 forever
}

// InjectFault adds a fault and returns its id, for RemoveFault. Faults
// are matched in the order they were added; a request takes the first
// match.
func (f *Fake) InjectFault(ft Fault) string {
	left := ft.Times
	if left <= 0 {
		left = -1
	}
	f.faults.mu.Lock()
	defer f.faults.mu.Unlock()
	f.faults.next++
	ft.ID = fmt.Sprintf("fault-%d", f.faults.next)
	f.faults.faults = append(f.faults.faults, &faultState{Fault: ft, left: left})
	return ft.ID
}

// RemoveFault removes the fault with the id InjectFault returned, and
// reports whether it was still in force (a fault whose Times ran out is
// gone already).
func (f *Fake) RemoveFault(id string) bool {
	f.faults.mu.Lock()
	defer f.faults.mu.Unlock()
	for i, ft := range f.faults.faults {
		if ft.ID == id {
			f.faults.faults = append(f.faults.faults[:i:i], f.faults.faults[i+1:]...)
			return true
		}
	}
	return false
}

// Faults returns the injected faults still in force, in matching order;
// the Times of each is the number of requests it still applies to (0:
// every one until ClearFaults).
func (f *Fake) Faults() []Fault {
	f.faults.mu.Lock()
	defer f.faults.mu.Unlock()
	out := make([]Fault, 0, len(f.faults.faults))
	for _, ft := range f.faults.faults {
		x := ft.Fault
		x.Times = max(ft.left, 0)
		out = append(out, x)
	}
	return out
}

// ClearFaults removes every injected fault.
func (f *Fake) ClearFaults() {
	f.faults.mu.Lock()
	defer f.faults.mu.Unlock()
	f.faults.faults = nil
}

// matchesPages reports whether a fault in force with a PageSize matches a
// request's method and path p: take then needs the page it asks for.
func (s *faultStore) matchesPages(method, p string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ft := range s.faults {
		if ft.PageSize != 0 && !ft.forDelivery() && ft.matchesRoute(method, p) {
			return true
		}
	}
	return false
}

// matchesRoute reports whether ft's Method and Path match a request's
// method and path p.
func (ft *Fault) matchesRoute(method, p string) bool {
	if ft.Method != "" && ft.Method != method {
		return false
	}
	if ft.Path != "" {
		if ok, _ := path.Match(ft.Path, p); !ok {
			return false
		}
	}
	return true
}

// take returns the first fault matching a request, counting it as used.
// page is the page the request asks for; nil (not read, or not a paged
// body) matches no fault with a PageSize.
func (s *faultStore) take(method, p string, page *requestedPage) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, ft := range s.faults {
		if ft.forDelivery() || !ft.matchesRoute(method, p) {
			continue
		}
		if ft.PageSize != 0 && (page == nil || *page != (requestedPage{ft.PageNumber, ft.PageSize})) {
			continue
		}
		return s.useLocked(i)
	}
	return nil
}

// takeDelivery returns the first delivery fault (Fault.forDelivery) that
// acts on an answered attempt of a delivery to a callback whose path is
// p, counting it as used: DropAnswer acts on any answer, Redeliver on a
// 2xx answer (delivered) of a delivery not redelivered yet. acted holds
// the ids of the faults that acted on the delivery's earlier attempts,
// which a fault with OncePerDelivery skips.
func (s *faultStore) takeDelivery(p string, delivered, redelivered bool, acted []string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, ft := range s.faults {
		if !ft.forDelivery() || !ft.matchesRoute(http.MethodPost, p) {
			continue
		}
		if ft.OncePerDelivery && slices.Contains(acted, ft.ID) {
			continue
		}
		if ft.DropAnswer || delivered && !redelivered {
			return s.useLocked(i)
		}
	}
	return nil
}

// useLocked returns a copy of fault i, counting one use of it: a fault
// whose Times ran out is removed.
func (s *faultStore) useLocked(i int) *Fault {
	ft := s.faults[i]
	out := ft.Fault
	if ft.left > 0 {
		ft.left--
		if ft.left == 0 {
			s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
		}
	}
	return &out
}

// requestPage returns the page r's JSON body asks for, as readPage reads
// it (pageOf), or nil when the body is not such JSON or its page is not
// one readPage takes. It reads the body and
// leaves r.Body giving the handler the same bytes, and the same error
// at their end (a body over the size limit stays one).
func requestPage(r *http.Request) *requestedPage {
	var body struct {
		Page *pageJSON `json:"page"`
	}
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(r.Body)
		rest := io.Reader(bytes.NewReader(b))
		if err != nil {
			rest = io.MultiReader(rest, errReader{err})
		}
		r.Body = struct {
			io.Reader
			io.Closer
		}{rest, r.Body}
		if err != nil {
			return nil
		}
		if len(bytes.TrimSpace(b)) != 0 && json.Unmarshal(b, &body) != nil {
			return nil
		}
	}
	number, size, problem := pageOf(body.Page)
	if problem != "" {
		return nil
	}
	return &requestedPage{number, size}
}

// errReader fails every read with its error.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// LoggedRequest is one request as the fake saw it. It holds no secrets:
// no headers, no bodies, and query values that could be secret are masked.
// Method, Path, Query and Env are clipped (32, 512, 512 and 128 bytes,
// ending in "…" when clipped), so that the log's memory has a ceiling.
type LoggedRequest struct {
	Time     time.Time
	Method   string
	Path     string
	Query    string
	ClientID string // the client whose token authorized it, if any
	// Env is the environment the request names: its environment header
	// (x-svc-env unless WithWords names another) or, on the token endpoint, the
	// query parameter of that name when the header is absent.
	Env    string
	Status int // 0 when the connection was dropped
	// Fault is the injected fault, if any: a status, "drop" or
	// "drop-after"; "subscription-key" when the gateway check refused it;
	// "too-large" when its headers, query or body were over the limits
	// (fakehttp.MaxHeaderBytes, fakehttp.MaxQueryBytes, fakehttp.MaxJSONBody and siblings).
	Fault string
}

// Bounds of the strings of a LoggedRequest, in bytes: what a client sends
// is clipped to them (clip), so that each entry, and with the ring's size
// the whole log, has a fixed ceiling (about 1.5 KiB an entry) whatever
// unauthenticated clients send.
const (
	maxLoggedMethod = 32
	maxLoggedPath   = 512
	maxLoggedQuery  = 512
	maxLoggedEnv    = 128
)

// clipMark ends a string that clip shortened.
const clipMark = "…"

// clip returns s when it has at most max bytes, and otherwise its longest
// prefix of whole UTF-8 characters that leaves room for clipMark, followed
// by clipMark. The result never shares the memory of s, so that an entry
// does not keep a request's buffers alive.
func clip(s string, max int) string {
	if len(s) <= max {
		return strings.Clone(s)
	}
	n := max - len(clipMark)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + clipMark
}

// DefaultRequestLogSize is how many requests the request log keeps unless
// WithRequestLogSize says otherwise.
const DefaultRequestLogSize = 100_000

// WithRequestLogSize keeps the last n requests in the request log
// (default DefaultRequestLogSize, 100,000): the log is a ring, so that a fake
// serving millions of requests holds flat memory. Older entries are
// dropped. n < 1 means the default.
func WithRequestLogSize(n int) Option { return func(f *Fake) { f.reqlog.size = n } }

// requestLog is a ring of the last size requests.
type requestLog struct {
	mu      sync.Mutex
	size    int
	entries []LoggedRequest // in arrival order until full, then a ring
	next    int             // once full: the index of the oldest entry
	dropped int
}

func (l *requestLog) capacity() int {
	if l.size < 1 {
		return DefaultRequestLogSize
	}
	return l.size
}

func (l *requestLog) add(e LoggedRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.capacity(); len(l.entries) >= n {
		l.entries[l.next] = e
		l.next = (l.next + 1) % n
		l.dropped++
		return
	}
	l.entries = append(l.entries, e)
}

// each calls fn on the entries, oldest first, under the lock.
func (l *requestLog) each(fn func(*LoggedRequest)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.entries {
		fn(&l.entries[(l.next+i)%len(l.entries)])
	}
}

// Requests returns the requests served so far, oldest first: the last
// WithRequestLogSize of them. A request is logged before its answer is
// sent, so a test may count right after a call.
func (f *Fake) Requests() []LoggedRequest {
	var out []LoggedRequest
	f.reqlog.each(func(e *LoggedRequest) { out = append(out, *e) })
	return out
}

// requestsDropped counts the requests that left the log because it was
// full (see WithRequestLogSize).
func (f *Fake) requestsDropped() int {
	f.reqlog.mu.Lock()
	defer f.reqlog.mu.Unlock()
	return f.reqlog.dropped
}

// CountRequests counts the logged requests with method (any when "") and
// a path matching pattern (path.Match wildcards).
func (f *Fake) CountRequests(method, pattern string) int {
	n := 0
	f.reqlog.each(func(e *LoggedRequest) {
		if method != "" && e.Method != method {
			return
		}
		if ok, _ := path.Match(pattern, e.Path); ok {
			n++
		}
	})
	return n
}

// ResetRequests empties the request log.
func (f *Fake) ResetRequests() {
	f.reqlog.mu.Lock()
	defer f.reqlog.mu.Unlock()
	f.reqlog.entries, f.reqlog.next, f.reqlog.dropped = nil, 0, 0
}

var secretParams = map[string]bool{"client_secret": true, "access_token": true, "refresh_token": true, "token": true, "file_token": true, "upload_token": true, subscriptionKeyParam: true,
	"code": true} // an OAuth authorization code (GET /oauth/authorize)

// maskQuery encodes q with the values of secretParams masked, whatever
// the case of their names: a client that spells a secret parameter
// otherwise still sent a secret.
func maskQuery(q url.Values) string {
	for k := range q {
		if secretParams[strings.ToLower(k)] {
			q[k] = []string{"***"}
		}
	}
	return q.Encode()
}
