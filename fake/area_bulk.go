package fake

// The bulk area of the fake: loads (POST /bulk/v1/bulkload
// and /bulk/v1/bulkload_opportunity, each taking a body or an attached
// file), execution status, and signed upload URLs hosted by the fake
// itself.
//
// A load reads its body twice. The first pass parses it as it streams
// (CSV, JSON array, XLSX) and writes nothing: a malformed body is refused
// with a 400 (413 past a size) and changes nothing, and records no
// execution. The body is kept for the second pass in a spool
// (bulk_spool.go): in memory up to 4 MiB, past it in a temporary file in
// os.TempDir, removed when the load ends; a file the fake already holds
// (an upload, or an XLSX body, which is held whole) is read twice as it
// is. The second pass checks each row and writes the valid rows into the
// object store (an upsert by the integration's key field) in batches of
// 1,000 rows (or 4 MiB) as it reads them, so that a load holds a record,
// a batch and at most 4 MiB of spool, not its body. The execution
// then reports `running` until the bulk delay (WithBulkDelay, default 1s)
// has passed on the fake's clock, and `completed` with its counts after.
//
// This file holds the area's state, options, execution status and the
// lookups its routes share; the loads are in bulk_load.go (rows parsed in
// bulk_parse.go, workbooks read in bulk_xlsx.go, checked and written in
// bulk_rows.go, kept between the passes in bulk_spool.go), the signed
// upload URLs in bulk_upload.go.

import (
	"fmt"
	"maps"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Bulk limits of the fake (the interface shows none).
const (
	// DefaultBulkDelay is how long an execution stays running.
	DefaultBulkDelay = time.Second
	// bulkUploadTTL is how long a signed upload URL and its token live.
	bulkUploadTTL = 15 * time.Minute
	// maxUploadSize caps a file sent to a signed upload URL, kept in memory.
	maxUploadSize = 256 << 20
	// maxKeptErrors caps the row errors an execution remembers, each
	// capped in bytes (maxErrorText, maxErrorRow).
	maxKeptErrors = 1000
	// maxKeptErrorBytes caps the bytes of the row errors of all
	// executions: past it the oldest executions' errors are forgotten
	// (their counts stay).
	maxKeptErrorBytes = 32 << 20
	// maxExecutions caps the executions the fake remembers; past it the
	// oldest is forgotten (its status is a 404).
	maxExecutions = 100000
	// defaultMaxErrors is the max_errors of the status operation when the
	// request leaves it out (see WithBulkStatusDefaults).
	defaultMaxErrors = 10
	// maxDrain is how much of a refused body is read before answering, so
	// that the client sees the 400 instead of a reset connection.
	maxDrain = 32 << 20
)

// bulkStore holds the state of the bulk area.
type bulkStore struct {
	mu       sync.Mutex
	delay    time.Duration
	delaySet bool
	discard  bool
	// status defaults and spelling (WithBulkStatusDefaults,
	// withMisspelledSuccessCount)
	defInclude   bool
	defMaxErrors int
	defSet       bool
	misspell     bool
	// the method and content type upload URLs are signed for
	// (withSignedUploads)
	upMethod, upType string
	executions       map[string]*bulkExecution
	order            []string // execution ids, oldest first
	// erring lists the executions that keep error rows, oldest first,
	// and errBytes counts their bytes, for maxKeptErrorBytes.
	erring     []*bulkExecution
	errBytes   int
	uploads    map[string]*bulkUpload // by upload token
	uploadURLs map[string]*bulkUpload // by the id in the upload URL
	// upOrder lists the uploads in the order they were handed out, which
	// is the order they expire in; the sweep and maxUploads drop from its
	// front. upBytes counts the bytes of the files held.
	upOrder        []*bulkUpload
	upBytes        int64
	maxUploads     int
	maxUploadBytes int64
	kinds          map[string]map[string]fieldKind

	idxMu   sync.Mutex
	indexed map[[2]string]bool
	index   map[keyIndexEntry]string

	applyMu sync.Mutex

	// spoolMemory is how much of a body a load spools in memory
	// (spoolMemory when 0), and spills counts the spools moved to a file;
	// both for tests.
	spoolMemory int64
	spills      atomic.Int64
	// spooled counts the bytes the running loads' spools hold, within
	// maxSpoolBytes; spoolDir is where their files go ("": os.TempDir).
	spooled       atomic.Int64
	maxSpoolBytes int64
	spoolDir      string
	// stallFor, when set, replaces bodyStall, for tests.
	stallFor time.Duration
}

// reserveSpool counts n more bytes into the spools' total, unless that
// would pass maxSpoolBytes.
func (b *bulkStore) reserveSpool(n int64) bool {
	for {
		cur := b.spooled.Load()
		if cur+n > b.maxSpoolBytes {
			return false
		}
		if b.spooled.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

type bulkExecution struct {
	id, integrationID      string
	created, done          time.Time
	input, success, failed int
	skipped                int
	errors                 []bulkRowError
	errBytes               int // about the bytes errors hold
}

// keep records ex, forgetting the oldest executions past maxExecutions
// and the oldest error rows past maxKeptErrorBytes: O(1) amortised.
func (b *bulkStore) keep(ex *bulkExecution) {
	b.executions[ex.id] = ex
	b.order = append(b.order, ex.id)
	for len(b.order) > maxExecutions {
		old := b.executions[b.order[0]]
		b.errBytes -= old.errBytes
		old.errors, old.errBytes = nil, 0
		delete(b.executions, old.id)
		b.order = b.order[1:]
	}
	if len(ex.errors) == 0 {
		return
	}
	b.erring = append(b.erring, ex)
	b.errBytes += ex.errBytes
	// The front of erring also drops the executions forgotten above,
	// whose rows are already gone, so that it holds no more than the
	// executions remembered.
	for len(b.erring) > 1 && (b.errBytes > maxKeptErrorBytes || b.erring[0].errors == nil) {
		old := b.erring[0]
		b.errBytes -= old.errBytes
		old.errors, old.errBytes = nil, 0
		b.erring[0] = nil
		b.erring = b.erring[1:]
	}
}

type bulkRowError struct {
	ID      string         `json:"id"`
	Message string         `json:"message"`
	DataRow map[string]any `json:"data_row"`
}

type bulkUpload struct {
	token, urlID, integrationID, fileName string
	expires                               time.Time
	data                                  *chunks
	uploaded, used                        bool
}

// WithBulkDelay sets how long a bulk execution stays running after its
// load was received (default DefaultBulkDelay), measured on the fake's
// clock. Zero makes executions complete at once.
func WithBulkDelay(d time.Duration) Option {
	return func(f *Fake) { f.bulk.delay, f.bulk.delaySet = d, true }
}

// WithBulkDiscard makes bulk loads parse and check every row but store
// nothing: valid rows are counted as successes and the object store is
// left alone. Benchmarks use it to load millions of rows without the fake
// growing with them.
func WithBulkDiscard() Option { return func(f *Fake) { f.bulk.discard = true } }

// WithBulkStatusDefaults sets what the status operation does when a
// request leaves include_errors or max_errors out. The fake's defaults are
// false and 10; the deployed service's published
// descriptions disagree (false or true, 10 or 5), so a team can run its
// tests against either.
func WithBulkStatusDefaults(includeErrors bool, maxErrors int) Option {
	return func(f *Fake) {
		f.bulk.defInclude, f.bulk.defMaxErrors, f.bulk.defSet = includeErrors, maxErrors, true
	}
}

// withMisspelledSuccessCount makes the status operation spell the success
// count succcess_count (three c's), as one of the deployed service's
// published descriptions does, instead of success_count.
func withMisspelledSuccessCount() Option { return func(f *Fake) { f.bulk.misspell = true } }

// registerBulk registers the routes of the bulk area.
func (f *Fake) registerBulk() {
	b := &f.bulk
	if !b.delaySet {
		b.delay = DefaultBulkDelay
	}
	if !b.defSet {
		b.defMaxErrors = defaultMaxErrors
	}
	if b.maxUploads == 0 {
		b.maxUploads = defaultMaxUploads
	}
	if b.maxUploadBytes == 0 {
		b.maxUploadBytes = defaultMaxUploadBytes
	}
	if b.maxSpoolBytes == 0 {
		b.maxSpoolBytes = defaultMaxSpoolBytes
	}
	b.executions = map[string]*bulkExecution{}
	b.uploads = map[string]*bulkUpload{}
	b.uploadURLs = map[string]*bulkUpload{}
	b.kinds = map[string]map[string]fieldKind{}
	for typ, fields := range defaultFieldKinds {
		b.kinds[typ] = map[string]fieldKind{}
		maps.Copy(b.kinds[typ], fields)
	}
	b.indexed = map[[2]string]bool{}
	b.index = map[keyIndexEntry]string{}
	f.onObjectChange(f.observeObjects)

	f.handleLoad("POST /bulk/v1/bulkload", scopeBulk, f.bulkLoadData)
	f.handleLoad("POST /bulk/v1/bulkload_opportunity", scopeBulk, f.bulkLoadOpportunity)
	f.handle("GET /bulk/v1/status/{integration_id}", scopeBulk, f.bulkStatus)
	f.handle("GET /bulk/v1/bulkload/{integration_id}/upload_url", scopeBulk, f.bulkUploadURL)
	f.handleStorage("/upload/{id}", f.bulkUpload)
}

// seedBulkDemo adds the bulk part of the demo data set: none beyond the
// core integrations and objects.
func (f *Fake) seedBulkDemo() {}

// BulkExecution is a bulk execution as the fake holds it.
type BulkExecution struct {
	ID, IntegrationID string
	// Status is "running" or "completed" at the fake's current time.
	Status                                          string
	InputCount, SuccessCount, ErrorCount, SkipCount int
	StartedAt, CompletedAt                          time.Time
}

// BulkExecutions returns every bulk execution the fake remembers (the
// newest 100,000), oldest first.
func (f *Fake) BulkExecutions() []BulkExecution {
	now := f.clock.Now()
	f.bulk.mu.Lock()
	defer f.bulk.mu.Unlock()
	out := make([]BulkExecution, 0, len(f.bulk.order))
	for _, id := range f.bulk.order {
		out = append(out, f.bulk.executions[id].public(now))
	}
	return out
}

// BulkExecution returns the execution with id.
func (f *Fake) BulkExecution(id string) (BulkExecution, bool) {
	now := f.clock.Now()
	f.bulk.mu.Lock()
	defer f.bulk.mu.Unlock()
	ex, ok := f.bulk.executions[id]
	if !ok {
		return BulkExecution{}, false
	}
	return ex.public(now), true
}

func (ex *bulkExecution) public(now time.Time) BulkExecution {
	return BulkExecution{
		ID: ex.id, IntegrationID: ex.integrationID, Status: ex.status(now),
		InputCount: ex.input, SuccessCount: ex.success, ErrorCount: ex.failed, SkipCount: ex.skipped,
		StartedAt: ex.created, CompletedAt: ex.done,
	}
}

func (ex *bulkExecution) status(now time.Time) string {
	if now.Before(ex.done) {
		return "running"
	}
	return "completed"
}

// validBulkID reports whether s can be an integration or execution id:
// 1 to 128 letters, digits, '-', '_' or '.'.
func validBulkID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// bulkIntegration finds the integration named by id, or answers: 400 for
// a missing or malformed id, notFound (404, or 400 on loads, which
// document no 404) for an unknown one.
func (f *Fake) bulkIntegration(w http.ResponseWriter, id string, notFound int) (Integration, bool) {
	in, status, msg := f.findBulkIntegration(id, notFound)
	if status != 0 {
		writeError(w, status, errorCode(status), "%s", msg)
		return Integration{}, false
	}
	return in, true
}

func (f *Fake) findBulkIntegration(id string, notFound int) (Integration, int, string) {
	switch {
	case id == "":
		return Integration{}, http.StatusBadRequest, "integration_id is required"
	case !validBulkID(id):
		return Integration{}, http.StatusBadRequest, fmt.Sprintf("invalid integration id %q", id)
	}
	if in, ok := f.Integration(id); ok {
		return in, 0, ""
	}
	return Integration{}, notFound, fmt.Sprintf("integration %q not found", id)
}

func errorCode(status int) string {
	if status == http.StatusNotFound {
		return "not_found"
	}
	return "invalid_request"
}

// statusWire is the bulk execution status.
type statusWire struct {
	IntegrationID string `json:"integration_id"`
	ExecutionID   string `json:"execution_id"`
	Status        string `json:"status"`
	StatusMsg     string `json:"status_msg,omitempty"`
	InputCount    int    `json:"input_count"`
	SuccessCount  *int   `json:"success_count,omitempty"`
	Succcess      *int   `json:"succcess_count,omitempty"` // withMisspelledSuccessCount
	ErrorCount    int    `json:"error_count"`
	SkipCount     int    `json:"skip_count"`
	StartedAt     string `json:"started_at"`
	CompletedAt   string `json:"completed_at,omitempty"`
	IncludeErrors bool   `json:"include_errors"`
	Errors        any    `json:"errors,omitempty"`
}

// bulkStatus serves GET /bulk/v1/status/{integration_id}. While running,
// only input_count is filled in; the other counts and the errors appear
// when the execution completes.
func (f *Fake) bulkStatus(w http.ResponseWriter, r *http.Request) {
	in, ok := f.bulkIntegration(w, r.PathValue("integration_id"), http.StatusNotFound)
	if !ok {
		return
	}
	q := r.URL.Query()
	exID := q.Get("execution_id")
	if exID == "" {
		writeError(w, http.StatusBadRequest, "invalid_request", "execution_id is required")
		return
	}
	if !validBulkID(exID) {
		writeError(w, http.StatusBadRequest, "invalid_request", "invalid execution id %q", exID)
		return
	}
	f.bulk.mu.Lock()
	include, maxErrors, misspell := f.bulk.defInclude, f.bulk.defMaxErrors, f.bulk.misspell
	f.bulk.mu.Unlock()
	if s := q.Get("include_errors"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request", "include_errors must be true or false, not %q", s)
			return
		}
		include = b
	}
	if s := q.Get("max_errors"); s != "" {
		n, ok := parseMaxErrors(s)
		if !ok {
			writeError(w, http.StatusBadRequest, "invalid_request", "max_errors must be a whole number of at least 0 (a number such as 10 or 10.0), not %q", s)
			return
		}
		maxErrors = n
	}
	now := f.clock.Now()
	f.bulk.mu.Lock()
	ex, ok := f.bulk.executions[exID]
	if !ok || ex.integrationID != in.ID {
		f.bulk.mu.Unlock()
		writeError(w, http.StatusNotFound, "not_found", "execution %q of integration %q not found", exID, in.ID)
		return
	}
	st := statusWire{
		IntegrationID: in.ID, ExecutionID: ex.id, Status: ex.status(now),
		InputCount: ex.input, StartedAt: wireTime(ex.created),
		IncludeErrors: include,
	}
	success := 0
	if st.Status == "completed" {
		success = ex.success
		st.ErrorCount, st.SkipCount = ex.failed, ex.skipped
		st.CompletedAt = wireTime(ex.done)
		if include {
			errs := append([]bulkRowError{}, ex.errors[:min(maxErrors, len(ex.errors))]...)
			st.Errors = errs
		}
	} else if include {
		st.Errors = []bulkRowError{}
	}
	f.bulk.mu.Unlock()
	if misspell {
		st.Succcess = &success
	} else {
		st.SuccessCount = &success
	}
	writeJSON(w, http.StatusOK, st)
}

// parseMaxErrors reads max_errors, declared a number by the deployed
// service's description: a whole number of at least 0, written as an
// integer or with a zero fraction ("10", "10.0", "1e1"); "1.5" is no
// count of errors.
func parseMaxErrors(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, n >= 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v != math.Trunc(v) || v > math.MaxInt32 {
		return 0, false
	}
	return int(v), true
}
