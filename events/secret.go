package events

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/partnerapi/partner-go/core"
)

// Secret is a subscriber secret: a random token that Subscribe puts into
// the callback URL as its last path segment and that a Handler with
// Secrets requires, so that only a sender that knows the whole callback
// URL (the service it was registered with) can deliver. The service
// documents no signing of deliveries; the URL it was given is what it
// echoes.
//
// A Secret prints as "[redacted]" with fmt (%v, %s, %+v, %#v), in slog
// records and when marshalled (encoding/json, any encoder of
// encoding.TextMarshaler): string(secret) is its value, for storing it.
// It unmarshals from a plain JSON string.
type Secret string

// MinSecretLen is the shortest Secret Subscribe accepts: 22 characters
// of the URL-safe alphabet carry 128 bits when they are random.
const MinSecretLen = 22

// NewSecret returns a fresh Secret: 26 characters of crypto/rand.Text,
// 130 random bits, safe in a URL path as they are.
func NewSecret() Secret { return Secret(rand.Text()) }

// String returns "[redacted]", never the secret.
func (Secret) String() string { return "[redacted]" }

// GoString returns "[redacted]", never the secret.
func (Secret) GoString() string { return "[redacted]" }

// LogValue keeps the secret out of slog records.
func (Secret) LogValue() slog.Value { return slog.StringValue("[redacted]") }

// MarshalText returns "[redacted]", never the secret: a struct holding a
// Secret that is logged as JSON does not show it.
func (Secret) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

// check reports what is wrong with s as a path segment secret, without
// showing s.
func (s Secret) check() error {
	if len(s) < MinSecretLen {
		return fmt.Errorf("secret has %d characters, want at least %d (events.NewSecret makes one)", len(s), MinSecretLen)
	}
	for _, c := range []byte(s) {
		if !secretChar(c) {
			return fmt.Errorf("secret may hold only A-Z, a-z, 0-9, '-' and '_' (events.NewSecret makes one)")
		}
	}
	return nil
}

func secretChar(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// withSecret returns the callback URL raw with secret as its last path
// segment: "https://hooks.example.com/partner" becomes
// "https://hooks.example.com/partner/SECRET"; a query stays after it.
func withSecret(raw string, secret Secret) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	return u.JoinPath(string(secret)).String(), nil
}

// SecretSet is the set of subscriber secrets a Handler accepts. It is
// safe for concurrent use: a receiver rotates its secret while it serves
// (see the Handler example). The zero SecretSet holds none, and a Handler
// with an empty set refuses every delivery.
type SecretSet struct {
	mu      sync.RWMutex
	secrets [][]byte
}

// NewSecretSet returns a set holding secrets.
func NewSecretSet(secrets ...Secret) *SecretSet {
	s := &SecretSet{}
	for _, sec := range secrets {
		s.Add(sec)
	}
	return s
}

// Add makes the set accept secret. An empty secret is ignored.
func (s *SecretSet) Add(secret Secret) {
	if secret == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sec := range s.secrets {
		if string(sec) == string(secret) {
			return
		}
	}
	s.secrets = append(s.secrets, []byte(secret))
}

// Remove makes the set refuse secret.
func (s *SecretSet) Remove(secret Secret) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, sec := range s.secrets {
		if string(sec) == string(secret) {
			s.secrets = append(s.secrets[:i:i], s.secrets[i+1:]...)
			return
		}
	}
}

// Len returns the number of secrets in the set.
func (s *SecretSet) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.secrets)
}

// String describes the set without its secrets.
func (s *SecretSet) String() string { return fmt.Sprintf("events.SecretSet{secrets: %d}", s.Len()) }

// GoString describes the set without its secrets.
func (s *SecretSet) GoString() string { return s.String() }

// LogValue keeps the secrets out of slog records.
func (s *SecretSet) LogValue() slog.Value { return slog.StringValue(s.String()) }

// Allows reports whether the last segment of r's URL path is one of the
// set's secrets, for receivers that do not use Handler. Each secret is
// compared in constant time, and all of them every time.
func (s *SecretSet) Allows(r *http.Request) bool {
	candidate := []byte(lastSegment(r.URL.Path))
	s.mu.RLock()
	defer s.mu.RUnlock()
	ok := 0
	for _, sec := range s.secrets {
		ok |= subtle.ConstantTimeCompare(sec, candidate)
	}
	return ok == 1
}

// secretRunLen is the run of secret characters from which maskSecretPath
// hides a path segment that is not the last: a secret in the wrong place.
const secretRunLen = 16

// maskSecretPath returns p as a log shows it when secrets are in use: its
// last segment, and every other segment holding secretRunLen or more
// secret characters in a row (a secret in the wrong place, alone or among
// other characters), as "***".
func maskSecretPath(p string) string {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if i == len(segs)-1 || secretRun(seg) {
			segs[i] = "***"
		}
	}
	return strings.Join(segs, "/")
}

// secretRun reports whether s holds secretRunLen or more secret
// characters in a row.
func secretRun(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if !secretChar(s[i]) {
			run = 0
		} else if run++; run >= secretRunLen {
			return true
		}
	}
	return false
}

// hideSecret replaces secret with "***" in what a service's error answer
// carries (message, code, body): a service may quote the callback URL it
// refused. The SDK's errors build their text when it is asked for, so
// err's text shows "***" in its place too. Other errors do not hold the
// URL.
func hideSecret(err error, secret Secret) error {
	var e *core.Error
	if secret == "" || !errors.As(err, &e) {
		return err
	}
	hide := func(s string) string { return strings.ReplaceAll(s, string(secret), "***") }
	e.Message, e.Code, e.URI, e.SCIMType = hide(e.Message), hide(e.Code), hide(e.URI), hide(e.SCIMType)
	e.Body = bytes.ReplaceAll(e.Body, []byte(secret), []byte("***"))
	return err
}

// lastSegment returns the last segment of a path, where a secret goes.
func lastSegment(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }
