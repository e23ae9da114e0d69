package objects_test

import (
	"context"
	"fmt"
	"log"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/objects"
)

func Example() {
	srv := fake.NewServer(fake.WithDemoData())
	defer srv.Close()
	// The fake's connection: its URL, credentials and words. Its portal
	// word names the audit field Audit writes when FieldName is empty.
	c, err := partner.New(partner.WithConnection(srv.Connection()))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	link, err := c.Objects.ConnectExternalID(ctx, demo.Opportunity1, objects.ConnectExternalIDParams{ExternalID: "CRM-0042"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(link.FieldName, "=", link.ExternalID)

	res, err := c.Objects.Audit(ctx, demo.Opportunity1, objects.AuditParams{
		StatusCode: objects.StatusLinked,
		Message:    "linked to CRM-0042",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.FieldName, "=", res.StatusCode)
	// Output:
	// sales_details.crm_opportunity_id = CRM-0042
	// partner_portal.integration_status = LINKED
}

// A deployment's words: the client writes the deployment's audit field,
// and the fake, given the same words, accepts it.
func ExampleService_Audit_words() {
	words := deployment.Words{EnvHeader: "x-acme-env", PortalWord: "acme_portal"}
	srv := fake.NewServer(fake.WithDemoData(), fake.WithWords(words))
	defer srv.Close()
	c, err := partner.New(partner.WithConnection(srv.Connection()), partner.WithEnvironment("sandbox-eu"))
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.Objects.Audit(context.Background(), demo.Opportunity1, objects.AuditParams{
		FieldName:  objects.FieldName(words.AuditField()),
		StatusCode: objects.StatusScheduled,
		Message:    "queued",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.FieldName, "=", res.StatusCode)
	// Output:
	// acme_portal.integration_status = SCHEDULED
}

func ExampleService_Audit_validation() {
	c, err := partner.New(partner.WithBaseURL("https://api.example.com"), partner.WithClientCredentials("id", "secret"))
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.Objects.Audit(context.Background(), "o1", objects.AuditParams{StatusCode: "DONE", Message: "m"})
	fmt.Println(err)
	// Output:
	// partner: objects: audit status_code "DONE" is not one of SCHEDULED, CREATE_FAILED, UPDATE_FAILED, LINKED
}
