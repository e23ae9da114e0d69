package deployment_test

import (
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
