package fake

import (
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// The values of the audit field (Connection().Words.AuditField).
var auditCodes = []string{"SCHEDULED", "CREATE_FAILED", "UPDATE_FAILED", "LINKED"}

// defaultExternalIDField is the field an external id goes to when a link
// names none, by object type.
var defaultExternalIDField = map[string]string{
	"opportunity": "sales_details.crm_opportunity_id",
	"account":     "account_info.external_account_id",
}

var fieldNameRE = regexp.MustCompile(`^[^.\s]+(\.[^.\s]+)*$`)

// AuditEntry is one accepted audit request, as Audits returns it.
type AuditEntry struct {
	FieldName     string
	IntegrationID string
	ExternalID    string
	StatusCode    string
	Message       string
	At            time.Time
}

// objectsStore holds what the objects area keeps beside the objects
// themselves: the audit history and which fields hold external ids.
type objectsStore struct {
	mu        sync.Mutex
	audits    map[string][]AuditEntry
	extFields map[string]map[string]bool // object id -> fields connected as external ids
}

// Audits returns the audit requests accepted for an object, oldest first.
func (f *Fake) Audits(objectID string) []AuditEntry {
	f.objectsArea.mu.Lock()
	defer f.objectsArea.mu.Unlock()
	return slices.Clone(f.objectsArea.audits[objectID])
}

func (f *Fake) registerObjects() {
	f.objectsArea.audits = map[string][]AuditEntry{}
	f.objectsArea.extFields = map[string]map[string]bool{}
	f.handle("PATCH /app/v1/object/{object_id}/audit", scopeObjects, f.patchAudit)
	f.handle("PATCH /app/v1/object/{object_id}/external_id", scopeObjects, f.patchExternalID)
	f.handle("GET /app/v1/object/{object_id}/external_id", scopeObjects, f.getExternalIDs)
}

func (f *Fake) seedObjectsDemo() {}

type auditRequest struct {
	FieldName     *string `json:"field_name"`
	IntegrationID string  `json:"integration_id"`
	ExternalID    string  `json:"external_id"`
	StatusCode    *string `json:"status_code"`
	Message       *string `json:"message"`
}

type auditResponse struct {
	ObjectID   string `json:"object_id"`
	FieldName  string `json:"field_name"`
	StatusCode string `json:"status_code"`
}

// patchAudit serves PATCH /app/v1/object/{object_id}/audit: the body is
// checked first (400), then the object (404).
func (f *Fake) patchAudit(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("object_id")
	var req auditRequest
	if !f.decodeWrite(w, r, &req) {
		return
	}
	auditField := f.deploy.words.AuditField()
	var problems []string
	switch {
	case req.FieldName == nil || *req.FieldName == "":
		problems = append(problems, "field_name is required")
	case *req.FieldName != auditField:
		// A deployment accepts its own portal word only; the fake's is
		// set with WithWords.
		problems = append(problems, "field_name must be "+auditField+
			" (the fake's portal word is "+f.deploy.words.PortalWord+"; a test of another deployment sets it with fake.WithWords)")
	}
	switch {
	case req.StatusCode == nil || *req.StatusCode == "":
		problems = append(problems, "status_code is required")
	case !slices.Contains(auditCodes, *req.StatusCode):
		problems = append(problems, "status_code must be one of "+strings.Join(auditCodes, ", "))
	}
	if req.Message == nil || strings.TrimSpace(*req.Message) == "" {
		problems = append(problems, "message is required")
	}
	if len(problems) > 0 {
		writeError(w, http.StatusBadRequest, "invalid_request", "%s", strings.Join(problems, "; "))
		return
	}
	o, ok := f.updateObject(id, func(o *Object) { setPath(o.Fields, auditField, *req.StatusCode) })
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "object %q not found", id)
		return
	}
	f.objectsArea.mu.Lock()
	f.objectsArea.audits[id] = append(f.objectsArea.audits[id], AuditEntry{
		FieldName: auditField, IntegrationID: req.IntegrationID, ExternalID: req.ExternalID,
		StatusCode: *req.StatusCode, Message: *req.Message, At: f.clock.Now(),
	})
	f.objectsArea.mu.Unlock()
	v, _ := o.Field(auditField)
	code, _ := v.(string)
	writeJSON(w, http.StatusOK, auditResponse{ObjectID: id, FieldName: auditField, StatusCode: code})
}

type externalIDRequest struct {
	ExternalID *string `json:"external_id"`
	FieldName  string  `json:"field_name"`
}

type externalIDLink struct {
	ObjectID   string `json:"object_id,omitempty"`
	FieldName  string `json:"field_name"`
	ExternalID string `json:"external_id"`
}

type externalIDsResponse struct {
	ObjectID    string           `json:"object_id"`
	ExternalIDs []externalIDLink `json:"external_ids"`
}

// patchExternalID serves PATCH /app/v1/object/{object_id}/external_id. The
// interface documents only 401 and 404; a body without external_id, a
// malformed field name, or no field name on a type without a default field
// get a 400 rather than a silent write.
func (f *Fake) patchExternalID(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("object_id")
	var req externalIDRequest
	if !f.decodeWrite(w, r, &req) {
		return
	}
	if req.ExternalID == nil || strings.TrimSpace(*req.ExternalID) == "" {
		writeError(w, http.StatusBadRequest, "invalid_request", "external_id is required")
		return
	}
	if req.FieldName != "" && !fieldNameRE.MatchString(req.FieldName) {
		writeError(w, http.StatusBadRequest, "invalid_request", "field_name %q is not a dotted field name", req.FieldName)
		return
	}
	cur, ok := f.Object(id)
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "object %q not found", id)
		return
	}
	field := req.FieldName
	if field == "" {
		field = defaultExternalIDField[cur.Type]
		if field == "" {
			writeError(w, http.StatusBadRequest, "invalid_request", "field_name is required: objects of type %q have no default external-id field", cur.Type)
			return
		}
	}
	if _, ok := f.updateObject(id, func(o *Object) { setPath(o.Fields, field, *req.ExternalID) }); !ok {
		writeError(w, http.StatusNotFound, "not_found", "object %q not found", id)
		return
	}
	f.objectsArea.mu.Lock()
	if f.objectsArea.extFields[id] == nil {
		f.objectsArea.extFields[id] = map[string]bool{}
	}
	f.objectsArea.extFields[id][field] = true
	f.objectsArea.mu.Unlock()
	writeJSON(w, http.StatusOK, externalIDLink{ObjectID: id, FieldName: field, ExternalID: *req.ExternalID})
}

// getExternalIDs serves GET /app/v1/object/{object_id}/external_id: the
// type's default field and, for opportunities, the referral field
// (Connection().Words.ReferralField) when they hold a value, and every field connected
// through the PATCH, ordered by field name.
func (f *Fake) getExternalIDs(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("object_id")
	o, ok := f.Object(id)
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "object %q not found", id)
		return
	}
	fields := map[string]bool{}
	if def := defaultExternalIDField[o.Type]; def != "" {
		fields[def] = true
	}
	if o.Type == "opportunity" {
		// The deployed service also keeps an opportunity's partner portal
		// referral id as an external id.
		fields[f.deploy.words.ReferralField()] = true
	}
	f.objectsArea.mu.Lock()
	for k := range f.objectsArea.extFields[id] {
		fields[k] = true
	}
	f.objectsArea.mu.Unlock()
	resp := externalIDsResponse{ObjectID: id, ExternalIDs: []externalIDLink{}}
	for field := range fields {
		v, ok := o.Field(field)
		s, isString := v.(string)
		if !ok || !isString || s == "" {
			continue
		}
		resp.ExternalIDs = append(resp.ExternalIDs, externalIDLink{FieldName: field, ExternalID: s})
	}
	sort.Slice(resp.ExternalIDs, func(i, j int) bool { return resp.ExternalIDs[i].FieldName < resp.ExternalIDs[j].FieldName })
	writeJSON(w, http.StatusOK, resp)
}
