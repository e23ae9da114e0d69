// Package fake is an in-memory implementation of the Partner Integration
// Service, for tests. A test needs five things from it:
//
//	// Start it (NewServer, or New for a bare http.Handler) and point a client at it.
//	clock := fake.NewManualClock(time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC))
//	srv := fake.NewServer(fake.WithDemoData(), fake.WithClock(clock))
//	defer srv.Close()
//	c, err := partner.New(partner.WithConnection(srv.Connection())) // its URL, credentials and words
//
//	// Seed it: WithDemoData (ids in package fake/demo), or AddObject, AddUser,
//	// AddReport, AddIntegration, SetUserAttributes, ApplySeed.
//	id := srv.AddObject(fake.Object{Type: "opportunity", Fields: map[string]any{"stage": "open"}})
//
//	// Read its state: Object, Objects, User, Users, BulkExecutions, Subscribers,
//	// Deliveries (WaitDeliveries first), Audits, Requests and CountRequests.
//	o, _ := srv.Object(id)
//
//	// Inject a fault: a status, latency, a dropped or cut answer on matching requests.
//	srv.InjectFault(fake.Fault{Method: "POST", Path: "/report/v1/list", Status: 503, Times: 1})
//
//	// Move its clock: bulk executions run DefaultBulkDelay (WithBulkDelay), views are ready
//	// after ViewPendingFor+ViewRunningFor (WithViewDelay), tokens expire (or ExpireTokens).
//	clock.Advance(fake.DefaultBulkDelay)
//
// It holds real state (clients and tokens, users, reports, objects,
// integrations, bulk executions, subscribers), moves asynchronous work
// through its states over time, answers bad input with the statuses the
// interface documents, and can be told to fail. It is an independent
// implementation of the interface: it has its own wire types and imports
// no package of the SDK but package deployment (the plain-string words it
// hands a test in Connection), so a mistake in the SDK's JSON cannot be
// mirrored here. The examples show each of the five at work.
//
// # Options
//
// By default the fake speaks the interface's neutral words and behaves as
// the deployed service does where the two differ (docs/deployed-service.md):
// flat webhook deliveries, no OAuth scopes, only the SCIM filter the
// service documents. WithWords gives it a deployment's own words
// (deployment.Words, the client's), and WithDeployment an API gateway's
// subscription key and the variants of the published descriptions
// (Deployment), so that a team runs its tests with its production
// configuration. WithFullSCIMFilter (every RFC 7644 filter),
// WithScopeChecks, WithDeliveryEnvelope, WithViewStatusDetail and
// WithSCIMFullResources are the fake's own extensions, off by default.
//
// cmd/partnerfake serves the fake for tests in other languages, with an
// HTTP admin API under /_fake/ (internal/fakeserver/fakeadmin) and a seed file in the
// Seed format (ParseSeed, ApplySeed), which uses the fake's own
// Integration, Object, User and Report types with their JSON names.
//
// # Answers: the published members, and the fake's own
//
// By default an answer carries only the members the interface or the
// deployed service's published descriptions show, so that an SDK that
// reads a member production does not send fails against the fake too.
// Members beyond them are options, off by default, the fake's own:
//
//   - WithViewStatusDetail: viewId, reportId, version and createdAt beside
//     viewStatus in the view status answer.
//   - WithSCIMFullResources: name, displayName, emails and unmodelled
//     members in SCIM reads (the answers of create and replace echo those
//     the request carried), meta's created, lastModified, location and
//     version, and the listing's itemsPerPage. With these reads a PUT
//     replaces the whole user (RFC 7644); by default, as the reads do not
//     return those members, a PUT keeps the stored ones it does not
//     carry, so that a read-modify-write (scim.Service.Suspend) loses
//     nothing.
//   - WithDeliveryEnvelope: envelope members in webhook deliveries and in
//     the event schemas.
//
// Fake.Extensions names the first two when they are on.
//
// Where the service publishes a route but not its answer, the fake
// answers a shape of its own, documented with the route: report metadata
// and data schema, view metadata (reports_metadata.go), chart metadata
// ({"reportId", "reportVersion", "reportName", "charts": [{"id",
// "version", "name", "chartType", "groupBy": {"colId", "name", "type"},
// "valueField"}]}), the event schemas ({"schema": <JSON Schema>}, the
// member the deployed service's connector reads), and error bodies: RFC
// 7644's SCIM error ({"schemas", "status", "scimType", "detail"}) in the
// SCIM area, {"error", "message"} outside it and the token endpoint.
//
// # Object types
//
// Objects (audit status, external ids, bulk loads, object-backed reports,
// events) have a type, an open string: the fake stores objects of any
// type. Two types come with more out of the box:
//
//   - "opportunity": external ids go to sales_details.crm_opportunity_id
//     when a link names no field; bulk rows check amount and probability
//     (numbers), close_date (a date), name and stage (text); the
//     deployment's referral field (Connection().Words.ReferralField) is
//     listed with the external ids.
//   - "account": external ids go to account_info.external_account_id;
//     bulk rows check employees and annual_revenue (numbers) and name
//     (text).
//
// Other types work the same way, except that an external-id link must
// name its field and bulk rows are not checked beyond their key, until
// SetBulkFieldKind declares fields. A bulk load writes objects of its
// integration's ObjectType, matched on its KeyField. A row's columns (the
// CSV header's names, a JSON row's member names) are the object's fields
// by dotted name, the key field among them: a CSV for the demo
// opportunities starts "sales_details.crm_opportunity_id,name,stage,amount".
// An empty cell changes nothing.
//
// # Events
//
// Every change to a stored object goes to the subscribers of its kind
// (object.all takes all four), once to each subscriber, as the most
// specific kind it subscribes to (DeliveryPolicy says how):
//
//   - object.create: AddObject, a seed's object (ApplySeed,
//     POST /_fake/seed; also when it replaces an object of the same id),
//     a bulk row whose key matches no stored object.
//   - object.update: UpdateObject, PATCH /_fake/objects/{id}, a bulk row
//     that changes a stored object (a row with the values stored counts
//     as skipped and fires nothing), an audit status or an external id
//     written through PATCH /app/v1/object/{object_id}/audit or
//     /external_id. Only a change of value fires: setting a
//     field to the value it has fires nothing.
//   - object.stage_change: an object.update whose changes include the
//     stage field.
//   - The referral event (Connection().Words.ReferralEvent): an
//     object.update that sets the referral field
//     (Connection().Words.ReferralField) of an opportunity.
//   - object.delete: DeleteObject, DELETE /_fake/objects/{id}.
package fake

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partnerapi/partner-go/internal/fakeserver/fakehttp"
)

// The client registered when no WithClient option is given.
const (
	DefaultClientID     = "partner-test-client"
	DefaultClientSecret = "partner-test-secret"
)

// Scopes a client may be limited to when WithScopeChecks is given (by
// default the fake checks no scopes). A client registered without scopes
// may use every area.
const (
	scopeSCIM    = "scim"
	scopeUsers   = "users"
	scopeReports = "reports"
	scopeObjects = "objects"
	scopeBulk    = "bulk"
	scopeEvents  = "events"
)

// Fake is the service as an http.Handler. Its methods seed and inspect
// state and inject faults; all are safe for concurrent use.
type Fake struct {
	clock    Clock
	mux      *http.ServeMux
	handler  http.Handler // mux inside the WithMiddleware wrappers
	wrappers []func(http.Handler) http.Handler
	demo     bool
	lifetime time.Duration
	deploy   deploySettings // words, gateway key, optional checks (deployment.go)
	hosts    []string       // Host names NewServer admits besides loopback ones (WithAllowedHosts)

	auth    authStore
	faults  faultStore
	reqlog  requestLog
	objects objectStore
	integ   integrationStore

	scim    scimStore
	users   usersStore
	reports reportsStore
	bulk    bulkStore
	events  eventsStore

	objectsArea objectsStore // audit history and external-id fields

	// serverURL is set when the fake runs behind NewServer or SetURL;
	// areas that build absolute URLs (signed uploads, SCIM locations) read
	// its address from it while SetURL may change it.
	serverURL atomic.Pointer[string]
	closers   []func()
	stop      chan struct{} // closed by Close
	closeOnce sync.Once
	// connClient is the id and secret of the first client registered
	// (WithClient, else the default client), which Connection names.
	connClient [2]string
}

// Option configures a Fake.
type Option func(*Fake)

// WithClient registers an OAuth client. Without scopes it may use every
// area; with scopes and WithScopeChecks, only the areas named ("scim",
// "reports", ...: see WithScopeChecks); without WithScopeChecks the
// scopes are ignored. Without any WithClient option the fake registers
// DefaultClientID/DefaultClientSecret.
func WithClient(id, secret string, scopes ...string) Option {
	return func(f *Fake) {
		f.auth.register(id, secret, scopes)
		if f.connClient[0] == "" {
			f.connClient = [2]string{id, secret}
		}
	}
}

// DefaultTokenLifetime is the lifetime of access tokens unless
// WithTokenLifetime says otherwise.
const DefaultTokenLifetime = time.Hour

// WithTokenLifetime sets the lifetime of access tokens (default
// DefaultTokenLifetime).
func WithTokenLifetime(d time.Duration) Option { return func(f *Fake) { f.lifetime = d } }

// WithClock makes the fake read time from c; pass a *ManualClock to drive
// expiry and asynchronous work step by step. On a ManualClock a bulk
// execution (unless WithBulkDelay(0)) and a report view stay in their
// first state until the clock is advanced: a wait on them (an SDK's
// WaitExecution, WaitView or Export) made on the goroutine that would
// advance it lasts until its context ends.
func WithClock(c Clock) Option { return func(f *Fake) { f.clock = c } }

// WithDemoData seeds the demo data set, the one cmd/partnerfake serves,
// whose ids package fake/demo names:
//
//   - integrations (id: object type, bulk key field):
//     demo.OpportunityIntegration "int-demo-opportunities": opportunity,
//     sales_details.crm_opportunity_id;
//     demo.AccountIntegration "int-demo-accounts": account,
//     account_info.external_account_id. A bulk row without a value in the
//     key field fails.
//   - objects: opportunities demo.Opportunity1 to 3, accounts demo.Account1
//     and 2;
//   - users demo.User1 to 3 (the third suspended), user attributes in
//     demo.Namespace;
//   - reports: demo.ReportPipeline (backed by the opportunities),
//     demo.ReportPartners, demo.ReportDraft and demo.ReportLarge
//     (demo.ReportLargeRows rows, generated).
func WithDemoData() Option { return func(f *Fake) { f.demo = true } }

// WithMiddleware wraps the fake's handler in mw: every request to the
// service's routes passes through it, for a test's own checks or logging
// (the module's own tests check each exchange against the service's
// contract this way). Given several times, the first is outermost.
func WithMiddleware(mw func(http.Handler) http.Handler) Option {
	return func(f *Fake) { f.wrappers = append(f.wrappers, mw) }
}

// New returns the fake as a bare http.Handler, for hosting it yourself.
func New(opts ...Option) *Fake {
	f := &Fake{clock: realClock{}, lifetime: DefaultTokenLifetime, mux: http.NewServeMux(), stop: make(chan struct{})}
	f.auth.init()
	for _, o := range opts {
		o(f)
	}
	f.deploy.defaults()
	f.auth.checkScopes = f.deploy.scopeChecks
	if len(f.auth.clients) == 0 {
		f.auth.register(DefaultClientID, DefaultClientSecret, nil)
		f.connClient = [2]string{DefaultClientID, DefaultClientSecret}
	}
	f.objects.init()
	f.integ.init()
	f.registerAuth()
	f.registerSCIM()
	f.registerUsers()
	f.registerReports()
	f.registerObjects()
	f.registerBulk()
	f.registerEvents()
	f.handler = f.mux
	for _, mw := range slices.Backward(f.wrappers) {
		f.handler = mw(f.handler)
	}
	if f.demo {
		f.seedDemo()
	}
	return f
}

// Extensions names the options that are on which add members to the
// answers of the service's operations ("WithSCIMFullResources",
// "WithViewStatusDetail"), by the names api/openapi.yaml marks those
// members with (x-fake-extension), for a contract check; none by default.
func (f *Fake) Extensions() []string {
	var on []string
	if f.scim.fullResources {
		on = append(on, "WithSCIMFullResources")
	}
	if f.deploy.viewStatusDetail {
		on = append(on, "WithViewStatusDetail")
	}
	return on
}

// ServeHTTP serves the interface.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) { f.handler.ServeHTTP(w, r) }

// Now is the fake's current time.
func (f *Fake) Now() time.Time { return f.clock.Now() }

// URL is the base URL the fake is served at, when it runs behind
// NewServer or SetURL was called; otherwise "".
func (f *Fake) URL() string {
	if u := f.serverURL.Load(); u != nil {
		return *u
	}
	return ""
}

// Clock returns the clock the fake reads time from (WithClock): a
// *ManualClock when it runs on one, for code that serves a fake built
// elsewhere and moves its time.
func (f *Fake) Clock() Clock { return f.clock }

// SetURL tells a fake hosted by its caller where it is served, so that the
// absolute URLs it hands out (signed uploads) point at it.
// It is safe to call while the fake serves requests.
func (f *Fake) SetURL(u string) { f.serverURL.Store(&u) }

// Close stops the fake's background work (webhook deliveries). NewServer's
// Close calls it.
func (f *Fake) Close() {
	f.closeOnce.Do(func() {
		close(f.stop)
		for _, c := range f.closers {
			c()
		}
	})
}

// Server is a Fake listening on a loopback address.
type Server struct {
	*Fake
	// URL is the base URL of the server, e.g. "http://127.0.0.1:41234".
	URL string
	ts  *httptest.Server
}

// NewServer starts a Fake on a loopback port. Close it when done. It
// answers only requests whose Host is a loopback name or address
// (localhost, a name under .localhost, 127.0.0.0/8, ::1, with or without
// a port) or one WithAllowedHosts names, and whose Origin, when there is
// one, is too: other requests get 403, so that a web page whose name is
// rebound to 127.0.0.1 cannot drive it. It answers no CORS.
func NewServer(opts ...Option) *Server {
	f := New(opts...)
	ts := httptest.NewUnstartedServer(fakehttp.LocalOnly(f, f.hosts))
	ts.Config.MaxHeaderBytes = fakehttp.MaxHeaderBytes
	ts.Start()
	f.SetURL(ts.URL)
	return &Server{Fake: f, URL: ts.URL, ts: ts}
}

// WithAllowedHosts names hosts (without port) that NewServer admits as
// the Host of a request besides loopback names and addresses, for a setup
// that reaches it by another name (a container network's name for the
// host); partnerfake's -allow-host does the same. A fake served by the
// caller's own server is not affected.
func WithAllowedHosts(hosts ...string) Option {
	return func(f *Fake) { f.hosts = append(f.hosts, hosts...) }
}

// Close stops the server and the fake's background work.
func (s *Server) Close() {
	s.Fake.Close()
	s.ts.CloseClientConnections()
	s.ts.Close()
}

// newID returns an unguessable identifier with a prefix.
func newID(prefix string, nbytes int) string {
	b := make([]byte, nbytes)
	if _, err := rand.Read(b); err != nil {
		panic("fake: crypto/rand: " + err.Error())
	}
	return prefix + hex.EncodeToString(b)
}

func (f *Fake) seedDemo() {
	f.seedCoreDemo()
	f.seedSCIMDemo()
	f.seedUsersDemo()
	f.seedReportsDemo()
	f.seedObjectsDemo()
	f.seedBulkDemo()
	f.seedEventsDemo()
}
