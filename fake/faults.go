package fake

import (
	"net/url"
	"path"
	"sync"
	"time"
)

// Fault makes the fake misbehave on matching requests.
type Fault struct {
	// Method matches the request method; "" matches any.
	Method string
	// Path matches the request path, with path.Match wildcards:
	// "/report/v1/*/data". "" matches any.
	Path string
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
}

type faultStore struct {
	mu     sync.Mutex
	faults []*faultState
}

type faultState struct {
	Fault
	left int // remaining uses; -1 forever
}

// InjectFault adds a fault. Faults are matched in the order they were
// added; a request takes the first match.
func (f *Fake) InjectFault(ft Fault) {
	left := ft.Times
	if left <= 0 {
		left = -1
	}
	f.faults.mu.Lock()
	defer f.faults.mu.Unlock()
	f.faults.faults = append(f.faults.faults, &faultState{Fault: ft, left: left})
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

func (s *faultStore) take(method, p string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, ft := range s.faults {
		if ft.Method != "" && ft.Method != method {
			continue
		}
		if ft.Path != "" {
			if ok, _ := path.Match(ft.Path, p); !ok {
				continue
			}
		}
		out := ft.Fault
		if ft.left > 0 {
			ft.left--
			if ft.left == 0 {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
		}
		return &out
	}
	return nil
}

// LoggedRequest is one request as the fake saw it. It holds no secrets:
// no headers, no bodies, and query values that could be secret are masked.
type LoggedRequest struct {
	Time     time.Time
	Method   string
	Path     string
	Query    string
	ClientID string // the client whose token authorized it, if any
	Env      string // the environment header (x-svc-env unless WithEnvHeader)
	Status   int    // 0 when the connection was dropped
	// Fault is the injected fault, if any: a status, "drop" or
	// "drop-after"; "subscription-key" when the gateway check refused it.
	Fault string
}

type requestLog struct {
	mu      sync.Mutex
	entries []LoggedRequest
}

func (l *requestLog) add(e LoggedRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, e)
}

// Requests returns the requests served so far, oldest first. A request is
// logged before its answer is sent, so a test may count right after a call.
func (f *Fake) Requests() []LoggedRequest {
	f.reqlog.mu.Lock()
	defer f.reqlog.mu.Unlock()
	return append([]LoggedRequest(nil), f.reqlog.entries...)
}

// CountRequests counts the logged requests with method (any when "") and
// a path matching pattern (path.Match wildcards).
func (f *Fake) CountRequests(method, pattern string) int {
	n := 0
	for _, e := range f.Requests() {
		if method != "" && e.Method != method {
			continue
		}
		if ok, _ := path.Match(pattern, e.Path); ok {
			n++
		}
	}
	return n
}

// ResetRequests empties the request log.
func (f *Fake) ResetRequests() {
	f.reqlog.mu.Lock()
	defer f.reqlog.mu.Unlock()
	f.reqlog.entries = nil
}

var secretParams = map[string]bool{"client_secret": true, "access_token": true, "refresh_token": true, "token": true, "file_token": true, "upload_token": true, SubscriptionKeyParam: true}

func maskQuery(q url.Values) string {
	for k := range q {
		if secretParams[k] {
			q[k] = []string{"***"}
		}
	}
	return q.Encode()
}
