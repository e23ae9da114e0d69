// Package fakeadmin serves a fake.Fake together with an HTTP admin API
// under /_fake/, so that tests written in any language can drive the fake
// the way Go tests drive its methods. cmd/partnerfake serves one; the
// admin API is described at GET /_fake/openapi.json.
package fakeadmin

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/fakeserver/fakehttp"
)

// adminOpenAPI is the OpenAPI 3 description of the admin API, served at
// GET /_fake/openapi.json.
//
//go:embed openapi.json
var adminOpenAPI []byte

// maxSeedBody bounds the body of a seed (413 beyond it); the other admin
// routes take fakehttp.MaxJSONBody, as the fake's JSON routes do.
const maxSeedBody = 64 << 20

// Admin serves a Fake together with an HTTP admin API under /_fake/,
// so that tests written in any language can drive the fake the way Go
// tests drive its methods. cmd/partnerfake serves one; a Go program can
// mount one too:
//
//	a := fakeadmin.New(func() *fake.Fake { return fake.New(fake.WithDemoData()) })
//	defer a.Close()
//	http.ListenAndServe("127.0.0.1:8080", a)
//
// Requests outside /_fake/ go to the current Fake. The admin routes
// mirror the Go API; bodies and answers are JSON:
//
//	GET    /_fake/health               {"status": "ok", "now": "<fake clock>"}
//	GET    /_fake/openapi.json         this API as an OpenAPI 3 document, to generate clients
//	GET    /_fake/faults               the faults in force, with their ids (Fake.Faults)
//	POST   /_fake/faults               inject one (Fake.InjectFault), body a fault:
//	       {"method": "GET", "path": "/report/v1/*/data", "times": 2, "status": 503,
//	        "retry_after": "1", "message": "busy", "latency": "250ms",
//	        "drop": false, "drop_after": false, "truncate": false, "dribble": "20ms",
//	        "page": {"number": 0, "size": 10000}},
//	       or a fault on the webhook deliveries (Fault.Redeliver,
//	       Fault.DropAnswer), its path matching the callback URL's:
//	       {"path": "/hooks/*", "times": 1, "redeliver": true} or
//	       {"path": "/hooks/*", "times": 1, "drop_answer": true};
//	       "once_per_delivery": true makes times count distinct deliveries
//	       (Fault.OncePerDelivery);
//	                                   answers 201 {"id": "fault-1"}
//	DELETE /_fake/faults/{id}          remove that one (Fake.RemoveFault); 404 if it
//	                                   is not in force (its times ran out)
//	DELETE /_fake/faults               remove every fault (Fake.ClearFaults)
//	GET    /_fake/clock                {"now": "...", "manual": true}
//	POST   /_fake/clock/advance        {"by": "90s"}: move a manual clock on
//	                                   (ManualClock.Advance); 409 with the real clock
//	GET    /_fake/requests             the request log (Fake.Requests); the query
//	                                   parameters method and path (a path.Match
//	                                   pattern) select entries
//	DELETE /_fake/requests             empty it (Fake.ResetRequests)
//	GET    /_fake/deliveries           the delivery log (Fake.Deliveries); with
//	                                   ?wait=5s it first waits up to that long for
//	                                   deliveries in flight (Fake.WaitDeliveries)
//	DELETE /_fake/deliveries           empty it (Fake.ResetDeliveries)
//	POST   /_fake/tokens/expire        expire every access token (Fake.ExpireTokens)
//	GET    /_fake/integrations         the integrations in the Seed format, with the
//	                                   object type and bulk key field that the
//	                                   service's own listing does not show
//	                                   (Fake.Integrations)
//	GET    /_fake/objects/{id}         the object in the Seed format: {"id", "type",
//	                                   "fields", "integration_id"} (Fake.Object);
//	                                   404 for an unknown object
//	PATCH  /_fake/objects/{id}         {"fields": {"stage": "won"}}: set fields by
//	                                   dotted name (Fake.UpdateObject); fires
//	                                   object.update when a value changed; 404 for
//	                                   an unknown object
//	DELETE /_fake/objects/{id}         remove the object (Fake.DeleteObject); fires
//	                                   object.delete; 404 for an unknown object
//	POST   /_fake/seed                 add a data set in the Seed format (Fake.ApplySeed)
//	POST   /_fake/reset                replace the fake with a fresh one from the
//	                                   build function: state, faults and logs as at start
//
// Answers: 200 with JSON for reads, 201 with the new fault's id, 204 for
// other writes, 400 for a malformed body, 404 for an unknown admin route
// or method. The admin routes have the size limits of the service's routes
// (431, 414, 413): fakehttp.MaxJSONBody for their bodies, maxSeedBody for
// a seed. Errors carry {"error": "<code>", "message": "..."} like the
// fake's service routes.
//
// The admin API can read every request and create state, so by default it
// answers only requests from a loopback address (403 otherwise); see
// AllowRemote. So that a web page or a webhook delivery cannot drive
// it, it also refuses (403) a Host that is not a loopback address unless
// AllowRemote, an Origin other than its own, and the fake's own
// deliveries, and (415) a body without Content-Type application/json.
type Admin struct {
	// AllowRemote lets the admin API answer requests from any address and
	// with any Host, not only loopback ones. Set it before serving.
	AllowRemote bool

	build func() *fake.Fake
	mux   *http.ServeMux

	mu sync.RWMutex
	f  *fake.Fake
}

// New builds a Fake with build and serves it with the admin API.
// build is called again on every reset; it should return a fake with the
// same options each time (a new ManualClock included, if it uses one).
func New(build func() *fake.Fake) *Admin {
	a := &Admin{build: build, f: build(), mux: http.NewServeMux()}
	a.routes()
	return a
}

// Fake returns the fake currently served; a reset replaces it.
func (a *Admin) Fake() *fake.Fake {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.f
}

// SetURL tells the served fake, and every fake a reset builds, where it is
// served (see Fake.SetURL).
func (a *Admin) SetURL(u string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.f.SetURL(u)
}

// Reset replaces the served fake by a fresh one from the build function and
// closes the old one. Requests already in progress finish on the old one.
func (a *Admin) Reset() {
	nf := a.build()
	a.mu.Lock()
	old := a.f
	nf.SetURL(old.URL())
	a.f = nf
	a.mu.Unlock()
	old.Close()
}

// Close closes the served fake.
func (a *Admin) Close() { a.Fake().Close() }

// ServeHTTP serves the admin API under /_fake/ and the fake elsewhere.
func (a *Admin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, fakehttp.AdminPrefix) && r.URL.Path != strings.TrimSuffix(fakehttp.AdminPrefix, "/") {
		a.Fake().ServeHTTP(w, r)
		return
	}
	if !a.AllowRemote && !loopback(r.RemoteAddr) {
		writeError(w, http.StatusForbidden, "forbidden", "the admin API answers loopback clients only")
		return
	}
	limit := int64(fakehttp.MaxJSONBody)
	if r.URL.Path == fakehttp.AdminPrefix+"seed" {
		limit = maxSeedBody
	}
	rec := &fakehttp.Recorder{ResponseWriter: w}
	if !fakehttp.LimitRequest(rec, r, limit) {
		return
	}
	if status, code, msg := a.refuseBrowserOrDelivery(r); status != 0 {
		writeError(w, status, code, "%s", msg)
		return
	}
	a.mux.ServeHTTP(rec, r)
}

// refuseBrowserOrDelivery returns the status and message that refuse r
// when a web page or a webhook delivery could have sent it, and 0 when r
// may go on:
//
//   - the Host must name a loopback address (localhost or a loopback IP),
//     so that a page on a name that resolves to 127.0.0.1 (DNS rebinding)
//     cannot drive it; AllowRemote lifts this check;
//   - an Origin header, which browsers send, must be the admin API's own
//     origin (the same host and port as Host), so that a page on another
//     origin cannot post to it (CSRF);
//   - a request with a body or a Content-Type must be JSON
//     (application/json), which a page cannot send cross-origin without
//     the browser asking first;
//   - a request the fake's own webhook deliveries sent (their User-Agent)
//     is refused, so that a subscriber's callback never reaches an admin
//     route whatever address it went through.
func (a *Admin) refuseBrowserOrDelivery(r *http.Request) (status int, code, msg string) {
	if r.Header.Get("User-Agent") == fakehttp.DeliveryUserAgent {
		return http.StatusForbidden, "forbidden", "the admin API does not answer webhook deliveries"
	}
	if !a.AllowRemote && !fakehttp.LoopbackHost(r.Host) {
		return http.StatusForbidden, "forbidden", fmt.Sprintf("the admin API answers only requests whose Host is a loopback address (localhost, 127.0.0.1, [::1]), not %.100q", r.Host)
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !strings.EqualFold(u.Host, r.Host) {
			return http.StatusForbidden, "forbidden", fmt.Sprintf("the admin API answers no request from another origin (Origin %.100q)", o)
		}
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" && r.ContentLength == 0 {
		return 0, "", ""
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return http.StatusUnsupportedMediaType, "unsupported_media_type", fmt.Sprintf("an admin request with a body must have Content-Type application/json, not %.100q", ct)
	}
	return 0, "", ""
}

func loopback(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// adminRoute is one route of the admin API.
type adminRoute struct {
	method, path string
	handle       http.HandlerFunc
}

// routeTable lists the admin routes; openapi.json describes the same
// set (TestAdminOpenAPIMatchesRoutes).
func (a *Admin) routeTable() []adminRoute {
	p := strings.TrimSuffix(fakehttp.AdminPrefix, "/")
	done := func(fn func()) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			fn()
			w.WriteHeader(http.StatusNoContent)
		}
	}
	return []adminRoute{
		{"GET", p + "/health", a.health},
		{"GET", p + "/openapi.json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(adminOpenAPI)
		}},
		{"GET", p + "/faults", a.listFaults},
		{"POST", p + "/faults", a.addFault},
		{"DELETE", p + "/faults", done(func() { a.Fake().ClearFaults() })},
		{"DELETE", p + "/faults/{id}", a.removeByID((*fake.Fake).RemoveFault, "no fault %q in force")},
		{"GET", p + "/clock", a.clock},
		{"POST", p + "/clock/advance", a.advance},
		{"GET", p + "/requests", a.requests},
		{"DELETE", p + "/requests", done(func() { a.Fake().ResetRequests() })},
		{"GET", p + "/deliveries", a.deliveries},
		{"DELETE", p + "/deliveries", done(func() { a.Fake().ResetDeliveries() })},
		{"POST", p + "/tokens/expire", done(func() { a.Fake().ExpireTokens() })},
		{"GET", p + "/integrations", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, a.Fake().Integrations())
		}},
		{"GET", p + "/objects/{id}", a.getObject},
		{"PATCH", p + "/objects/{id}", a.updateObject},
		{"DELETE", p + "/objects/{id}", a.removeByID((*fake.Fake).DeleteObject, "no object %q")},
		{"POST", p + "/seed", a.seed},
		{"POST", p + "/reset", done(a.Reset)},
	}
}

func (a *Admin) routes() {
	for _, rt := range a.routeTable() {
		a.mux.HandleFunc(rt.method+" "+rt.path, rt.handle)
	}
	a.mux.HandleFunc(fakehttp.AdminPrefix, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no admin route %s %s", r.Method, r.URL.Path)
	})
}

func (a *Admin) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "now": a.Fake().Now()})
}

// adminFault is a Fault on the admin API's wire.
type adminFault struct {
	ID         string     `json:"id,omitempty"` // in answers only
	Method     string     `json:"method,omitempty"`
	Path       string     `json:"path,omitempty"`
	Times      int        `json:"times,omitempty"`
	Status     int        `json:"status,omitempty"`
	RetryAfter string     `json:"retry_after,omitempty"`
	Message    string     `json:"message,omitempty"`
	Latency    string     `json:"latency,omitempty"`
	Drop       bool       `json:"drop,omitempty"`
	DropAfter  bool       `json:"drop_after,omitempty"`
	Truncate   bool       `json:"truncate,omitempty"`
	Dribble    string     `json:"dribble,omitempty"`
	Page       *adminPage `json:"page,omitempty"`
	Redeliver  bool       `json:"redeliver,omitempty"`
	DropAnswer bool       `json:"drop_answer,omitempty"`
	// OncePerDelivery is Fault.OncePerDelivery.
	OncePerDelivery bool `json:"once_per_delivery,omitempty"`
}

// adminPage is Fault.PageNumber and Fault.PageSize on the wire.
type adminPage struct {
	Number int64 `json:"number"`
	Size   int64 `json:"size"`
}

func (a *Admin) listFaults(w http.ResponseWriter, r *http.Request) {
	out := []adminFault{}
	for _, ft := range a.Fake().Faults() {
		af := adminFault{ID: ft.ID, Method: ft.Method, Path: ft.Path, Times: ft.Times, Status: ft.Status,
			RetryAfter: ft.RetryAfter, Message: ft.Message, Drop: ft.Drop, DropAfter: ft.DropAfter, Truncate: ft.Truncate,
			Redeliver: ft.Redeliver, DropAnswer: ft.DropAnswer, OncePerDelivery: ft.OncePerDelivery}
		if ft.PageSize != 0 {
			af.Page = &adminPage{Number: ft.PageNumber, Size: ft.PageSize}
		}
		if ft.Latency > 0 {
			af.Latency = ft.Latency.String()
		}
		if ft.Dribble > 0 {
			af.Dribble = ft.Dribble.String()
		}
		out = append(out, af)
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *Admin) addFault(w http.ResponseWriter, r *http.Request) {
	var af adminFault
	if err := readStrictJSON(r, &af); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "%s", err.Error())
		return
	}
	if af.ID != "" {
		writeError(w, http.StatusBadRequest, "invalid_request", "id is chosen by the fake: leave it out")
		return
	}
	ft, msg := af.fault()
	if msg != "" {
		writeError(w, http.StatusBadRequest, "invalid_request", "%s", msg)
		return
	}
	id := a.Fake().InjectFault(ft)
	writeJSON(w, http.StatusCreated, map[string]string{"id": id})
}

// parseDurations sets ft's latency and dribble from af's texts, or returns
// a message saying which is not a duration.
func parseDurations(ft *fake.Fault, af adminFault) string {
	for _, d := range []struct {
		name, text string
		dst        *time.Duration
	}{{"latency", af.Latency, &ft.Latency}, {"dribble", af.Dribble, &ft.Dribble}} {
		if d.text == "" {
			continue
		}
		v, err := time.ParseDuration(d.text)
		if err != nil || v < 0 {
			return fmt.Sprintf("%s %q is not a duration such as \"250ms\"", d.name, d.text)
		}
		*d.dst = v
	}
	return ""
}

// fault checks af and returns it as a fake.Fault, or a message saying
// what is wrong.
func (af adminFault) fault() (fake.Fault, string) {
	ft := fake.Fault{Method: strings.ToUpper(af.Method), Path: af.Path, Times: af.Times, Status: af.Status,
		RetryAfter: af.RetryAfter, Message: af.Message, Drop: af.Drop, DropAfter: af.DropAfter, Truncate: af.Truncate,
		Redeliver: af.Redeliver, DropAnswer: af.DropAnswer, OncePerDelivery: af.OncePerDelivery}
	if p := af.Page; p != nil {
		if p.Number < 0 || p.Size < 1 {
			return ft, fmt.Sprintf("page number %d, size %d: want a number of 0 or more and a size of 1 or more", p.Number, p.Size)
		}
		ft.PageNumber, ft.PageSize = p.Number, p.Size
	}
	if msg := parseDurations(&ft, af); msg != "" {
		return ft, msg
	}
	return ft, checkFault(ft)
}

// checkFault returns what is wrong with ft's path, status and effect, or
// "".
func checkFault(ft fake.Fault) string {
	if ft.Path != "" {
		if _, err := path.Match(ft.Path, "/"); err != nil {
			return fmt.Sprintf("path %q is not a valid pattern: %v", ft.Path, err)
		}
	}
	if ft.Status != 0 && (ft.Status < 100 || ft.Status > 599) {
		return fmt.Sprintf("status %d is not an HTTP status", ft.Status)
	}
	return checkEffects(ft)
}

// checkEffects returns what is wrong with ft's effects: none, or effects
// on requests and on deliveries together; "" when nothing is.
func checkEffects(ft fake.Fault) string {
	onRequests := ft.Status != 0 || ft.Latency != 0 || ft.Drop || ft.DropAfter || ft.Truncate || ft.Dribble != 0
	switch {
	case ft.Redeliver || ft.DropAnswer:
		return checkDeliveryFault(ft, onRequests || ft.PageSize != 0)
	case ft.OncePerDelivery:
		return "once_per_delivery goes with redeliver or drop_answer, the faults on webhook deliveries"
	case !onRequests:
		return "a fault needs a status, a latency, drop, drop_after, truncate or dribble (on requests), or redeliver or drop_answer (on webhook deliveries)"
	}
	return ""
}

// checkDeliveryFault returns what is wrong with ft, a fault on webhook
// deliveries; onRequests says it has effects on requests too.
func checkDeliveryFault(ft fake.Fault, onRequests bool) string {
	switch {
	case onRequests:
		return "redeliver and drop_answer act on webhook deliveries: inject a fault on requests (status, latency, drop, drop_after, truncate, dribble, page) on its own"
	case ft.Redeliver && ft.DropAnswer:
		return "redeliver and drop_answer are two faults: inject each on its own"
	case ft.Method != "" && ft.Method != http.MethodPost:
		return fmt.Sprintf("method %s: a fault on webhook deliveries matches their POST only", ft.Method)
	}
	return ""
}

// removeByID answers DELETE .../{id}: 204 when remove found the id, else
// 404 with notFound (a format taking the id).
func (a *Admin) removeByID(remove func(f *fake.Fake, id string) bool, notFound string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if !remove(a.Fake(), id) {
			writeError(w, http.StatusNotFound, "not_found", notFound, id)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

func (a *Admin) clock(w http.ResponseWriter, r *http.Request) {
	f := a.Fake()
	_, manual := f.Clock().(*fake.ManualClock)
	writeJSON(w, http.StatusOK, map[string]any{"now": f.Now(), "manual": manual})
}

func (a *Admin) advance(w http.ResponseWriter, r *http.Request) {
	var body struct {
		By string `json:"by"`
	}
	if err := readStrictJSON(r, &body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "%s", err.Error())
		return
	}
	d, err := time.ParseDuration(body.By)
	if err != nil || d < 0 {
		writeError(w, http.StatusBadRequest, "invalid_request", "by %q is not a non-negative duration such as \"90s\"", body.By)
		return
	}
	f := a.Fake()
	mc, ok := f.Clock().(*fake.ManualClock)
	if !ok {
		writeError(w, http.StatusConflict, "real_clock", "the fake runs on the real clock; start it with a manual clock to advance time")
		return
	}
	mc.Advance(d)
	writeJSON(w, http.StatusOK, map[string]any{"now": f.Now(), "manual": true})
}

// adminRequest is a LoggedRequest on the admin API's wire.
type adminRequest struct {
	Time     time.Time `json:"time"`
	Method   string    `json:"method"`
	Path     string    `json:"path"`
	Query    string    `json:"query,omitempty"`
	ClientID string    `json:"client_id,omitempty"`
	Env      string    `json:"env,omitempty"`
	Status   int       `json:"status"`
	Fault    string    `json:"fault,omitempty"`
}

func (a *Admin) requests(w http.ResponseWriter, r *http.Request) {
	method, pattern := strings.ToUpper(r.URL.Query().Get("method")), r.URL.Query().Get("path")
	if pattern != "" {
		if _, err := path.Match(pattern, "/"); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request", "path %q is not a valid pattern: %v", pattern, err)
			return
		}
	}
	out := []adminRequest{}
	for _, e := range a.Fake().Requests() {
		if method != "" && e.Method != method {
			continue
		}
		if pattern != "" {
			if ok, _ := path.Match(pattern, e.Path); !ok {
				continue
			}
		}
		out = append(out, adminRequest{Time: e.Time, Method: e.Method, Path: e.Path, Query: e.Query,
			ClientID: e.ClientID, Env: e.Env, Status: e.Status, Fault: e.Fault})
	}
	writeJSON(w, http.StatusOK, out)
}

// adminDelivery is a DeliveryAttempt on the admin API's wire.
type adminDelivery struct {
	DeliveryID    string            `json:"delivery_id"`
	SubscriberID  string            `json:"subscriber_id"`
	Event         string            `json:"event"`
	ObjectID      string            `json:"object_id,omitempty"`
	URL           string            `json:"url"`
	Attempt       int               `json:"attempt"`
	Time          time.Time         `json:"time"`
	Status        int               `json:"status,omitempty"`
	Err           string            `json:"error,omitempty"`
	Delivered     bool              `json:"delivered"`
	Final         bool              `json:"final"`
	Dropped       bool              `json:"dropped,omitempty"`
	Payload       map[string]string `json:"payload"`
	Redelivery    bool              `json:"redelivery,omitempty"`
	AnswerDropped bool              `json:"answer_dropped,omitempty"`
}

func (a *Admin) deliveries(w http.ResponseWriter, r *http.Request) {
	f := a.Fake()
	if ws := r.URL.Query().Get("wait"); ws != "" {
		d, err := time.ParseDuration(ws)
		if err != nil || d < 0 {
			writeError(w, http.StatusBadRequest, "invalid_request", "wait %q is not a duration such as \"5s\"", ws)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), d)
		err = f.WaitDeliveries(ctx)
		cancel()
		if err != nil && r.Context().Err() == nil {
			w.Header().Set("X-Fake-Deliveries-Pending", "true")
		}
	}
	out := []adminDelivery{}
	for _, d := range f.Deliveries() {
		out = append(out, adminDelivery{DeliveryID: d.DeliveryID, SubscriberID: d.SubscriberID, Event: d.Event,
			ObjectID: d.ObjectID, URL: d.URL, Attempt: d.Attempt, Time: d.Time, Status: d.Status, Err: d.Err,
			Delivered: d.Delivered, Final: d.Final, Dropped: d.Dropped, Payload: d.Payload,
			Redelivery: d.Redelivery, AnswerDropped: d.AnswerDropped})
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *Admin) getObject(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	o, ok := a.Fake().Object(id)
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "no object %q", id)
		return
	}
	writeJSON(w, http.StatusOK, o)
}

func (a *Admin) updateObject(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Fields map[string]any `json:"fields"`
	}
	if err := readStrictJSON(r, &body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "%s", err.Error())
		return
	}
	if len(body.Fields) == 0 {
		writeError(w, http.StatusBadRequest, "invalid_request", `fields is required: {"fields": {"stage": "won"}}`)
		return
	}
	id := r.PathValue("id")
	if !a.Fake().UpdateObject(id, body.Fields) {
		writeError(w, http.StatusNotFound, "not_found", "no object %q", id)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *Admin) seed(w http.ResponseWriter, r *http.Request) {
	s, err := fake.ParseSeed(r.Body) // capped at maxSeedBody by ServeHTTP
	if err == nil {
		err = a.Fake().ApplySeed(s)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_seed", "%s", seedProblem(err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// seedProblem says what is wrong with a seed that ParseSeed or ApplySeed
// refused, without the Go package prefixes their errors carry for Go
// callers ("fake: seed: ", "fake: AddUser: ").
func seedProblem(err error) string {
	if msg, ok := fakehttp.JSONProblem(err, "a seed: integrations, objects, users, reports", &fake.Seed{}); ok {
		return "seed: " + msg
	}
	msg := strings.TrimPrefix(err.Error(), "fake: ")
	return strings.ReplaceAll(msg, "fake: AddUser: ", "")
}

// readStrictJSON reads an admin body, refusing unknown members so that a
// misspelt one is an error rather than silently ignored.
func readStrictJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body) // capped at fakehttp.MaxJSONBody by ServeHTTP
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if msg, ok := fakehttp.JSONProblem(err, "", v); ok {
			return errors.New(msg)
		}
		return errors.New("malformed JSON")
	}
	return nil
}
