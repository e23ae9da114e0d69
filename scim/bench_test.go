package scim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/scim"
)

// plainUser mirrors scim.User without keeping unknown members: the
// baseline of what decoding costs with encoding/json alone.
type plainUser struct {
	Schemas     []string `json:"schemas"`
	ID          string   `json:"id"`
	UserName    string   `json:"userName"`
	Name        *struct{ GivenName, FamilyName string }
	DisplayName string `json:"displayName"`
	Emails      []struct {
		Value, Type string
		Primary     bool
	} `json:"emails"`
	Active     *bool `json:"active"`
	Meta       *struct{ ResourceType string }
	Enterprise *struct {
		Department string `json:"department"`
	} `json:"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"`
}

// BenchmarkDecodeUser: the cost of keeping unknown members (scim.User)
// against a plain struct decode.
func BenchmarkDecodeUser(b *testing.B) {
	raw := []byte(specUser)
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var u scim.User
			if err := json.Unmarshal(raw, &u); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline-plain-struct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var u plainUser
			if err := json.Unmarshal(raw, &u); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkList: iterating 1000 users of the fake, 100 a page, through
// List against a hand-written net/http + encoding/json loop.
func BenchmarkList(b *testing.B) {
	const total, page = 1000, 100
	srv := fake.NewServer()
	defer srv.Close()
	for i := range total {
		srv.AddUser(fake.User{UserName: fmt.Sprintf("b%04d@example.com", i), DisplayName: "Bench User",
			GivenName: "Bench", FamilyName: "User", Department: "Engineering",
			Emails: []fake.UserEmail{{Value: fmt.Sprintf("b%04d@example.com", i), Type: "work", Primary: true}}})
	}
	ctx := context.Background()
	c, _ := partner.New(partner.WithBaseURL(srv.URL), partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret))
	tok, err := c.OAuth.Token(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("sdk", func(b *testing.B) {
		for b.Loop() {
			n := 0
			for _, err := range c.SCIM.List(ctx, scim.ListParams{Count: page}) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != total {
				b.Fatalf("%d users", n)
			}
		}
	})
	b.Run("baseline-net-http", func(b *testing.B) {
		hc := &http.Client{}
		for b.Loop() {
			n := 0
			for start := 1; ; {
				q := url.Values{"startIndex": {strconv.Itoa(start)}, "count": {strconv.Itoa(page)}}
				req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/scim/v2/Users?"+q.Encode(), nil)
				req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
				resp, err := hc.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				var lr struct {
					TotalResults int         `json:"totalResults"`
					Resources    []plainUser `json:"Resources"`
				}
				err = json.NewDecoder(resp.Body).Decode(&lr)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 {
					b.Fatal(err, resp.StatusCode)
				}
				n += len(lr.Resources)
				start += len(lr.Resources)
				if len(lr.Resources) == 0 || start > lr.TotalResults {
					break
				}
			}
			if n != total {
				b.Fatalf("%d users", n)
			}
		}
	})
}
