package deployment_test

import (
	"encoding/json"
	"errors"
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
	// {BaseURL:https://api.example.com ClientID:app ClientSecret:[redacted] SubscriptionKey: Words:{EnvHeader:x-acme-env PortalWord: SubscriptionKeyHeader:} Environment:}
	// deployment.Connection{BaseURL:https://api.example.com ClientID:app ClientSecret:[redacted] SubscriptionKey: Words:{EnvHeader:x-acme-env PortalWord: SubscriptionKeyHeader:} Environment:}
}

// A program reads its deployment from the PARTNER_* variables (here a map
// stands in for os.Getenv) and hands it to partner.WithConnection; with
// none of the three server variables set, it may run against a fake with
// the words the other variables give.
func ExampleFromEnv() {
	vars := map[string]string{
		"PARTNER_BASE_URL":      "https://api.example.com",
		"PARTNER_CLIENT_ID":     "app",
		"PARTNER_CLIENT_SECRET": "s3cret",
		"PARTNER_PORTAL_WORD":   "acme_portal",
	}
	conn, err := deployment.FromEnv(func(name string) string { return vars[name] })
	fmt.Println(conn.BaseURL, conn.Words.AuditField(), err)

	delete(vars, "PARTNER_CLIENT_SECRET")
	_, err = deployment.FromEnv(func(name string) string { return vars[name] })
	fmt.Println(err)

	_, err = deployment.FromEnv(func(name string) string { return "" })
	if errors.Is(err, deployment.ErrNotSet) {
		fmt.Println("no deployment named: run against a fake")
	}
	// Output:
	// https://api.example.com acme_portal.integration_status <nil>
	// PARTNER_CLIENT_SECRET is not set, but PARTNER_BASE_URL and PARTNER_CLIENT_ID are: set all of PARTNER_BASE_URL, PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET to reach a deployment, or none
	// no deployment named: run against a fake
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
	// {"Name":"crm","Conn":{"BaseURL":"https://api.example.com","ClientID":"app","ClientSecret":"[redacted]","SubscriptionKey":"","Words":{"EnvHeader":"","PortalWord":"","SubscriptionKeyHeader":""},"Environment":""}}
	// s3cret
}
