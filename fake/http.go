package fake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/partnerapi/partner-go/internal/fakeserver/fakehttp"
)

type ctxKey int

const clientKey ctxKey = iota

// clientID returns the OAuth client that authorized r ("" on public routes).
func clientID(r *http.Request) string {
	id, _ := r.Context().Value(clientKey).(string)
	return id
}

// handle registers h for pattern (a ServeMux pattern such as
// "POST /report/v1/list"). Requests need a valid bearer token whose
// client may use scope; they are logged and pass through injected faults.
// Its body is capped at fakehttp.MaxJSONBody.
func (f *Fake) handle(pattern, scope string, h http.HandlerFunc) {
	f.mux.Handle(pattern, f.wrap(scope, true, true, fakehttp.MaxJSONBody, h))
}

// handleLoad registers a bulk load route: as handle, with the body capped
// at maxLoadBody.
func (f *Fake) handleLoad(pattern, scope string, h http.HandlerFunc) {
	f.mux.Handle(pattern, f.wrap(scope, true, true, maxLoadBody, h))
}

// handlePublic registers h for a route that takes no bearer token (the
// token endpoint), its body capped at maxTokenBody.
func (f *Fake) handlePublic(pattern string, h http.HandlerFunc) {
	f.mux.Handle(pattern, f.wrap("", false, true, maxTokenBody, h))
}

// handleStorage registers h for a route outside the service and its API
// gateway (signed upload URLs): no bearer token, no subscription key, the
// body capped at maxUploadBody.
func (f *Fake) handleStorage(pattern string, h http.HandlerFunc) {
	f.mux.Handle(pattern, f.wrap("", false, false, maxUploadBody, h))
}

// requestEnv is the environment r names: its environment header, or on
// the token endpoint, the query parameter of the header's name that
// token requests carry too.
func (f *Fake) requestEnv(r *http.Request) string {
	if v := r.Header.Get(f.deploy.words.EnvHeader); v != "" || r.URL.Path != "/oauth/token" {
		return v
	}
	return r.URL.Query().Get(f.deploy.words.EnvHeader)
}

// loggedPath is path as the request log keeps it: the id of a signed
// upload URL (/upload/{id}) lets whoever holds it upload in the client's
// place, so it reads ***.
func loggedPath(path string) string {
	if strings.HasPrefix(path, "/upload/") {
		return "/upload/***"
	}
	return path
}

// wrap logs a request, bounds its size (fakehttp.LimitRequest), applies the
// gateway's subscription key check (gateway), injected faults and the
// bearer token check (authorize).
func (f *Fake) wrap(scope string, authorize, gateway bool, maxBody int64, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &fakehttp.Recorder{ResponseWriter: w}
		entry := LoggedRequest{
			Time:   f.clock.Now(),
			Method: clip(r.Method, maxLoggedMethod),
			Path:   clip(loggedPath(r.URL.Path), maxLoggedPath),
			Env:    clip(f.requestEnv(r), maxLoggedEnv),
		}
		if len(r.URL.RawQuery) <= fakehttp.MaxQueryBytes {
			entry.Query = clip(maskQuery(r.URL.Query()), maxLoggedQuery)
		}
		logged := false
		logNow := func() {
			if !logged {
				logged = true
				entry.Status = rec.Status
				f.reqlog.add(entry)
			}
		}
		// Logged before the client can see the end of the answer: as
		// the answer starts, or when the handler returns (the refusals
		// below, small answers the server sends only then); a dropped
		// connection is logged before it is closed.
		defer logNow()
		if !fakehttp.LimitRequest(rec, r, maxBody) {
			entry.Fault = "too-large"
			return
		}
		if maxBody > fakehttp.MaxJSONBody && r.Body != nil && r.Body != http.NoBody {
			r.Body = &stallBody{ReadCloser: r.Body, rc: http.NewResponseController(rec), stall: f.bodyStall()}
		}
		if gateway && f.gatewayRefuses(rec, r) {
			entry.Fault = "subscription-key"
			return
		}
		rec.Start = logNow
		var page *requestedPage
		if f.faults.matchesPages(r.Method, r.URL.Path) {
			page = requestPage(r)
		}
		if ft := f.faults.take(r.Method, r.URL.Path, page); ft != nil {
			if ft.Latency > 0 || ft.Dribble > 0 {
				// A slow answer asked for: no write timeout of the
				// server cuts it (the client's leaving still ends it).
				http.NewResponseController(rec).SetWriteDeadline(time.Time{})
			}
			if ft.Latency > 0 {
				select {
				case <-time.After(ft.Latency):
				case <-r.Context().Done():
					dropConnection(rec)
					return
				case <-f.stop: // the request context may outlive a client that hung up early
					// Nothing is sent: returning without an answer
					// would send an empty 200.
					dropConnection(rec)
					return
				}
			}
			switch {
			case ft.Drop:
				entry.Fault = "drop"
				logNow()
				dropConnection(rec)
				return
			case ft.DropAfter:
				entry.Fault = "drop-after"
				sink := &discardWriter{header: http.Header{}}
				f.serve(sink, r, scope, authorize, h, &entry)
				logNow()
				dropConnection(rec)
				return
			case ft.Truncate || ft.Dribble > 0:
				buf := newBufferedAnswer()
				f.serve(buf, r, scope, authorize, h, &entry)
				if ft.Truncate {
					entry.Fault = "truncate"
					rec.Status = buf.code()
					logNow()
					buf.sendTruncated(rec)
					return
				}
				entry.Fault = "dribble"
				buf.sendDribbled(rec, ft.Dribble, r.Context().Done(), f.stop)
				return
			case ft.Status != 0:
				entry.Fault = strconv.Itoa(ft.Status)
				if ft.RetryAfter != "" {
					w.Header().Set("Retry-After", ft.RetryAfter)
				}
				msg := ft.Message
				if msg == "" {
					msg = "injected fault"
				}
				f.writeErrorFor(rec, r, ft.Status, "injected_fault", msg)
				return
			}
		}
		f.serve(rec, r, scope, authorize, h, &entry)
	})
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request, scope string, authorize bool, h http.HandlerFunc, entry *LoggedRequest) {
	if authorize {
		id, status, msg := f.auth.authorize(r, scope, f.clock.Now())
		entry.ClientID = id
		if status != 0 {
			code := "invalid_token"
			if status == http.StatusForbidden {
				code = "insufficient_scope"
			}
			if status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="partner"`)
			}
			f.writeErrorFor(w, r, status, code, msg)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), clientKey, id))
	}
	h(w, r)
}

func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

type discardWriter struct{ header http.Header }

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}

// The generic answers are fakehttp's, shared with the admin API.
var (
	writeJSON  = fakehttp.WriteJSON
	writeError = fakehttp.WriteError
)

// scimError is the RFC 7644 error body.
type scimError struct {
	Schemas  []string `json:"schemas"`
	Status   string   `json:"status"`
	SCIMType string   `json:"scimType,omitempty"`
	Detail   string   `json:"detail"`
}

const scimErrorSchema = "urn:ietf:params:scim:api:messages:2.0:Error"

// writeSCIMError answers with the SCIM error schema.
func writeSCIMError(w http.ResponseWriter, status int, scimType, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(scimError{
		Schemas:  []string{scimErrorSchema},
		Status:   strconv.Itoa(status),
		SCIMType: scimType,
		Detail:   fmt.Sprintf(format, args...),
	})
}

// writeErrorFor answers in the error shape of r's area.
func (f *Fake) writeErrorFor(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/api/scim/"):
		writeSCIMError(w, status, "", "%s", msg)
	case r.URL.Path == "/oauth/token" && r.Method == http.MethodPost:
		writeJSON(w, status, oauthError{Error: code, Description: msg})
	default:
		writeError(w, status, code, "%s", msg)
	}
}

// decodeJSON reads r's JSON body into v. On failure it has already
// answered 400 with a message saying what is wrong, and returns false.
// A Content-Type other than JSON is refused; a missing one is accepted.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := readJSON(r, v); err != nil {
		if strings.HasPrefix(r.URL.Path, "/api/scim/") {
			writeSCIMError(w, http.StatusBadRequest, "invalidSyntax", "%s", err.Error())
		} else {
			writeError(w, http.StatusBadRequest, "invalid_request", "%s", err.Error())
		}
		return false
	}
	return true
}

// decodeProblem is the error to answer for a JSON body of r that
// decoding into v refused with err, in the published member names and
// JSON's words.
func decodeProblem(r *http.Request, err error, v any) error {
	if errors.As(err, new(*memberError)) {
		return err
	}
	if msg, ok := fakehttp.JSONProblem(err, publishedBody(r), v); ok {
		return errors.New(msg)
	}
	return errors.New("malformed JSON")
}

func readJSON(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !(mt == "application/json" || strings.HasSuffix(mt, "+json")) {
			return fmt.Errorf("Content-Type %q is not JSON", ct)
		}
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, fakehttp.MaxJSONBody+1))
	if err := dec.Decode(v); err != nil {
		return decodeProblem(r, err, v)
	}
	if dec.More() {
		return errors.New("malformed JSON: data after the JSON value")
	}
	return nil
}

// stallBody is the body of a bulk load or an upload, which may be far
// longer than a server's read timeout lets arrive: it is bounded by its
// progress instead. Before each read it moves the connection's read
// deadline to stall from now, so that a body that sends nothing for stall
// ends the request (its read fails, the load changes nothing and its
// spool is removed), and it lifts the write deadline while the body is
// taken and loaded: the answer, a few hundred bytes, follows. A
// connection without deadlines (a handler called in process) is read as
// it is. A read's error is kept and returned by every later read: a body
// of a Content-Length is read through a reader that does not keep it, and
// the drain of a refused load would otherwise wait a second stall.
type stallBody struct {
	io.ReadCloser
	rc       *http.ResponseController
	stall    time.Duration
	started  bool
	deadline bool
	err      error
}

func (b *stallBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if !b.started {
		b.started = true
		b.deadline = b.rc.SetWriteDeadline(time.Time{}) == nil
	}
	if b.deadline {
		b.rc.SetReadDeadline(time.Now().Add(b.stall))
	}
	n, err := b.ReadCloser.Read(p)
	b.err = err
	return n, err
}

// withBodyStall sets how long a load's or upload's body may send
// nothing (bodyStall by default), for tests.
func withBodyStall(d time.Duration) Option { return func(f *Fake) { f.bulk.stallFor = d } }

// bodyStall is how long a load's or upload's body may send nothing.
func (f *Fake) bodyStall() time.Duration {
	if d := f.bulk.stallFor; d > 0 {
		return d
	}
	return bodyStall
}
