package fake

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/partnerapi/partner-go/internal/fakeserver/fakehttp"
	"github.com/partnerapi/partner-go/internal/text"
)

// This file holds what keeps the fake's wire to the published one: the
// timestamp format of the published examples, messages in JSON's words
// and the published bodies' names, optional bodies, and the refusal of
// unknown members of write bodies: a member the
// body's published description does not name (a typo such as "objectids"
// for "object_ids") would otherwise be dropped without a word and the
// write would do something else than meant. SCIM resources keep SCIM's
// extension rules (area_scim.go).

// wireTime formats the service's timestamps as every published bulk
// example writes them: UTC with milliseconds ("2020-05-18T14:06:57.572Z").
func wireTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// WithUnknownMembers makes the fake accept and ignore members of write
// bodies (subscribe, audit, external id) that their published
// descriptions do not name, instead of answering 400 naming each one.
// Off by default; for tests that must send extra members.
func WithUnknownMembers() Option { return func(f *Fake) { f.deploy.unknownMembers = true } }

// decodeWrite reads the JSON body of a write into v, a pointer to a
// struct whose json tags are the published members, as decodeJSON does,
// and answers 400 naming every member v does not know (and the published
// name it resembles), unless WithUnknownMembers is on.
func (f *Fake) decodeWrite(w http.ResponseWriter, r *http.Request, v any) bool {
	if f.deploy.unknownMembers {
		return decodeJSON(w, r, v)
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, fakehttp.MaxJSONBody+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "reading the body: %v", err)
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if !decodeJSON(w, r, v) {
		return false
	}
	var problems []string
	unknownMembers(raw, reflect.TypeOf(v).Elem(), "", &problems)
	if len(problems) > 0 {
		writeError(w, http.StatusBadRequest, "invalid_request", "%s", strings.Join(problems, "; "))
		return false
	}
	return true
}

// unknownMembers appends to problems each member of the JSON object raw
// that struct type t does not name, below prefix, walking into members
// that are structs themselves.
func unknownMembers(raw []byte, t reflect.Type, prefix string, problems *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return
	}
	known := map[string]reflect.Type{}
	var names []string
	for sf := range t.Fields() {
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" || !sf.IsExported() {
			continue
		}
		known[name] = sf.Type
		names = append(names, name)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range members {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		ft, ok := known[k]
		if ok {
			unknownMembers(members[k], ft, prefix+k+".", problems)
			continue
		}
		msg := fmt.Sprintf("unknown member %q", prefix+k)
		if like := resembling(k, names); like != "" {
			msg += fmt.Sprintf(" (the published member is %q)", prefix+like)
		}
		*problems = append(*problems, msg)
	}
}

// resembling returns the name of names that name is most likely a
// misspelling of: the same without regard to case, "_" and "-", or at
// most two edits away; "" when none is.
func resembling(name string, names []string) string {
	norm := func(s string) string {
		return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
	}
	best, bestDist := "", 3
	for _, n := range names {
		if norm(n) == norm(name) {
			return n
		}
		if d := text.Levenshtein(norm(n), norm(name)); d < bestDist && len(n) > 3 {
			best, bestDist = n, d
		}
	}
	return best
}

// decodeOptionalJSON is decodeJSON for a body the published descriptions
// do not require (report list, data, chart data and chart metadata): an
// absent body, or one of white space only, leaves v as it is, so that the
// interface's defaults apply.
func decodeOptionalJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	br := bufio.NewReader(r.Body)
	for {
		c, err := br.ReadByte()
		if err != nil {
			return true
		}
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			br.UnreadByte()
			break
		}
	}
	r.Body = io.NopCloser(br)
	return decodeJSON(w, r, v)
}

// publishedBody names the body of r's route as the published descriptions
// do, for messages: a non-Go client reads them.
func publishedBody(r *http.Request) string {
	switch {
	case strings.HasPrefix(r.URL.Path, "/api/scim/"):
		return "a SCIM user"
	case strings.HasSuffix(r.URL.Path, "/audit"):
		return "the audit request: field_name, integration_id, external_id, status_code, message"
	case strings.HasSuffix(r.URL.Path, "/external_id"):
		return "the external id request: field_name, external_id"
	case r.URL.Path == "/event/v1/subscriber":
		return "the subscribe request: event, name, webhook_settings, filters, integration_id, object_ids, subscriber_type"
	case r.URL.Path == "/users/v1/check-attribute":
		return "the check-attribute request: email, filter_value"
	case r.URL.Path == "/oauth/token" && r.Method == http.MethodDelete:
		return "the revoke request: token"
	case r.URL.Path == "/oauth/token":
		return "the token request"
	case strings.Contains(r.URL.Path, "/chart-"):
		return "the chart request: filters, chartIds"
	case strings.HasPrefix(r.URL.Path, "/report/"):
		return "the page request: page, filters"
	}
	return "a JSON object"
}

// memberError is a member's value that its own decoding refused, with a
// message that says so in JSON's words.
type memberError struct{ msg string }

func (e *memberError) Error() string { return e.msg }
