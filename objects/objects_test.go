package objects_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/objects"
)

func bodyJSON(t *testing.T, req *http.Request) map[string]any {
	t.Helper()
	b, err := io.ReadAll(req.Body)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("request body %q: %v", b, err)
	}
	return m
}

func TestAuditWire(t *testing.T) {
	c, mt := mocktest.New(t)
	var sent map[string]any
	mt.RegisterResponder(http.MethodPatch, mocktest.BaseURL+"/app/v1/object/opp%2F1/audit",
		func(req *http.Request) (*http.Response, error) {
			sent = bodyJSON(t, req)
			if got := req.Header.Get("Authorization"); got != "Bearer "+mocktest.AccessToken {
				t.Errorf("Authorization = %q", got)
			}
			return httpmock.NewStringResponse(200, `{"object_id":"opp/1","field_name":"partner_portal.integration_status","status_code":"LINKED"}`), nil
		})
	res, err := c.Objects.Audit(context.Background(), "opp/1", objects.AuditParams{
		FieldName:     objects.FieldIntegrationStatus,
		IntegrationID: "int-1", ExternalID: "ext-9", StatusCode: objects.StatusLinked, Message: "linked to CRM",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"field_name": "partner_portal.integration_status", "integration_id": "int-1",
		"external_id": "ext-9", "status_code": "LINKED", "message": "linked to CRM"}
	for k, v := range want {
		if sent[k] != v {
			t.Errorf("sent %s = %v, want %v", k, sent[k], v)
		}
	}
	if res.ObjectID != "opp/1" || res.StatusCode != objects.StatusLinked || res.FieldName != objects.FieldIntegrationStatus {
		t.Errorf("result = %+v", res)
	}
}

func TestAuditValidatesBeforeSending(t *testing.T) {
	c, mt := mocktest.New(t)
	ctx := context.Background()
	for name, tc := range map[string]struct {
		id  string
		rec objects.AuditParams
		msg string
	}{
		"no id":       {"", objects.AuditParams{StatusCode: objects.StatusLinked, Message: "m"}, "object id"},
		"no status":   {"o", objects.AuditParams{Message: "m"}, "status_code is required"},
		"bad status":  {"o", objects.AuditParams{StatusCode: "DONE", Message: "m"}, `"DONE"`},
		"no message":  {"o", objects.AuditParams{StatusCode: objects.StatusScheduled, Message: "  "}, "message is required"},
		"blank field": {"o", objects.AuditParams{FieldName: " ", StatusCode: objects.StatusScheduled, Message: "m"}, "field_name"},
	} {
		_, err := c.Objects.Audit(ctx, tc.id, tc.rec)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want mention of %q", name, err, tc.msg)
		}
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Errorf("%d requests sent for invalid input", n)
	}
}

func TestExternalIDsWire(t *testing.T) {
	c, mt := mocktest.New(t)
	var sent map[string]any
	mt.RegisterResponder(http.MethodPatch, mocktest.BaseURL+"/app/v1/object/o1/external_id",
		func(req *http.Request) (*http.Response, error) {
			sent = bodyJSON(t, req)
			return httpmock.NewStringResponse(200, `{"object_id":"o1","external_id":"crm-7","field_name":"sales_details.crm_opportunity_id"}`), nil
		})
	mt.RegisterResponder(http.MethodGet, mocktest.BaseURL+"/app/v1/object/o1/external_id",
		httpmock.NewStringResponder(200, `{"object_id":"o1","external_ids":[{"field_name":"sales_details.crm_opportunity_id","external_id":"crm-7"},{"field_name":"custom.erp_id","external_id":"erp-1"}]}`))
	ctx := context.Background()
	link, err := c.Objects.ConnectExternalID(ctx, "o1", objects.ConnectExternalIDParams{ExternalID: "crm-7"})
	if err != nil {
		t.Fatal(err)
	}
	if _, has := sent["field_name"]; has || sent["external_id"] != "crm-7" {
		t.Errorf("sent %v: want external_id only, field_name omitted", sent)
	}
	if link.FieldName != objects.DefaultOpportunityExternalIDField || link.ObjectID != "o1" {
		t.Errorf("link = %+v", link)
	}
	ids, err := c.Objects.ExternalIDs(ctx, "o1")
	if err != nil {
		t.Fatal(err)
	}
	if len(ids.Links) != 2 || ids.ObjectID != "o1" {
		t.Fatalf("ids = %+v", ids)
	}
	if v, ok := ids.Get("custom.erp_id"); !ok || v != "erp-1" {
		t.Errorf("Get(custom.erp_id) = %q, %v", v, ok)
	}
	if _, err := c.Objects.ConnectExternalID(ctx, "o1", objects.ConnectExternalIDParams{}); err == nil {
		t.Error("empty external id accepted")
	}
	calls := mt.GetTotalCallCount()
	for _, bad := range []string{"a..b", ".a", "a.", "a b", "a\tb"} {
		if _, err := c.Objects.ConnectExternalID(ctx, "o1", objects.ConnectExternalIDParams{ExternalID: "e", FieldName: bad}); err == nil || !strings.Contains(err.Error(), "dotted field name") {
			t.Errorf("field_name %q: err = %v", bad, err)
		}
	}
	if n := mt.GetTotalCallCount(); n != calls {
		t.Errorf("%d requests sent for invalid field names", n-calls)
	}
}

func TestNotFoundIsTyped(t *testing.T) {
	c, mt := mocktest.New(t)
	mt.RegisterResponder(http.MethodGet, mocktest.BaseURL+"/app/v1/object/nope/external_id",
		httpmock.NewStringResponder(404, `{"error":"not_found","message":"object \"nope\" not found"}`))
	_, err := c.Objects.ExternalIDs(context.Background(), "nope")
	if !partner.IsNotFound(err) {
		t.Fatalf("err = %v, want a 404", err)
	}
	var perr *partner.Error
	if !errors.As(err, &perr) || !strings.Contains(perr.Message, "not found") || perr.Path != "/app/v1/object/nope/external_id" {
		t.Errorf("error = %#v", perr)
	}
}

// TestPortalNamedFieldsWire: a deployment's own portal word is sent as
// given, for the audit field and for an external-id field, and read back.
func TestPortalNamedFieldsWire(t *testing.T) {
	c, mt := mocktest.New(t)
	var sent []string
	record := func(resp string) httpmock.Responder {
		return func(req *http.Request) (*http.Response, error) {
			b, _ := io.ReadAll(req.Body)
			sent = append(sent, string(b))
			return httpmock.NewStringResponse(200, resp), nil
		}
	}
	mt.RegisterResponder(http.MethodPatch, mocktest.BaseURL+"/app/v1/object/006A/audit",
		record(`{"object_id":"006A","field_name":"acme_portal.integration_status","status_code":"SCHEDULED"}`))
	mt.RegisterResponder(http.MethodPatch, mocktest.BaseURL+"/app/v1/object/006A/external_id",
		record(`{"object_id":"006A","external_id":"REF-1","field_name":"acme_portal.referral_id"}`))
	mt.RegisterResponder(http.MethodGet, mocktest.BaseURL+"/app/v1/object/006A/external_id",
		httpmock.NewStringResponder(200, `{"object_id":"006A","external_ids":[{"field_name":"sales_details.crm_opportunity_id","external_id":"CRM-7"},{"field_name":"acme_portal.referral_id","external_id":"REF-1"}]}`))
	ctx := context.Background()
	res, err := c.Objects.Audit(ctx, "006A", objects.AuditParams{
		FieldName: "acme_portal.integration_status", StatusCode: objects.StatusScheduled, Message: "queued",
	})
	if err != nil || res.FieldName != "acme_portal.integration_status" {
		t.Fatalf("audit: %+v, %v", res, err)
	}
	link, err := c.Objects.ConnectExternalID(ctx, "006A", objects.ConnectExternalIDParams{ExternalID: "REF-1", FieldName: "acme_portal.referral_id"})
	if err != nil || link.FieldName != "acme_portal.referral_id" {
		t.Fatalf("connect: %+v, %v", link, err)
	}
	want := []string{
		`{"field_name":"acme_portal.integration_status","status_code":"SCHEDULED","message":"queued"}`,
		`{"external_id":"REF-1","field_name":"acme_portal.referral_id"}`,
	}
	if strings.Join(sent, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sent:\n%s\nwant:\n%s", strings.Join(sent, "\n"), strings.Join(want, "\n"))
	}
	ids, err := c.Objects.ExternalIDs(ctx, "006A")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := ids.Get("acme_portal.referral_id"); !ok || v != "REF-1" {
		t.Fatalf("ids = %+v", ids)
	}
	if v, _ := ids.Get(objects.DefaultOpportunityExternalIDField); v != "CRM-7" {
		t.Fatalf("ids = %+v", ids)
	}
}

// TestAuditWithoutFieldNameTowardAnyHost: an audit without FieldName on a
// client given no portal word fails before sending and says what to set,
// toward a deployment and toward a loopback address (the fake, or a
// sidecar proxy on 127.0.0.1) alike, since a deployment refuses the
// interface's stand-in (its published request names its own
// <portal>.integration_status, gateway export object: audit_object). A
// client given a portal word (partner.WithWords) writes that word's field.
func TestAuditWithoutFieldNameTowardAnyHost(t *testing.T) {
	for _, base := range []string{mocktest.BaseURL, "http://127.0.0.1:8080", "http://localhost:8080"} {
		mt := httpmock.NewMockTransport()
		c, err := partner.New(partner.WithBaseURL(base), partner.WithClientCredentials("id", "secret"),
			partner.WithHTTPClient(&http.Client{Transport: mt}))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Objects.Audit(context.Background(), "o1", objects.AuditParams{StatusCode: objects.StatusLinked, Message: "m"})
		if err == nil || !strings.Contains(err.Error(), "AuditParams.FieldName") || !strings.Contains(err.Error(), "<portal>.integration_status") ||
			!strings.Contains(err.Error(), "partner.WithWords") {
			t.Errorf("%s: err = %v, want one that names AuditParams.FieldName and partner.WithWords", base, err)
		}
		if n := mt.GetTotalCallCount(); n != 0 {
			t.Errorf("%s: %d requests sent", base, n)
		}
	}

	c, mt := mocktest.New(t, partner.WithWords(deployment.Words{PortalWord: "acme_portal"}))
	mt.RegisterResponder(http.MethodPatch, mocktest.BaseURL+"/app/v1/object/o1/audit",
		mocktest.JSONResponder(t, `{"field_name":"acme_portal.integration_status","status_code":"LINKED","message":"m"}`, 200,
			`{"object_id":"o1","field_name":"acme_portal.integration_status","status_code":"LINKED"}`))
	res, err := c.Objects.Audit(context.Background(), "o1", objects.AuditParams{StatusCode: objects.StatusLinked, Message: "m"})
	if err != nil || res.FieldName != "acme_portal.integration_status" {
		t.Fatalf("audit with the client's portal word: %+v, %v", res, err)
	}
}
