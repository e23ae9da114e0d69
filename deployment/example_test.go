package deployment_test

import (
	"encoding/json"
	"fmt"

	"github.com/partnerapi/partner-go/deployment"
)

// A deployment's words name the fields and the event kind that the
// interface names with its stand-in partner_portal.
func ExampleWords() {
	w := deployment.Words{EnvHeader: "x-acme-env", PortalWord: "acme_portal"}
	fmt.Println(w.AuditField())
	fmt.Println(w.ReferralField())
	fmt.Println(w.ReferralEvent())
	// Output:
	// acme_portal.integration_status
	// acme_portal.referral_id
	// object.acme_portal_referral_submit
}

// A Connection prints without its secrets.
func ExampleConnection_String() {
	c := deployment.Connection{BaseURL: "https://api.example.com", ClientID: "app", ClientSecret: "s3cret",
		Words: deployment.Words{EnvHeader: "x-acme-env"}}
	fmt.Printf("%v\n%#v\n", c, c)
	// Output:
	// {BaseURL:https://api.example.com ClientID:app ClientSecret:[redacted] SubscriptionKey: Words:{EnvHeader:x-acme-env PortalWord: SubscriptionKeyHeader:}}
	// deployment.Connection{BaseURL:https://api.example.com ClientID:app ClientSecret:[redacted] SubscriptionKey: Words:{EnvHeader:x-acme-env PortalWord: SubscriptionKeyHeader:}}
}

// A Connection encodes without its secrets too; a program that must
// write them (a configuration file) copies them from the fields.
func ExampleConnection_MarshalJSON() {
	c := deployment.Connection{BaseURL: "https://api.example.com", ClientID: "app", ClientSecret: "s3cret"}
	b, _ := json.Marshal(struct {
		Name string
		Conn deployment.Connection
	}{"crm", c})
	fmt.Println(string(b))
	fmt.Println(c.ClientSecret)
	// Output:
	// {"Name":"crm","Conn":{"BaseURL":"https://api.example.com","ClientID":"app","ClientSecret":"[redacted]","SubscriptionKey":"","Words":{"EnvHeader":"","PortalWord":"","SubscriptionKeyHeader":""}}}
	// s3cret
}
