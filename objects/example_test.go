package objects_test

import (
	"context"
	"fmt"
	"log"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/objects"
)

func Example() {
	srv := fake.NewServer(fake.WithDemoData())
	defer srv.Close()
	c, err := partner.New(partner.WithBaseURL(srv.URL),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret))
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
