package objects_test

import (
	"context"
	"testing"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/objects"
)

func fakeClient(t *testing.T, opts ...fake.Option) (*partner.Client, *fake.Server) {
	t.Helper()
	return mocktest.FakeClient(t, opts)
}

func TestAuditAgainstFake(t *testing.T) {
	c, srv := fakeClient(t)
	ctx := context.Background()
	id := srv.AddObject(fake.Object{Type: "opportunity", Fields: map[string]any{"name": "Deal"}})
	for _, code := range []objects.AuditStatus{objects.StatusScheduled, objects.StatusUpdateFailed, objects.StatusLinked} {
		res, err := c.Objects.Audit(ctx, id, objects.AuditParams{StatusCode: code, Message: "step " + string(code)})
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != code || res.ObjectID != id {
			t.Errorf("result = %+v, want status %s", res, code)
		}
	}
	o, _ := srv.Object(id)
	if v, _ := o.Field("partner_portal.integration_status"); v != "LINKED" {
		t.Errorf("stored status = %v, want LINKED", v)
	}
	if a := srv.Audits(id); len(a) != 3 || a[2].Message != "step LINKED" {
		t.Errorf("audit history = %+v", a)
	}
	_, err := c.Objects.Audit(ctx, "missing", objects.AuditParams{StatusCode: objects.StatusLinked, Message: "m"})
	if !partner.IsNotFound(err) {
		t.Errorf("unknown object: err = %v, want 404", err)
	}
}

func TestExternalIDsAgainstFake(t *testing.T) {
	c, srv := fakeClient(t)
	ctx := context.Background()
	opp := srv.AddObject(fake.Object{Type: "opportunity"})
	acc := srv.AddObject(fake.Object{Type: "account"})
	other := srv.AddObject(fake.Object{Type: "partner"})

	ids, err := c.Objects.ExternalIDs(ctx, opp)
	if err != nil || len(ids.Links) != 0 {
		t.Fatalf("fresh object: %+v, %v", ids, err)
	}
	for _, tc := range []struct{ id, field, want string }{
		{opp, "", objects.DefaultOpportunityExternalIDField},
		{acc, "", objects.DefaultAccountExternalIDField},
		{opp, "erp.order_ref", "erp.order_ref"},
	} {
		link, err := c.Objects.ConnectExternalID(ctx, tc.id, objects.ConnectExternalIDParams{ExternalID: "x-" + tc.want, FieldName: tc.field})
		if err != nil {
			t.Fatal(err)
		}
		if link.FieldName != tc.want {
			t.Errorf("field = %q, want %q", link.FieldName, tc.want)
		}
	}
	ids, err = c.Objects.ExternalIDs(ctx, opp)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids.Links) != 2 {
		t.Fatalf("links = %+v, want the default field and erp.order_ref", ids.Links)
	}
	for _, l := range ids.Links {
		if l.ObjectID != opp || ids.ObjectID != opp {
			t.Errorf("link %+v of %q, want object %s", l, ids.ObjectID, opp)
		}
	}
	if v, _ := ids.Get(objects.DefaultOpportunityExternalIDField); v != "x-"+objects.DefaultOpportunityExternalIDField {
		t.Errorf("default field holds %q", v)
	}
	o, _ := srv.Object(opp)
	if v, _ := o.Field("erp.order_ref"); v != "x-erp.order_ref" {
		t.Errorf("nested field stored as %v", v)
	}
	// A type without a default field needs field_name.
	_, err = c.Objects.ConnectExternalID(ctx, other, objects.ConnectExternalIDParams{ExternalID: "e"})
	if !partner.IsBadRequest(err) {
		t.Errorf("no default field: err = %v, want 400", err)
	}
	_, err = c.Objects.ConnectExternalID(ctx, "missing", objects.ConnectExternalIDParams{ExternalID: "e"})
	if !partner.IsNotFound(err) {
		t.Errorf("unknown object: err = %v, want 404", err)
	}
	_, err = c.Objects.ExternalIDs(ctx, "missing")
	if !partner.IsNotFound(err) {
		t.Errorf("unknown object read: err = %v, want 404", err)
	}
}

func TestObjectIDIsPathEscaped(t *testing.T) {
	c, srv := fakeClient(t)
	id := srv.AddObject(fake.Object{ID: "weird/id ?#", Type: "account"})
	if _, err := c.Objects.ConnectExternalID(context.Background(), id, objects.ConnectExternalIDParams{ExternalID: "e1"}); err != nil {
		t.Fatalf("id with slash, space, ? and #: %v", err)
	}
	if o, _ := srv.Object(id); o.Fields["account_info"] == nil {
		t.Errorf("object not updated: %+v", o)
	}
}
