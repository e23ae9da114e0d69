package main

import (
	"context"
	"fmt"
	"io"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/objects"
)

// objectsStep links a demo opportunity to its CRM record and writes the
// integration status onto it, in the audit field audit.
func objectsStep(ctx context.Context, c *partner.Client, w io.Writer, audit objects.FieldName) error {
	id := demo.Opportunity2
	link, err := c.Objects.ConnectExternalID(ctx, id, objects.ConnectExternalIDParams{ExternalID: "CRM-OPP-2002"})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "objects: connected %s to external id %s in %s\n", id, link.ExternalID, link.FieldName)
	ids, err := c.Objects.ExternalIDs(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "objects: %s has %d external id(s)\n", id, len(ids.Links))
	res, err := c.Objects.Audit(ctx, id, objects.AuditParams{
		FieldName:  audit,
		StatusCode: objects.StatusLinked,
		ExternalID: link.ExternalID,
		Message:    "linked to the CRM record",
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "objects: audit %s = %s\n", res.FieldName, res.StatusCode)
	return nil
}
