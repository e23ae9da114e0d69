package users_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
	"github.com/partnerapi/partner-go/users"
)

const base = mocktest.BaseURL

func TestCheckAttributeWire(t *testing.T) {
	c, mt := mocktest.New(t)
	mt.RegisterResponder(http.MethodPost, base+"/users/v1/check-attribute", func(req *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(req.Body)
		mocktest.JSONEqual(t, b, `{"email":"user@example.com","namespace":42,"filter_value":{"attribute":"role","value":["admin","viewer"]}}`)
		if req.Header.Get("Authorization") != "Bearer "+mocktest.AccessToken || req.Header.Get("Content-Type") != "application/json" {
			t.Errorf("headers %v", req.Header)
		}
		return httpmock.NewStringResponse(201,
			`{"email":"user@example.com","namespace":42,"filter_value":{"data":{"attribute":"role","value":["admin"]}}}`), nil
	})
	res, err := c.Users.CheckAttribute(context.Background(), users.CheckAttributeParams{
		Email: "user@example.com", Namespace: 42,
		FilterValue: users.Attribute{Name: "role", Values: []string{"admin", "viewer"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &users.CheckAttributeResult{Email: "user@example.com", Namespace: 42,
		FilterValue: users.FilterValue{Data: users.Attribute{Name: "role", Values: []string{"admin"}}}}
	if !reflect.DeepEqual(res, want) || !res.Has("admin") || res.Has("viewer") || len(res.Values()) != 1 {
		t.Errorf("result %+v", res)
	}
}

func TestCheckAttributeSendsEmptyList(t *testing.T) {
	c, mt := mocktest.New(t)
	mt.RegisterResponder(http.MethodPost, base+"/users/v1/check-attribute", func(req *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(req.Body)
		mocktest.JSONEqual(t, b, `{"email":"u@example.com","namespace":0,"filter_value":{"attribute":"role","value":[]}}`)
		return httpmock.NewStringResponse(201, `{"email":"u@example.com","namespace":0,"filter_value":{"data":{"attribute":"role","value":[]}}}`), nil
	})
	if _, err := c.Users.CheckAttribute(context.Background(), users.CheckAttributeParams{
		Email: "u@example.com", FilterValue: users.Attribute{Name: "role"},
	}); err != nil {
		t.Fatal(err)
	}
}

func TestCheckAttributeErrors(t *testing.T) {
	for status, is := range map[int]func(error) bool{
		400: partner.IsBadRequest, 401: partner.IsUnauthorized, 403: partner.IsForbidden,
		404: partner.IsNotFound, 500: partner.IsServerError,
	} {
		c, mt := mocktest.New(t)
		mt.RegisterResponder(http.MethodPost, base+"/users/v1/check-attribute",
			httpmock.NewStringResponder(status, `{"error":"e","message":"went wrong"}`))
		_, err := c.Users.CheckAttribute(context.Background(), users.CheckAttributeParams{
			Email: "u@example.com", FilterValue: users.Attribute{Name: "role"}})
		var perr *partner.Error
		if !is(err) || !errors.As(err, &perr) || perr.Message != "went wrong" {
			t.Errorf("%d: %v", status, err)
		}
	}
}

func TestCheckAttributeValidation(t *testing.T) {
	c, mt := mocktest.New(t)
	for want, p := range map[string]users.CheckAttributeParams{
		"partner: users: email is required":                  {FilterValue: users.Attribute{Name: "role"}},
		"partner: users: filter_value.attribute is required": {Email: "u@example.com"},
	} {
		if _, err := c.Users.CheckAttribute(context.Background(), p); err == nil || err.Error() != want {
			t.Errorf("err %v, want %q", err, want)
		}
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestCheckAttributeAgainstTheFake(t *testing.T) {
	c, srv := mocktest.FakeClient(t, []fake.Option{fake.WithDemoData(), fake.WithClient(fake.DefaultClientID, fake.DefaultClientSecret),
		fake.WithClient("scim-only", "s", "scim"), fake.WithScopeChecks()})
	srv.SetUserAttributes("pat@example.com", 3, "tier", "gold", "silver")
	ctx := context.Background()

	res, err := c.Users.CheckAttribute(ctx, users.CheckAttributeParams{
		Email: "Pat@Example.com", Namespace: 3,
		FilterValue: users.Attribute{Name: "tier", Values: []string{"bronze", "silver", "gold"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Values(), ",") != "silver,gold" || res.FilterValue.Data.Name != "tier" || res.Namespace != 3 {
		t.Errorf("result %+v", res)
	}
	_, err = c.Users.CheckAttribute(ctx, users.CheckAttributeParams{Email: "nobody@example.com",
		FilterValue: users.Attribute{Name: "tier"}})
	if !partner.IsNotFound(err) {
		t.Errorf("unknown e-mail: %v", err)
	}
	other, _ := partner.New(partner.WithBaseURL(srv.URL), partner.WithClientCredentials("scim-only", "s"))
	_, err = other.Users.CheckAttribute(ctx, users.CheckAttributeParams{Email: "pat@example.com",
		FilterValue: users.Attribute{Name: "tier"}})
	if !partner.IsForbidden(err) {
		t.Errorf("client without the users scope: %v", err)
	}
	// The check only reads: a 503 is retried.
	srv.InjectFault(fake.Fault{Path: "/users/v1/check-attribute", Status: 503, RetryAfter: "0", Times: 1})
	if _, err := c.Users.CheckAttribute(ctx, users.CheckAttributeParams{Email: "pat@example.com",
		FilterValue: users.Attribute{Name: "tier"}}); err != nil {
		t.Errorf("after one 503: %v", err)
	}
}
