package partner_test

// The fault-injecting proxy of the chaos test (chaos_test.go).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// chaosFault is what the proxy does to one request.
type chaosFault int

const (
	passThrough chaosFault = iota
	before503              // answer 503 without forwarding
	before429              // answer 429 (Retry-After: 0) without forwarding
	before401              // answer 401 without forwarding (a request with a bearer token)
	after500               // forward, then answer 500 instead of the fake's answer
	dropAfter              // forward, then close the connection without answering
	slow                   // wait 1-25ms, then forward
	numFaults
)

var faultNames = [numFaults]string{"none", "503 before", "429 before", "401 before", "500 after", "drop after", "latency"}

// chaosProxy forwards to the fake and injects faults, drawn from a seeded
// source: 6% 503, 6% 429, 4% 401, 5% 500 after forwarding, 5% dropped
// after forwarding, 4% latency. It notes the tokens the fake issued (to
// look for them in logs and errors) and the grants of the client whose
// requests carry the header chaosExpiryClient, which gets no 401s: its
// tokens live until they are refreshed early.
type chaosProxy struct {
	target string
	out    *http.Transport
	mu     sync.Mutex
	rng    *rand.Rand
	counts [numFaults]atomic.Int64

	secrets      []string       // tokens the fake issued
	expiryGrants map[string]int // grant_type of the expiry client's token requests
}

// chaosExpiryClient marks the requests of the client that gets no 401s.
const chaosExpiryClient = "X-Chaos-Expiry-Client"

func (p *chaosProxy) pick(r *http.Request) chaosFault {
	p.mu.Lock()
	n := p.rng.IntN(100)
	p.mu.Unlock()
	f := passThrough
	switch {
	case n < 6:
		f = before503
	case n < 12:
		f = before429
	case n < 16:
		f = before401
	case n < 21:
		f = after500
	case n < 26:
		f = dropAfter
	case n < 30:
		f = slow
	}
	if f == before401 && (r.Header.Get("Authorization") == "" || r.URL.Path == "/oauth/token" || r.Header.Get(chaosExpiryClient) != "") {
		f = before503
	}
	p.counts[f].Add(1)
	return f
}

func (p *chaosProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Path == "/oauth/token"
	if token && r.Header.Get(chaosExpiryClient) != "" {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var g struct {
			GrantType string `json:"grant_type"`
		}
		json.Unmarshal(body, &g)
		p.mu.Lock()
		p.expiryGrants[g.GrantType]++
		p.mu.Unlock()
	}
	f := p.pick(r)
	refuse := func(status int) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":"chaos","message":"injected %d"}`, status)
	}
	switch f {
	case before503:
		refuse(http.StatusServiceUnavailable)
		return
	case before429:
		w.Header().Set("Retry-After", "0")
		refuse(http.StatusTooManyRequests)
		return
	case before401:
		refuse(http.StatusUnauthorized)
		return
	case slow:
		p.mu.Lock()
		d := time.Duration(1+p.rng.IntN(25)) * time.Millisecond
		p.mu.Unlock()
		time.Sleep(d)
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Scheme, out.URL.Host = "http", strings.TrimPrefix(p.target, "http://")
	out.Host = out.URL.Host
	resp, err := p.out.RoundTrip(out)
	if err != nil {
		refuse(http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	switch f {
	case after500:
		io.Copy(io.Discard, resp.Body)
		refuse(http.StatusInternalServerError)
		return
	case dropAfter:
		io.Copy(io.Discard, resp.Body)
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
			return
		}
		panic(http.ErrAbortHandler)
	}
	maps.Copy(w.Header(), resp.Header)
	if token && resp.StatusCode == http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		var tok struct {
			AccessToken  string `json:"access_token"`
			RefreshToken string `json:"refresh_token"`
		}
		json.Unmarshal(body, &tok)
		p.mu.Lock()
		p.secrets = append(p.secrets, tok.AccessToken, tok.RefreshToken)
		p.mu.Unlock()
		body = shortLived(body)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(resp.StatusCode)
		w.Write(body)
		return
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// chaosTokenLifetime is the lifetime, in seconds, the proxy gives the
// tokens the fake issues.
const chaosTokenLifetime = 1

// shortLived returns the token answer body with its expires_in set to
// chaosTokenLifetime, its other members as they are.
func shortLived(body []byte) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return body
	}
	m["expires_in"] = json.RawMessage(strconv.Itoa(chaosTokenLifetime))
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

// refreshes counts the refresh grants of the client without 401s.
func (p *chaosProxy) refreshes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.expiryGrants["refresh_token"]
}

func (p *chaosProxy) grants() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.expiryGrants)
}
