package partner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/objects"
	"github.com/partnerapi/partner-go/reports"
	"github.com/partnerapi/partner-go/scim"
	"github.com/partnerapi/partner-go/users"
)

func fakeClient(t *testing.T, secret string) *partner.Client {
	t.Helper()
	srv := fake.NewServer(fake.WithDemoData(), mocktest.ContractCheck(t))
	t.Cleanup(srv.Close)
	c, err := partner.New(partner.WithBaseURL(srv.URL), partner.WithClientCredentials(fake.DefaultClientID, secret))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestWrongSecretIsUnauthorized: the token endpoint answers a wrong
// client secret with 400 invalid_client; the call that needed the token
// reports it as an auth failure.
func TestWrongSecretIsUnauthorized(t *testing.T) {
	c := fakeClient(t, "not-the-secret")
	_, err := c.SCIM.Get(context.Background(), "usr-1")
	var perr *partner.Error
	if !errors.As(err, &perr) || perr.StatusCode != 400 || perr.Code != "invalid_client" {
		t.Fatalf("err = %v, want a 400 invalid_client", err)
	}
	if !partner.IsUnauthorized(err) {
		t.Errorf("IsUnauthorized(%v) = false", err)
	}
	if strings.Contains(err.Error(), "not-the-secret") {
		t.Errorf("the secret is in the error: %v", err)
	}
}

// TestNotFoundAgrees: FindByUserName's ErrNotFound and a 404 answer are
// both IsNotFound.
func TestNotFoundAgrees(t *testing.T) {
	c := fakeClient(t, fake.DefaultClientSecret)
	ctx := context.Background()
	_, err := c.SCIM.FindByUserName(ctx, "nobody@example.com")
	if !errors.Is(err, scim.ErrNotFound) || !partner.IsNotFound(err) {
		t.Errorf("FindByUserName(nobody): %v; errors.Is ErrNotFound %v, IsNotFound %v",
			err, errors.Is(err, scim.ErrNotFound), partner.IsNotFound(err))
	}
	if !partner.IsNotFound(scim.ErrNotFound) {
		t.Error("IsNotFound(scim.ErrNotFound) = false")
	}
	if _, err := c.SCIM.Get(ctx, "usr-missing"); !partner.IsNotFound(err) {
		t.Errorf("Get(missing) = %v, want a 404", err)
	}
	if partner.IsNotFound(errors.New("partner: scim: not found")) {
		t.Error("IsNotFound true for an unrelated error")
	}
}

// TestErrorPrefixOnce: context added on the way up does not repeat the
// "partner: " prefix.
func TestErrorPrefixOnce(t *testing.T) {
	c := fakeClient(t, fake.DefaultClientSecret)
	var err error
	for _, e := range c.Reports.Export(context.Background(), 999, reports.ExportOptions{}) {
		err = e
		break
	}
	const want = "partner: reports: exporting report 999: POST /report/v1/view/999/prepare_export: 404 Not Found"
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Count(err.Error(), "partner:") != 1 {
		t.Errorf("err = %v\nwant it to start %q, the prefix once", err, want)
	}
	if !partner.IsNotFound(err) {
		t.Errorf("IsNotFound(%v) = false", err)
	}
}

// TestErrorPrefixOnceEverywhere: a failing call of every area, plain or
// through a helper that adds context (waits, iterators, file loads), reads
// "partner: " once.
func TestErrorPrefixOnceEverywhere(t *testing.T) {
	c := fakeClient(t, fake.DefaultClientSecret)
	ctx := context.Background()
	first := func(seq func(func(reports.Row, error) bool)) error {
		for _, err := range seq {
			return err
		}
		return nil
	}
	calls := map[string]func() error{
		"SCIM.Get":     func() error { _, err := c.SCIM.Get(ctx, "usr-missing"); return err },
		"SCIM.Suspend": func() error { _, err := c.SCIM.Suspend(ctx, "usr-missing"); return err },
		"SCIM.FindByUserName": func() error {
			_, err := c.SCIM.FindByUserName(ctx, "nobody@example.com")
			return err
		},
		"Users.CheckAttribute": func() error {
			_, err := c.Users.CheckAttribute(ctx, users.CheckAttributeParams{Email: "nobody@example.com", FilterValue: users.Attribute{Name: "role"}})
			return err
		},
		"Reports.Metadata": func() error { _, err := c.Reports.Metadata(ctx, 999); return err },
		"Reports.Data":     func() error { return first(c.Reports.Data(ctx, 999, reports.DataParams{})) },
		"Reports.WaitView": func() error { _, err := c.Reports.WaitView(ctx, 999, reports.WaitOptions{}); return err },
		"Reports.ExportView": func() error {
			return first(c.Reports.ExportView(ctx, 999, reports.ExportOptions{}))
		},
		"Objects.Audit": func() error {
			_, err := c.Objects.Audit(ctx, "obj-missing", objects.AuditParams{StatusCode: objects.StatusLinked, Message: "m"})
			return err
		},
		"Objects.ExternalIDs": func() error { _, err := c.Objects.ExternalIDs(ctx, "obj-missing"); return err },
		"Bulk.WaitExecution": func() error {
			_, err := c.Bulk.WaitExecution(ctx, &bulk.Ack{IntegrationID: demo.OpportunityIntegration, ExecutionID: "exe-missing"}, bulk.WaitOptions{})
			return err
		},
		"Bulk.LoadFile": func() error {
			_, err := c.Bulk.LoadFile(ctx, bulk.LoadFileParams{IntegrationID: demo.OpportunityIntegration}, "no-such-file.csv")
			return err
		},
		"Events.Subscriber":  func() error { _, err := c.Events.Subscriber(ctx, "sub-missing"); return err },
		"Events.Unsubscribe": func() error { return c.Events.Unsubscribe(ctx, "sub-missing") },
		"Events.Schema":      func() error { _, err := c.Events.Schema(ctx, "no.such_kind"); return err },
		"Events.IntegrationSchema": func() error {
			_, err := c.Events.IntegrationSchema(ctx, "int-missing")
			return err
		},
	}
	for name, call := range calls {
		err := call()
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "partner: ") || strings.Count(msg, "partner:") != 1 {
			t.Errorf("%s: %q, want the prefix once, first", name, msg)
		}
	}
}
